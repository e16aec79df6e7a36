//! `GET /api/lines/{id}/runs` and `GET /api/runs/{id}/transcript`: a line's runs, and what one
//! run's agent said and did, read from its stream-json as it is written.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

use super::step::{StepKind, Tokens};

named! {
    /// How a run ended, or that it has not.
    pub enum RunOutcome {
        /// The process runs (or the daemon died while it did).
        Running = "running",
        /// The CLI ended without error; the daemon's own checks have not decided yet.
        Finished = "finished",
        /// Finished and its checks green.
        Ok = "ok",
        /// Finished but its checks stayed red.
        Red = "red",
        /// The CLI ended with an error.
        Failed = "failed",
        /// The account's usage limit cut it.
        UsageLimit = "usage_limit",
        /// Its own `--max-budget-usd` cap cut it.
        MaxBudget = "max_budget",
        /// `--session-id` refused: the session was already in use.
        SessionInUse = "session_in_use",
        /// `--resume` answered "No conversation found".
        NoConversation = "no_conversation",
        /// A dead end no retry gets past (not logged in, no binary).
        Fatal = "fatal",
        /// The daemon stopped or died while it ran or was checked.
        Interrupted = "interrupted",
        /// Its line was cancelled.
        Cancelled = "cancelled",
    }
}

wire! {
    /// One item of `GET /api/lines/{id}/runs`: one `claude -p` process of one of the line's
    /// steps, oldest first.
    pub struct Run {
        #[ts(type = "number")]
        pub id: i64,
        pub step_n: u32,
        /// The step's kind: a judge's and a checking role's runs are told apart by it.
        pub kind: StepKind,
        pub attempt: u32,
        /// The session the run is in (the line's, or the step's own); null before it is known.
        pub session_id: Option<String>,
        pub started_at: String,
        pub ended_at: Option<String>,
        /// Its own cost; 0 while it runs.
        pub cost_usd: f64,
        pub outcome: RunOutcome,
        /// The shell command that continues the run's session by hand on the daemon's machine
        /// (`cd <worktree> && claude --resume <session>`, as the agent's user and home when it
        /// has its own); null while the session or the worktree is not known.
        pub resume: Option<String>,
    }
}

named! {
    /// What a [`TranscriptEvent`] is.
    pub enum TranscriptKind {
        /// The assistant's text (Markdown).
        Text = "text",
        /// The assistant's thinking.
        Thinking = "thinking",
        /// A tool call: `tool` and `input`.
        ToolUse = "tool_use",
        /// A tool's answer: `tool` (of the call it answers), `output`, `is_error`.
        ToolResult = "tool_result",
        /// The run's end as the CLI reported it: `text` is its result.
        Result = "result",
        /// The run's end when the CLI reported an error (`is_error`): `text` is its result.
        Error = "error",
    }
}

wire! {
    /// One thing a run's agent said or did.
    pub struct TranscriptEvent {
        /// 1-based, in the order of the log; `after=<seq>` reads the events past it.
        #[ts(type = "number")]
        pub seq: u64,
        /// When the daemon read it (RFC 3339); the stream carries no times of its own.
        pub at: Option<String>,
        pub kind: TranscriptKind,
        /// Text, thinking, a result's text or an error's message.
        pub text: Option<String>,
        /// The tool of a call or of the call a result answers.
        pub tool: Option<String>,
        /// The id that pairs a call with its result.
        pub tool_use_id: Option<String>,
        /// A call's input, as the model gave it.
        #[ts(type = "unknown")]
        #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
        pub input: Option<serde_json::Value>,
        /// A result's text, cut to a bound with a mark when longer (see `output_bytes`).
        pub output: Option<String>,
        /// The full size of a result's text in bytes, when `output` was cut.
        #[ts(type = "number | null")]
        pub output_bytes: Option<u64>,
        pub is_error: bool,
    }
}

wire! {
    /// `GET /api/runs/{id}/transcript?after=<seq>`.
    pub struct Transcript {
        pub events: Vec<TranscriptEvent>,
        /// The run has ended and every event of its log is in this answer or an earlier one.
        pub done: bool,
        /// The tokens the run has used so far (each message's usage once, as the daemon meters
        /// a running step).
        pub tokens: Tokens,
        /// What the run has cost so far: the CLI's own figure once it has ended, the daemon's
        /// live meter while it runs.
        pub cost_usd: f64,
    }
}

wire! {
    /// `run_event` on `GET /api/events`: a run's log has events up to `seq`.
    pub struct RunEvent {
        #[ts(type = "number")]
        pub run_id: i64,
        #[ts(type = "number")]
        pub seq: u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_are_serde_names() {
        for o in RunOutcome::ALL {
            assert_eq!(serde_json::to_value(o).unwrap(), json!(o.as_str()));
        }
        for k in TranscriptKind::ALL {
            assert_eq!(serde_json::to_value(k).unwrap(), json!(k.as_str()));
        }
    }
}
