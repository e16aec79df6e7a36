//! Wire types of the conveyor daemon's HTTP API, shared by the daemon, the desktop app and the
//! tests, and an async HTTP client over them.
//!
//! Field names are exactly those of DESIGN.md's API (snake_case). The TypeScript types for the
//! front end are generated from these structs with ts-rs into `bindings/conveyor.ts` (committed;
//! a test fails when the file is stale). Times are RFC 3339 strings in UTC.

#[cfg(feature = "client")]
mod client;
mod types;
mod typescript;

#[cfg(feature = "client")]
pub use client::{Client, ClientError, EventStream, LinesPage};
pub use types::*;
pub use typescript::typescript;
