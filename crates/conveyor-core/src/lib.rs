//! conveyor's decisions without its plumbing. The daemon (`crates/conveyor`) keeps the effects
//! — SQLite, the runner, git, HTTP, notifications, MCP — and asks this crate what to do:
//!
//! - [`budget`]: may this step start now, and how much is it likely to cost;
//! - [`plan`]: what a planner's plan must be; [`roles`]: which checks a level runs and what
//!   level a diff deserves;
//! - [`judge`]: what the daemon's rules decide about a journal entry before any judge run, and
//!   what a judge's verdict may say;
//! - [`guard`]: what a shell command or a write does, and whether an agent may do it alone;
//! - [`line`]: what a line needs next;
//! - [`night`]: the hours in which nothing is sent to Anton; [`text`]: text as compared for
//!   duplicates; [`transcript`]: a run's conversation as served, read from its stream-json;
//! - [`sandbox`]: where an agent's run may connect, and how the daemon's proxy reads the
//!   requests it is asked to pass;
//! - [`telegram`]: a project's Telegram scenarios, as read from its files and judged step by
//!   step.
//!
//! Nothing here reads a clock, opens a database or starts a process: what a decision looks at
//! comes in as an argument ("now" too), so the daemon and the night simulator run the same
//! code and the tests run on a virtual clock.

pub mod budget;
pub mod guard;
pub mod judge;
pub mod line;
pub mod night;
pub mod plan;
pub mod roles;
pub mod sandbox;
pub mod telegram;
pub mod text;
pub mod transcript;
