//! conveyor's decisions without its plumbing. The daemon (`crates/conveyor`) keeps the effects
//! — SQLite, the runner, git, HTTP, notifications, MCP — and asks this crate what to do:
//!
//! - [`budget`]: may this step start now, and how much is it likely to cost;
//!
//! Nothing here reads a clock, opens a database or starts a process: what a decision looks at
//! comes in as an argument ("now" too), so the daemon and the night simulator run the same
//! code and the tests run on a virtual clock.

pub mod budget;
