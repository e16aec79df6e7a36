//! The request and response bodies of the API.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// Derives shared by every wire type.
macro_rules! wire {
    ($(#[$m:meta])* $vis:vis struct $name:ident $body:tt) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
        #[cfg_attr(feature = "openapi", derive(ToSchema))]
        $vis struct $name $body
    };
    ($(#[$m:meta])* $vis:vis enum $name:ident $body:tt) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
        #[cfg_attr(feature = "openapi", derive(ToSchema))]
        #[serde(rename_all = "snake_case")]
        $vis enum $name $body
    };
}

/// A wire enum whose every variant has a snake_case name: `ALL`, `as_str`, `parse` and
/// `Display` from one list, so the names cannot drift from serde's (a test holds them to it).
macro_rules! named {
    ($(#[$m:meta])* pub enum $name:ident { $($(#[$vm:meta])* $variant:ident = $text:literal,)* }) => {
        wire! {
            $(#[$m])*
            pub enum $name { $($(#[$vm])* $variant,)* }
        }

        impl $name {
            /// Every value.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The snake_case name sent on the wire.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text,)* }
            }

            /// Parses the snake_case name.
            pub fn parse(s: &str) -> Option<$name> {
                $name::ALL.iter().copied().find(|v| v.as_str() == s)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

mod budget;
mod deploy;
mod events;
mod input;
mod outbox;
mod preflight;
mod review;

pub use budget::*;
pub use deploy::*;
pub use events::*;
pub use input::{TEXT_PATTERN, has_text, integral_i32, integral_i32_opt, integral_i64_opt};
pub use outbox::*;
pub use preflight::*;
pub use review::*;

wire! {
    /// `GET /api/health`.
    pub struct Health {
        pub status: String,
        pub version: String,
    }
}

wire! {
    /// Every error response: a stable `code` to branch on and a human message.
    pub struct ApiErrorBody {
        pub code: ErrorCode,
        pub message: String,
    }
}

named! {
    /// The stable code of an error response: what a client branches on (the message is for
    /// people). Each code comes with one HTTP status.
    pub enum ErrorCode {
        /// 401: no bearer token, or a wrong one.
        Unauthorized = "unauthorized",
        /// 404: no such project, line or question.
        NotFound = "not_found",
        /// 400: the request is malformed or a value is refused (an empty name, a bad filter).
        BadRequest = "bad_request",
        /// 409: the line is not in a state that allows this (accept before it awaits
        /// acceptance, remarks on a finished line, cancel of a cancelled line).
        InvalidState = "invalid_state",
        /// 409: accept refused, the line's branch holds commits main lacks.
        UnmergedCommits = "unmerged_commits",
        /// 409: something by that name exists already (a project).
        Exists = "exists",
        /// 422: `repo_path` is not an absolute path to a git repository with the main branch.
        NotARepository = "not_a_repository",
        /// 422: the line names a project that does not exist.
        UnknownProject = "unknown_project",
        /// 422: the answer's `option` is not one of the question's options.
        NotAnOption = "not_an_option",
        /// 409: the `answer` step carrying the answer has started: it can no longer be changed
        /// or taken back.
        AnswerStarted = "answer_started",
        /// 409: a line's level only goes up (light → medium → full); the asked level is lower
        /// than the one it has.
        LevelLower = "level_lower",
        /// 409: the Catcher is not configured (`[catcher]` in the daemon's config).
        CatcherOff = "catcher_off",
        /// 422: `planfix_task` is not a PlanFix task number.
        BadPlanfixTask = "bad_planfix_task",
        /// 409: the project has an open line (neither accepted nor cancelled) with that title.
        DuplicateTitle = "duplicate_title",
        /// 422: a line's id is listed twice in `PUT /api/lines/order`: it can have one place
        /// only.
        DuplicateLine = "duplicate_line",
        /// 422: `PUT /api/lines/order` lists an id no line has. (A 404 would say the order
        /// itself is missing; like `unknown_project`, it is the body that names nothing.)
        UnknownLine = "unknown_line",
        /// 500: the daemon failed; the details are in its log, never in the answer.
        Internal = "internal",
    }
}

wire! {
    /// A git repository on the server that lines work in.
    pub struct Project {
        pub id: String,
        pub name: String,
        pub repo_path: String,
        pub main_branch: String,
        pub created_at: String,
    }
}

wire! {
    /// `POST /api/projects`.
    pub struct NewProject {
        /// Unique among projects; at least one character past blanks.
        #[cfg_attr(feature = "openapi", schema(pattern = r"[^ \t\r\n]"))]
        pub name: String,
        /// The absolute path, on the daemon's machine, of a git repository that has
        /// `main_branch` (422 `not_a_repository` otherwise). Absolute as the daemon's system
        /// has it, which the document's pattern says: from `/` on Unix; from a drive
        /// (`C:\` or `C:/`) or a UNC share (`\\server\share`) on Windows.
        #[cfg_attr(
            all(feature = "openapi", not(windows)),
            schema(min_length = 1, pattern = r"^/")
        )]
        #[cfg_attr(
            all(feature = "openapi", windows),
            schema(min_length = 1, pattern = r"^([A-Za-z]:[\\/]|\\\\[^\\/]+[\\/][^\\/]+)")
        )]
        pub repo_path: String,
        /// The branch lines fork from and merge into; `main` when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        #[cfg_attr(feature = "openapi", schema(min_length = 1))]
        pub main_branch: Option<String>,
    }
}

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
    /// `POST /api/lines/{id}/level`: raise the line's level (never lower: 409 `level_lower`).
    pub struct SetLevel {
        pub level: Level,
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

wire! {
    /// `GET /api/lines/{id}/diff`: what the line's branch changes, against the main commit it
    /// forked from (so the diff stays the same after the line is merged).
    pub struct LineDiff {
        /// The fork point on main; none when the branch is gone (an accepted line).
        pub base: Option<String>,
        /// The branch's tip.
        pub head: Option<String>,
        pub files: Vec<FileDiff>,
    }
}

wire! {
    /// One file of a [`LineDiff`].
    pub struct FileDiff {
        /// The path after the change (before it, for a deleted file).
        pub path: String,
        pub change: FileChange,
        /// The unified hunks (`@@ … @@` headers and ` `, `+`, `-` lines); empty for binary files.
        pub patch: String,
        pub binary: bool,
    }
}

wire! {
    /// How a file of a [`LineDiff`] changed.
    pub enum FileChange {
        Added,
        /// Changed in place (a change of file type counts here too).
        Modified,
        /// Gone; the diff's `path` is the old one.
        Deleted,
        Renamed,
    }
}

impl FileChange {
    /// The snake_case name sent on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            FileChange::Added => "added",
            FileChange::Modified => "modified",
            FileChange::Deleted => "deleted",
            FileChange::Renamed => "renamed",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The codes are the strings the daemon sent before they were an enum, byte for byte.
    #[test]
    fn error_codes_are_the_strings_the_api_always_sent() {
        let sent = [
            (ErrorCode::Unauthorized, "unauthorized"),
            (ErrorCode::NotFound, "not_found"),
            (ErrorCode::BadRequest, "bad_request"),
            (ErrorCode::InvalidState, "invalid_state"),
            (ErrorCode::UnmergedCommits, "unmerged_commits"),
            (ErrorCode::Exists, "exists"),
            (ErrorCode::NotARepository, "not_a_repository"),
            (ErrorCode::UnknownProject, "unknown_project"),
            (ErrorCode::NotAnOption, "not_an_option"),
            (ErrorCode::AnswerStarted, "answer_started"),
            (ErrorCode::LevelLower, "level_lower"),
            (ErrorCode::CatcherOff, "catcher_off"),
            (ErrorCode::BadPlanfixTask, "bad_planfix_task"),
            (ErrorCode::DuplicateTitle, "duplicate_title"),
            (ErrorCode::DuplicateLine, "duplicate_line"),
            (ErrorCode::UnknownLine, "unknown_line"),
            (ErrorCode::Internal, "internal"),
        ];
        assert_eq!(sent.len(), ErrorCode::ALL.len());
        for (code, s) in sent {
            assert_eq!(serde_json::to_value(code).unwrap(), json!(s));
            assert_eq!(serde_json::from_value::<ErrorCode>(json!(s)).unwrap(), code);
            assert_eq!((code.as_str(), code.to_string()), (s, s.to_string()));
            assert_eq!(ErrorCode::parse(s), Some(code));
        }
        let body = ApiErrorBody {
            code: ErrorCode::UnmergedCommits,
            message: "m".into(),
        };
        let text = serde_json::to_string(&body).unwrap();
        assert_eq!(text, r#"{"code":"unmerged_commits","message":"m"}"#);
        assert_eq!(serde_json::from_str::<ApiErrorBody>(&text).unwrap(), body);
        assert!(serde_json::from_str::<ApiErrorBody>(r#"{"code":"nope","message":"m"}"#).is_err());
    }

    #[test]
    fn event_kinds_are_named_as_serde_names_them() {
        for kind in EventKind::ALL {
            assert_eq!(serde_json::to_value(kind).unwrap(), json!(kind.as_str()));
        }
    }

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

    #[test]
    fn file_changes_are_the_strings_the_api_always_sent() {
        for (change, s) in [
            (FileChange::Added, "added"),
            (FileChange::Modified, "modified"),
            (FileChange::Deleted, "deleted"),
            (FileChange::Renamed, "renamed"),
        ] {
            assert_eq!(serde_json::to_value(change).unwrap(), json!(s));
            assert_eq!(
                serde_json::from_value::<FileChange>(json!(s)).unwrap(),
                change
            );
            assert_eq!(change.as_str(), s);
        }
    }

    fn event(kind: EventKind, state: Option<EventState>) -> Event {
        Event {
            seq: 7,
            kind,
            line_id: Some("l1".into()),
            project_id: None,
            step_n: Some(2),
            state,
            detail: Some("d".into()),
            at: "2026-01-01T00:00:00Z".into(),
        }
    }

    /// An event's state is the bare name on the wire, and is read back by the event's kind
    /// (a line and a step are both `running`).
    #[test]
    fn event_states_are_bare_names_read_by_the_event_kind() {
        let e = event(EventKind::Step, Some(StepState::Running.into()));
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"seq":7,"kind":"step","line_id":"l1","project_id":null,"step_n":2,"state":"running","detail":"d","at":"2026-01-01T00:00:00Z"}"#
        );
        for e in [
            e,
            event(EventKind::Line, Some(LineState::Running.into())),
            event(EventKind::Line, Some(LineState::Cancelled.into())),
            event(EventKind::Step, Some(StepState::Cancelled.into())),
            event(EventKind::Line, Some(LineState::AwaitingAcceptance.into())),
            event(EventKind::Question, Some(QuestionStatus::Answered.into())),
            event(EventKind::Question, None),
            event(EventKind::Budget, None),
        ] {
            let text = serde_json::to_string(&e).unwrap();
            assert_eq!(serde_json::from_str::<Event>(&text).unwrap(), e, "{text}");
        }
        for state in LineState::ALL {
            let e = event(EventKind::Line, Some(state.into()));
            assert_eq!(
                serde_json::to_value(&e).unwrap()["state"],
                json!(state.as_str())
            );
        }
        // A state the kind does not have is a decoding error, not a guess.
        let mut v = serde_json::to_value(event(EventKind::Step, None)).unwrap();
        v["state"] = json!("awaiting_acceptance");
        assert!(serde_json::from_value::<Event>(v).is_err());
        // Absent optional fields read as null, as with the derived decoder.
        let e: Event = serde_json::from_value(json!({
            "seq": 1, "kind": "line", "state": "queued", "at": "t"
        }))
        .unwrap();
        assert_eq!(
            (e.state, e.line_id),
            (Some(EventState::Line(LineState::Queued)), None)
        );
    }
}
