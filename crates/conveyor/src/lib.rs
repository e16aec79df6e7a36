//! conveyor: a daemon that works through a queue of lines overnight. A line is one unit of
//! work in one project (a git repository); it runs step by step, each step one headless Claude
//! Code run (`claude -p … --output-format stream-json`) in the line's own git worktree, resumed
//! in the line's one session. Between steps the daemon ingests the journal, commits a
//! checkpoint and asks the budget whether the next step may start. Finished lines pass the
//! project's regression, merge into fresh main and wait for Anton's acceptance.
//!
//! The daemon is a library first: [`start`] returns a [`ServerHandle`]; `conveyord serve`
//! and the desktop app call it the same way. State lives in SQLite under the data folder, so a
//! restart (clean or `kill -9`) loses nothing.

pub mod api;
pub mod budget;
pub(crate) mod claude;
pub mod clock;
pub mod config;
mod daemon;
mod error;
pub(crate) mod events;
pub mod exec;
pub(crate) mod git;
pub mod guard;
pub(crate) mod hook;
pub(crate) mod journal;
pub mod judge;
pub mod line;
pub mod mcp;
#[cfg(not(unix))]
mod no_unix;
pub(crate) mod notify;
pub(crate) mod plan;
pub mod preflight;
pub(crate) mod prompt;
mod recovery;
pub mod roles;
pub mod sandbox;
mod scheduler;
mod state;
pub(crate) mod store;
pub mod telegram;
pub(crate) mod tell;
mod vault;

pub use config::Config;
pub use daemon::{ServerHandle, start};
pub use error::{Error, Result};
pub use state::Shared;
pub use store::Store;
