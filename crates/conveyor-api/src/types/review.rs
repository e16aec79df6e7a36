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

named! {
    /// Where a journal fork or question stands (DESIGN.md, "The judge and the morning list"):
    /// `unvalidated` → `validated` | `duplicate` | `rework` | `decided` → `answered`.
    pub enum QuestionStatus {
        /// Not yet judged.
        Unvalidated = "unvalidated",
        /// The judge says it needs Anton: it is on the morning page.
        Validated = "validated",
        /// The same as an open validated question (`duplicate_of`).
        Duplicate = "duplicate",
        /// Sent back to the line's session (`rework` step); judged again after it.
        Rework = "rework",
        /// The default stands; listed, collapsed, with why.
        Decided = "decided",
        /// Anton answered; an `answer` step carries it to the line's session.
        Answered = "answered",
    }
}

named! {
    /// Which journal entry a question row comes from.
    pub enum QuestionKind {
        Fork = "fork",
        Question = "question",
    }
}

named! {
    /// Who took a decision, or decided where a question stands.
    pub enum DecisionSource {
        /// The agent, in its journal.
        Agent = "agent",
        /// The judge's run.
        Judge = "judge",
        /// The daemon's own rules (mechanical checks, the day rule, its own dead ends).
        Daemon = "daemon",
    }
}

wire! {
    /// A question an agent asked in its journal.
    pub struct Question {
        pub id: String,
        pub line_id: String,
        pub project_id: String,
        pub kind: QuestionKind,
        pub text: String,
        pub options: Vec<String>,
        pub default: Option<String>,
        pub why: Option<String>,
        pub reversible: Option<bool>,
        pub expensive: Option<bool>,
        pub status: QuestionStatus,
        /// Who set the status (none while unvalidated).
        pub decided_by: Option<DecisionSource>,
        /// Why it has its status: the judge's or the daemon's reason.
        pub verdict_why: Option<String>,
        /// The open validated question this one repeats.
        pub duplicate_of: Option<String>,
        /// Validated by day as irreversible and expensive: it cannot wait for the morning.
        pub urgent: bool,
        /// How many times it was sent back to the line's session.
        pub reworks: u32,
        pub answer: Option<String>,
        /// The answer can still be changed or taken back: its `answer` step has not started.
        pub changeable: bool,
        pub created_at: String,
        /// When the judge (or the daemon) validated it; what decides `questions` or `later`.
        pub validated_at: Option<String>,
        pub answered_at: Option<String>,
    }
}

wire! {
    /// A decision taken without Anton: an agent's `decided` entry, a fork or question the
    /// judge or the daemon decided by default. `GET /api/decisions` and `review.decided`.
    pub struct Decision {
        pub id: String,
        pub project_id: String,
        pub line_id: String,
        pub source: DecisionSource,
        pub text: String,
        pub why: Option<String>,
        /// The fork or question it decided, which Anton may still answer; none for an
        /// agent's own `decided` entry.
        pub question_id: Option<String>,
        /// The question's options and the default that stands (empty and none otherwise).
        pub options: Vec<String>,
        pub default: Option<String>,
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
    /// `GET /api/review`: the morning page. By day it is the list frozen when the night ended
    /// (`frozen_at`); what the judge validated after that is under each project's `later`.
    pub struct Review {
        /// The end of the last night, by day; none during the night (the list is live) or
        /// when no `night` is configured.
        pub frozen_at: Option<String>,
        /// Forks and questions not yet judged, over all projects.
        pub pending_judgement: u32,
        /// Forks and questions sent back to their line's session, over all projects.
        pub in_rework: u32,
        /// Last night at a glance.
        pub night: NightGlance,
        pub projects: Vec<ReviewProject>,
    }
}

wire! {
    /// Last night at a glance: where the lines stand now, what the night cost, and how much
    /// the judge kept from Anton.
    pub struct NightGlance {
        /// When the night began (the last one, or the one going on); 24 hours ago when no
        /// `night` is configured.
        pub since: String,
        /// Lines by where they stand now (`running`: every state the daemon moves on by itself).
        pub awaiting_acceptance: u32,
        pub running: u32,
        pub waiting_answer: u32,
        pub needs_human: u32,
        pub rolled_back: u32,
        /// Spent by the runs that ended since `since` (USD as the CLI reports it).
        pub cost_usd: f64,
        /// The rolling window's threshold the budget plans against; none without a window pool.
        pub window_threshold_usd: Option<f64>,
        /// Forks and questions written since `since` that the judge (or the daemon's rules) sent
        /// back to their session, or found to repeat an open question.
        pub sent_back: u32,
        pub duplicates: u32,
    }
}

wire! {
    /// One project's block on the morning page.
    pub struct ReviewProject {
        pub project_id: String,
        pub name: String,
        /// Validated questions, open, validated before the freeze.
        pub questions: Vec<Question>,
        /// Validated after the freeze (by day): they wait for tomorrow's list, except the
        /// `urgent` ones.
        pub later: Vec<Question>,
        /// Questions Anton answered, on lines not yet accepted or cancelled.
        pub answered: Vec<Question>,
        /// The collapsed "decided by default" list, each with its why.
        pub decided: Vec<Decision>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_answer_is_exactly_one_of_an_option_and_a_text() {
        let option: Answer = serde_json::from_value(json!({"option": "pg"})).unwrap();
        assert_eq!(
            option,
            Answer::Option(AnswerOption {
                option: "pg".into()
            })
        );
        let text: Answer = serde_json::from_value(json!({"text": "later"})).unwrap();
        assert_eq!(
            text,
            Answer::Text(AnswerText {
                text: "later".into()
            })
        );
        for refused in [
            json!({}),
            json!({"option": "a", "text": "b"}),
            json!({"option": 1}),
        ] {
            assert!(
                serde_json::from_value::<Answer>(refused.clone()).is_err(),
                "{refused}"
            );
        }
        assert_eq!(
            serde_json::to_value(&option).unwrap(),
            json!({"option": "pg"})
        );
    }
}
