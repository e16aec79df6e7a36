//! The loop: send, read the answer, run its requests, send the results, until the answer
//! asks for nothing, the steps run out, or the model repeats itself.
//!
//! The loop is synchronous and pushes [`Event`]s to a callback as it goes, so the CLI prints
//! them to stderr, the app forwards them to its window, and tests collect them, all the same
//! way.
//!
//! `tool_loop` runs it; `report` holds what a run tells its caller: the events as they come,
//! the steps, and the outcome or the error at the end.

mod report;
#[cfg(test)]
mod tests;
mod tool_loop;

pub use report::{Event, Outcome, RunError, Step, StepRequest, StopReason};
pub use tool_loop::{Ask, Loop};
