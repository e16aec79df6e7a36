//! A line, one unit of work in one project: its state and level, what it is and holds, and
//! the bodies that create, reorder and change it.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

use super::deploy::{Denial, Deploy, Refusal};
use super::input;
use super::preflight::ReasonCode;
use super::review::{JournalEntry, Question};
use super::step::{Step, Tokens};

wire! {
    /// Where a line is in its life (DESIGN.md, "Line states").
    pub enum LineState {
        Queued,
        Planning,
        Running,
        WaitingBudget,
        WaitingAnswer,
        Gate,
        Fixing,
        Merging,
        Deploying,
        AwaitingAcceptance,
        Accepted,
        NeedsHuman,
        RolledBack,
        Blocked,
        Cancelled,
    }
}

impl LineState {
    /// Every state, for parsing and filters.
    pub const ALL: [LineState; 15] = [
        LineState::Queued,
        LineState::Planning,
        LineState::Running,
        LineState::WaitingBudget,
        LineState::WaitingAnswer,
        LineState::Gate,
        LineState::Fixing,
        LineState::Merging,
        LineState::Deploying,
        LineState::AwaitingAcceptance,
        LineState::Accepted,
        LineState::NeedsHuman,
        LineState::RolledBack,
        LineState::Blocked,
        LineState::Cancelled,
    ];

    /// The snake_case name used on the wire and in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            LineState::Queued => "queued",
            LineState::Planning => "planning",
            LineState::Running => "running",
            LineState::WaitingBudget => "waiting_budget",
            LineState::WaitingAnswer => "waiting_answer",
            LineState::Gate => "gate",
            LineState::Fixing => "fixing",
            LineState::Merging => "merging",
            LineState::Deploying => "deploying",
            LineState::AwaitingAcceptance => "awaiting_acceptance",
            LineState::Accepted => "accepted",
            LineState::NeedsHuman => "needs_human",
            LineState::RolledBack => "rolled_back",
            LineState::Blocked => "blocked",
            LineState::Cancelled => "cancelled",
        }
    }

    /// Parses the snake_case name.
    pub fn parse(s: &str) -> Option<LineState> {
        LineState::ALL.into_iter().find(|st| st.as_str() == s)
    }
}

wire! {
    /// How strict the line's chain of roles is.
    pub enum Level {
        Light,
        Medium,
        Full,
    }
}

impl Level {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Light => "light",
            Level::Medium => "medium",
            Level::Full => "full",
        }
    }

    /// Parses the snake_case name.
    pub fn parse(s: &str) -> Option<Level> {
        match s {
            "light" => Some(Level::Light),
            "medium" => Some(Level::Medium),
            "full" => Some(Level::Full),
            _ => None,
        }
    }
}

wire! {
    /// A line: one unit of work in one project.
    pub struct Line {
        pub id: String,
        pub project_id: String,
        pub title: String,
        pub task: String,
        pub priority: i32,
        pub state: LineState,
        pub level: Option<Level>,
        /// Why the level is what it is: the planner's reason, or the last raise's (a path the
        /// diff touches, the judge, Anton).
        pub level_why: Option<String>,
        /// Failed checking rounds in a row (roles or gate); at 3 the line needs Anton.
        pub rounds: u32,
        pub session_id: String,
        pub branch: String,
        /// Why the line stopped or waits, in the daemon's words.
        pub reason: Option<String>,
        /// Why the line stopped or waits, as a code a client words itself; `null` with no
        /// reason, or for a reason given before codes existed.
        pub reason_code: Option<ReasonCode>,
        pub park_until: Option<String>,
        pub steps: Vec<Step>,
        /// What the never-autonomous guard stopped the line's agents (and their subagents)
        /// from doing, oldest first.
        pub denials: Vec<Denial>,
        /// What the sandbox refused the line's agents (writes, hosts, refs), oldest first.
        pub refusals: Vec<Refusal>,
        /// The line's deploys after its merges, oldest first.
        pub deploys: Vec<Deploy>,
        /// The PlanFix task the line reports to when done (its number), if any.
        pub planfix_task: Option<String>,
        /// Sum of the steps' costs (USD as the CLI reports it: a proxy, not a bill).
        pub cost_usd: f64,
        pub created_at: String,
        pub updated_at: String,
    }
}

wire! {
    /// `GET /api/lines/{id}`: the line with its journal and budget use.
    pub struct LineDetail {
        #[serde(flatten)]
        pub line: Line,
        pub journal: Vec<JournalEntry>,
        /// Every fork and question of the line, oldest first, with where it stands.
        pub questions: Vec<Question>,
        pub budget: LineBudget,
    }
}

wire! {
    /// What one line has used so far.
    pub struct LineBudget {
        pub cost_usd: f64,
        pub runs: u32,
        pub tokens: Tokens,
    }
}

wire! {
    /// `POST /api/lines`.
    pub struct NewLine {
        /// An existing project's id (422 `unknown_project` otherwise).
        pub project_id: String,
        #[cfg_attr(feature = "openapi", schema(pattern = r"[^ \t\r\n]"))]
        pub title: String,
        #[cfg_attr(feature = "openapi", schema(pattern = r"[^ \t\r\n]"))]
        pub task: String,
        /// Higher runs first; 0 when absent.
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "input::integral_i32_opt"
        )]
        #[ts(optional)]
        #[cfg_attr(feature = "openapi", schema(minimum = -2147483648, maximum = 2147483647))]
        pub priority: Option<i32>,
        /// The PlanFix task (its number) to post the line's report to when it is done.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        #[cfg_attr(feature = "openapi", schema(pattern = r"^#?[0-9]{1,18}$"))]
        pub planfix_task: Option<String>,
    }
}

wire! {
    /// `PATCH /api/lines/{id}`.
    pub struct LinePatch {
        /// Higher runs first.
        #[serde(deserialize_with = "input::integral_i32")]
        #[cfg_attr(feature = "openapi", schema(minimum = -2147483648, maximum = 2147483647))]
        pub priority: i32,
    }
}

/// The most lines one `PUT /api/lines/order` reorders.
pub const ORDER_MAX_LINES: usize = 1000;

wire! {
    /// `PUT /api/lines/order`: queued lines in the order they are to start, first first.
    ///
    /// The listed lines are given priorities under which the daemon's order (priority, then
    /// age, then id) lists them exactly so, changing as few of their priorities as it can; the
    /// lines not listed keep theirs. List a whole group (every queued line, as pult does, or
    /// every queued line of a project) to decide its whole order.
    pub struct LineOrder {
        /// Ids of queued lines, each once (422 `duplicate_line` otherwise); an id no line has
        /// is 422 `unknown_line`, a line that is not queued 409 `invalid_state`.
        // The document's `uniqueItems` is added where it is served (conveyor's
        // `api/openapi.rs`): utoipa 5 has no field attribute for it.
        #[cfg_attr(feature = "openapi", schema(min_items = 1, max_items = 1000))]
        pub line_ids: Vec<String>,
    }
}

wire! {
    /// `POST /api/lines/{id}/remarks`.
    pub struct Remarks {
        #[cfg_attr(feature = "openapi", schema(pattern = r"[^ \t\r\n]"))]
        pub text: String,
    }
}

wire! {
    /// `POST /api/lines/{id}/level`: raise the line's level (never lower: 409 `level_lower`).
    pub struct SetLevel {
        pub level: Level,
    }
}
