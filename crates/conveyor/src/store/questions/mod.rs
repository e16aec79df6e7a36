//! `questions`: every journal fork and question, with where it stands (DESIGN.md, "The judge
//! and the morning list"), who put it there and why, and Anton's answer until the line's
//! `answer` step delivers it. The decisions catalogue is read here too: it is made of the
//! agents' `decided` entries and the questions decided by default.
//!
//! A file per part of a question's way: `row` reads it, `verdict` writes and judges it,
//! `answers` holds Anton's answer until the agent has it, `decisions` is the catalogue.

mod answers;
mod decisions;
mod row;
mod verdict;

pub use answers::{answer, answered_with, mark_delivered, take_back, undelivered_answers};
pub use decisions::decisions;
pub use row::{
    QuestionRow, count, count_of_line, count_since, duplicates_of, for_review, get, of_line,
    open_validated_of_project,
};
pub use verdict::{
    DaemonQuestion, Verdict, ask_as_daemon, insert, reworked, send_to_rework, set_verdict,
};
