//! The request and response bodies of the API, a file for each thing they are about; every
//! type is re-exported here, and from the crate's root.

// First, so that its macros (the derives every wire type shares) reach the files below.
#[macro_use]
mod wire;

mod api;
mod budget;
mod deploy;
mod diff;
mod events;
mod input;
mod line;
mod outbox;
mod preflight;
mod project;
mod review;
mod run;
mod step;

pub use api::*;
pub use budget::*;
pub use deploy::*;
pub use diff::*;
pub use events::*;
pub use input::{TEXT_PATTERN, has_text, integral_i32, integral_i32_opt, integral_i64_opt};
pub use line::*;
pub use outbox::*;
pub use preflight::*;
pub use project::*;
pub use review::*;
pub use run::*;
pub use step::*;
