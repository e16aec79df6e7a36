//! The conveyor daemon as the app sees it: embedded in-process by default (its data in the
//! app's data folder), or remote by URL and token; one [`conveyor_api::Client`] either way.
//! The daemon's server-sent events are forwarded to the page as `conveyor-event`, and every
//! change of the connection as `conveyor-status`.

mod check;
mod connection;
mod embedded;
mod saved;
mod token;
mod types;

pub use check::{check, compatible};
pub use connection::{Conveyor, EVENT, RESYNC, STATUS};
pub use embedded::embedded_config;
pub use saved::{ConveyorPaths, Saved};
pub use token::Tokens;
pub use types::*;
