//! The journal an agent writes, the questions it asks there, Anton's answers, and the morning
//! page that gathers them (`GET /api/review`).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

wire! {
    /// The kinds of journal entries an agent writes.
    pub enum JournalKind {
        Fork,
        Question,
        Decided,
        Uncovered,
    }
}

wire! {
    /// One line of a line's journal. A malformed line is kept: `valid` is false, `error` says
    /// why and `raw` holds the text as written.
    pub struct JournalEntry {
        #[ts(type = "number")]
        pub id: i64,
        pub line_id: String,
        pub step_id: Option<String>,
        pub kind: Option<JournalKind>,
        pub text: Option<String>,
        pub options: Vec<String>,
        pub default: Option<String>,
        pub why: Option<String>,
        pub reversible: Option<bool>,
        pub expensive: Option<bool>,
        pub valid: bool,
        pub error: Option<String>,
        pub raw: String,
        pub created_at: String,
    }
}

wire! {
    /// Where a question stands.
    pub enum QuestionStatus {
        /// Not yet looked at by the judge (which comes in its own issue).
        Unvalidated,
        Validated,
        Answered,
        Dismissed,
    }
}

impl QuestionStatus {
    /// The snake_case name used on the wire and in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            QuestionStatus::Unvalidated => "unvalidated",
            QuestionStatus::Validated => "validated",
            QuestionStatus::Answered => "answered",
            QuestionStatus::Dismissed => "dismissed",
        }
    }

    /// Parses the snake_case name.
    pub fn parse(s: &str) -> Option<QuestionStatus> {
        [
            QuestionStatus::Unvalidated,
            QuestionStatus::Validated,
            QuestionStatus::Answered,
            QuestionStatus::Dismissed,
        ]
        .into_iter()
        .find(|q| q.as_str() == s)
    }
}

wire! {
    /// A question an agent asked in its journal.
    pub struct Question {
        pub id: String,
        pub line_id: String,
        pub project_id: String,
        pub text: String,
        pub options: Vec<String>,
        pub default: Option<String>,
        pub why: Option<String>,
        pub reversible: Option<bool>,
        pub expensive: Option<bool>,
        pub status: QuestionStatus,
        pub answer: Option<String>,
        pub created_at: String,
    }
}

/// `POST /api/questions/{id}/answer`: one of the question's options, or free text; exactly one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(untagged)]
pub enum Answer {
    Option(AnswerOption),
    Text(AnswerText),
}

/// An answer that picks one of the question's options (422 `not_an_option` otherwise).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AnswerOption {
    #[cfg_attr(feature = "openapi", schema(min_length = 1))]
    pub option: String,
}

/// An answer in Anton's own words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AnswerText {
    #[cfg_attr(feature = "openapi", schema(pattern = r"[^ \t\r\n]"))]
    pub text: String,
}

wire! {
    /// `GET /api/review`: the morning page.
    pub struct Review {
        pub projects: Vec<ReviewProject>,
    }
}

wire! {
    /// One project's block on the morning page.
    pub struct ReviewProject {
        pub project_id: String,
        pub name: String,
        /// Validated questions with options (empty until the judge exists).
        pub questions: Vec<Question>,
        /// Questions nobody has validated yet.
        pub unvalidated: Vec<Question>,
        /// Questions Anton already answered, on lines not yet accepted or cancelled.
        pub answered: Vec<Question>,
        /// The collapsed "decided by default" list.
        pub decided: Vec<JournalEntry>,
    }
}
