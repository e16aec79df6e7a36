//! The judge in a line's flow (DESIGN.md, "The judge and the morning list"): the daemon's own
//! rules first ([`sort`]: by day, duplicates, "read the memory first"), then a step of kind
//! `judge` for what is left ([`run_judge`]): a run in a fresh session of its own, in the line's
//! worktree, with read-only tools, that writes `$CONVEYOR_VERDICT`. A verdict is applied in
//! one transaction with the step's end, so a kill at any moment leaves every entry either
//! unjudged (judged again by the next run) or judged once.

mod memory;
mod run;
mod sort;
mod verdict;

pub(crate) use run::run_judge;
pub(crate) use sort::sort;
