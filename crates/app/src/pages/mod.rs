//! One module per route.

mod generate;
mod home;
mod not_found;
mod providers;
mod settings;

pub use crate::classroom::ClassroomPage;
pub use generate::GeneratePage;
pub use home::HomePage;
pub use not_found::NotFoundPage;
pub use settings::SettingsPage;
