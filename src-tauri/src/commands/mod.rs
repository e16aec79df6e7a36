//! The commands the front end invokes: a few lines each over the crates.

pub mod conveyor;
pub mod folder;
pub mod run;
pub mod settings;
