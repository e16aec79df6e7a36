//! A step of a line: one `claude -p` run in a role, where it stands, what it cost, and a
//! checking role's verdict.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

named! {
    /// The role a step plays. The judge runs apart from the line's session, in a fresh
    /// session of its own per run.
    pub enum StepKind {
        Planner = "planner",
        Executor = "executor",
        Tester = "tester",
        Reviewer = "reviewer",
        Skeptic = "skeptic",
        /// A project's own extra checking role (`[roles] extra`).
        Extra = "extra",
        Fixer = "fixer",
        /// Sent back by the judge: redo a question (read the memory first, …) in the line's
        /// session.
        Rework = "rework",
        /// Carries Anton's answers to the line's session.
        Answer = "answer",
        /// Anton's remarks after review.
        Remarks = "remarks",
        /// Looks into a red health check after a rollback.
        Investigate = "investigate",
        /// Judges the journal's new forks and questions: which reach Anton.
        Judge = "judge",
    }
}

named! {
    /// The planner's guess of how large a plan's step is (`"size"` in the plan). The budget
    /// estimates a sized step from the finished runs of its kind and size, once there are
    /// enough of them: sizes split a kind's wide spread of costs before a step runs.
    pub enum StepSize {
        /// A line or two in one file.
        Xs = "xs",
        /// A small change in one file.
        S = "s",
        /// A change across a few files.
        M = "m",
        /// A feature: many files, new tests.
        L = "l",
        /// A large change: a module, a migration, a wide refactor.
        Xl = "xl",
    }
}

wire! {
    /// Where a step is.
    pub enum StepState {
        Pending,
        Running,
        Done,
        Failed,
        /// The daemon died or stopped while it ran; it is resumed in its session.
        Interrupted,
        Cancelled,
    }
}

impl StepState {
    /// Every state.
    pub const ALL: [StepState; 6] = [
        StepState::Pending,
        StepState::Running,
        StepState::Done,
        StepState::Failed,
        StepState::Interrupted,
        StepState::Cancelled,
    ];

    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            StepState::Pending => "pending",
            StepState::Running => "running",
            StepState::Done => "done",
            StepState::Failed => "failed",
            StepState::Interrupted => "interrupted",
            StepState::Cancelled => "cancelled",
        }
    }

    /// Parses the snake_case name.
    pub fn parse(s: &str) -> Option<StepState> {
        StepState::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

wire! {
    /// One `claude -p` run (or several attempts of it) of a line.
    pub struct Step {
        pub id: String,
        pub n: u32,
        pub kind: StepKind,
        pub title: String,
        pub state: StepState,
        /// The planner's guess of its size (executor steps of a plan that gave one).
        pub size: Option<StepSize>,
        pub attempts: u32,
        /// The session the step runs in when it is not the line's (a judge's or a checking
        /// role's own session).
        pub session_id: Option<String>,
        /// The project's own agent the step ran as (`claude -p --agent <name>`, defined in
        /// `.claude/agents/<name>.md` on fresh main); null for a built-in prompt.
        pub agent: Option<String>,
        /// A checking role's verdict (tester, reviewer, skeptic, extra); null before it gave one
        /// and for the other kinds.
        pub verdict: Option<RoleVerdict>,
        /// Summed over attempts.
        pub cost_usd: f64,
        pub tokens: Tokens,
        pub error: Option<String>,
        /// Wall time of the step's runs, summed over attempts (a running attempt counts up to
        /// now); none before the first run.
        #[ts(type = "number | null")]
        pub duration_ms: Option<u64>,
    }
}

named! {
    /// What a checking role concluded.
    pub enum RoleCall {
        /// Nothing to send back.
        Pass = "pass",
        /// Back to the line's session: a fixer step carries the findings.
        Rework = "rework",
    }
}

wire! {
    /// A checking role's verdict file (`$CONVEYOR_VERDICT`), as the daemon read it.
    pub struct RoleVerdict {
        pub verdict: RoleCall,
        pub findings: Vec<Finding>,
    }
}

wire! {
    /// One thing a checking role found.
    pub struct Finding {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        pub path: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        pub line: Option<u32>,
        pub text: String,
    }
}

wire! {
    /// Token counts of the steps' own runs.
    #[derive(Default)]
    pub struct Tokens {
        #[ts(type = "number")]
        pub input: u64,
        #[ts(type = "number")]
        pub output: u64,
        #[ts(type = "number")]
        pub cache_read: u64,
        #[ts(type = "number")]
        pub cache_write: u64,
    }
}
