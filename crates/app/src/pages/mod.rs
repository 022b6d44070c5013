//! One module per route.

mod generate;
mod home;
mod library;
mod not_found;
mod providers;
mod settings;

pub use crate::classroom::ClassroomPage;
pub use generate::generate_view;
pub use home::HomePage;
pub use not_found::NotFoundPage;
pub use settings::settings_view;
