//! One module per route.

mod home;
mod not_found;
mod providers;
mod settings;

pub use crate::classroom::ClassroomPage;
pub use home::HomePage;
pub use not_found::NotFoundPage;
pub use settings::SettingsPage;
