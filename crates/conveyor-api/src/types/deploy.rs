//! What a line did after its merge and what its agents were stopped from doing: its deploys
//! with their health checks, the never-autonomous guard's denials and the sandbox's refusals.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

named! {
    /// How a deploy ended.
    pub enum DeployOutcome {
        /// It runs now (or ran when the daemon died: the health check decides on restart).
        Running = "running",
        /// Deployed and healthy.
        Green = "green",
        /// The deploy or its health check was red, and `rollback` ran.
        RolledBack = "rolled_back",
        /// Red with no `rollback` to run, or the rollback itself failed: Anton is asked.
        Red = "red",
    }
}

wire! {
    /// One deploy of a line's merge: the project's `deploy` command from a scratch worktree of
    /// the new main, then its health check.
    pub struct Deploy {
        pub commit: String,
        /// The last green deploy's commit (the merge's parent when none was green before).
        pub previous_commit: String,
        pub started_at: String,
        pub finished_at: Option<String>,
        pub outcome: DeployOutcome,
        /// The end of what `deploy` (and `rollback`, when it ran) printed.
        pub output_tail: String,
        pub health: Vec<HealthCheck>,
    }
}

wire! {
    /// One try of the project's `health_check`.
    pub struct HealthCheck {
        pub at: String,
        pub ok: bool,
        pub output_tail: String,
    }
}

wire! {
    /// A tool call the CLI denied an agent of the line (the never-autonomous guard's, or a
    /// permission mode's): nothing of it ran.
    pub struct Denial {
        pub step_n: u32,
        pub tool_name: String,
        /// The call's input as the CLI reported it (a Bash `command`, a `file_path`, …).
        #[ts(type = "unknown")]
        #[cfg_attr(feature = "openapi", schema(value_type = Object))]
        pub input: serde_json::Value,
        pub at: String,
    }
}

named! {
    /// What the sandbox around an agent run refused.
    pub enum RefusalKind {
        /// A write outside what the run may write (the file system is read-only there).
        Write = "write",
        /// A connection to a host that is neither the API nor on the project's `allow_hosts`.
        Host = "host",
        /// A ref other than the line's own branch, moved, created or deleted by the run: put
        /// back after it.
        Ref = "ref",
    }
}

wire! {
    /// Something an agent run tried that its sandbox refused (DESIGN.md, "Containment"): the
    /// attempt had no effect outside the run.
    pub struct Refusal {
        pub step_n: u32,
        pub kind: RefusalKind,
        /// What was tried: the path, `host:port`, or `refs/heads/x: <old> -> <new>`.
        pub what: String,
        pub at: String,
    }
}
