//! `GET /api/preflight`: what stops lines from running, seen before a night is lost; and the
//! codes of why a line waits or stopped.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

named! {
    /// Why a line waits or stopped, for a client to say in its own words (`Line.reason` keeps
    /// the daemon's text, for the details).
    pub enum ReasonCode {
        /// Anton cancelled it.
        Cancelled = "cancelled",
        /// A step failed on every attempt.
        StepFailed = "step_failed",
        /// The agent CLI stopped with an error retrying cannot cure (e.g. not logged in).
        AgentFatal = "agent_fatal",
        /// The line's session is held by another run.
        SessionInUse = "session_in_use",
        /// The CLI knows no conversation under the line's session after work was done in it.
        NoConversation = "no_conversation",
        /// The step could not be run in the line's session at all.
        SessionUnusable = "session_unusable",
        /// A step kept hitting its `--max-budget-usd` cap: cut it finer.
        BudgetCap = "budget_cap",
        /// Waits for the budget's pools to have room.
        Budget = "budget",
        /// Waits for the account's usage limit to reset.
        UsageLimit = "usage_limit",
        /// A step ran into a limit mid-way; it resumes from its checkpoint when there is room.
        BudgetMiss = "budget_miss",
        /// Waits while a preflight item blocks (not logged in, no agent, no repository…).
        Preflight = "preflight",
        /// The gate was red; a fixer step works on it.
        GateRed = "gate_red",
        /// The gate stayed red after every round.
        GateFailed = "gate_failed",
        /// The project's `.conveyor.toml` cannot be used.
        ProjectConfig = "project_config",
        /// The project's checkout has uncommitted changes: main cannot move under them.
        DirtyCheckout = "dirty_checkout",
        /// The line's worktree could not be made.
        Worktree = "worktree",
        /// Recovery after a restart could not restore the line's checkpoint.
        Recovery = "recovery",
        /// Its steps are done; forks or questions of it are still being judged.
        PendingJudgement = "pending_judgement",
        /// Its steps are done; it waits for Anton's answer to a validated question.
        WaitingAnswer = "waiting_answer",
        /// A checking role (tester, reviewer, skeptic) asked for rework; a fixer step works on it.
        RoleRework = "role_rework",
        /// The diff touches the project's `ui_paths` and it has no `ui_scenarios` to click
        /// through: no fixer can cure that, the project's `.conveyor.toml` must say how.
        NoUiScenarios = "no_ui_scenarios",
        /// Before deploy: the diff touches no test and the journal says nowhere how the change
        /// was checked by hand; a fixer step is asked for one.
        NoTestEvidence = "no_test_evidence",
        /// The deploy's health check stayed red, and the rollback ran; an `investigate` step
        /// works on it.
        RolledBack = "rolled_back",
        /// The deploy stayed red and there is no rollback, or the rollback failed too.
        DeployRed = "deploy_red",
        /// A check failed the way the project's `external_errors` say an external service is
        /// down: the line waits and tries again, never fails.
        ExternalDown = "external_down",
        /// A hook of the project's (`[hooks]` in `.conveyor.toml`) blocked, with its output.
        HookBlocked = "hook_blocked",
        /// Anton's vault is closed (its `check` failed): the line waits, checked again every
        /// minute, and goes on by itself when it opens.
        VaultClosed = "vault_closed",
        /// The daemon failed on this line (its log has the details).
        Internal = "internal",
    }
}

named! {
    /// How much a preflight item matters.
    pub enum PreflightLevel {
        Ok = "ok",
        /// Works, but something is worth fixing.
        Warning = "warning",
        /// Lines (all of them, or the item's project's) cannot go on until it is fixed.
        Blocking = "blocking",
    }
}

named! {
    /// What a preflight item is about.
    pub enum PreflightScope {
        /// The daemon and every line.
        Daemon = "daemon",
        /// One project (`project_id`) and its lines.
        Project = "project",
    }
}

named! {
    /// The stable name of a preflight check.
    pub enum PreflightCode {
        /// The agent CLI is found and answers `--version`.
        AgentBinary = "agent_binary",
        /// The agent CLI is logged in (`claude auth status`), and by which method.
        AgentLogin = "agent_login",
        /// Agents as root: the CLI refuses to bypass permissions as root unless told it is a
        /// sandbox or run as another user.
        RootGuard = "root_guard",
        /// `conveyord` is found to run a judge's hooks (its verdict checked within its run, its
        /// writes kept to the verdict).
        JudgeHooks = "judge_hooks",
        /// `git` is found.
        Git = "git",
        /// Who checkpoint and merge commits are made as.
        GitIdentity = "git_identity",
        /// Agent runs can go inside bubblewrap (`[sandbox] mode = "required"`: `bwrap` is
        /// found and a probe with every namespace unshared works as the agents' user); or
        /// the sandbox is off, which is a warning.
        Sandbox = "sandbox",
        /// The data folder exists and is writable.
        DataDir = "data_dir",
        /// Free space in the data folder's file system.
        DiskSpace = "disk_space",
        /// The project's repository is there and is a git repository.
        Repository = "repository",
        /// The project's main branch exists.
        MainBranch = "main_branch",
        /// The project's checkout has no uncommitted changes (a dirty one blocks only its
        /// project's merges).
        CleanCheckout = "clean_checkout",
        /// One of the project's own `preflight` commands from its `.conveyor.toml`.
        ProjectCommand = "project_command",
        /// Whether the project says where its tests live (`tests_paths`): without it the
        /// before-deploy check (a test changed, or an `uncovered` entry) is off.
        TestsPaths = "tests_paths",
        /// The Catcher (Telegram) is configured and its bot answers `getMe`.
        Catcher = "catcher",
        /// PlanFix is configured and its token file is readable.
        Planfix = "planfix",
        /// Anton's vault is open (its `check` passes); closed, steps that need memory wait.
        Vault = "vault",
        /// What a project's Telegram scenarios need: `[telegram]`, the test account's session
        /// (`conveyord telegram-login`), kurigram, Chromium and playwright-core.
        Telegram = "telegram",
    }
}

wire! {
    /// One preflight check's outcome.
    pub struct PreflightItem {
        pub code: PreflightCode,
        pub level: PreflightLevel,
        pub scope: PreflightScope,
        /// The project, for `scope: project`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        pub project_id: Option<String>,
        /// What was found, in the daemon's words.
        pub message: String,
        /// What to do about it; `null` when nothing is to be done.
        pub fix: Option<String>,
    }
}

wire! {
    /// `GET /api/preflight`.
    pub struct Preflight {
        /// Whether any item blocks (see each item's scope for what it blocks).
        pub blocking: bool,
        /// When the checks ran (they run at start, every minute, and on this request).
        pub checked_at: String,
        pub items: Vec<PreflightItem>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_serdes() {
        fn check<T: Serialize + Copy>(all: &[T], name: fn(T) -> &'static str) {
            for v in all {
                assert_eq!(
                    serde_json::to_value(v).unwrap(),
                    serde_json::json!(name(*v))
                );
            }
        }
        check(ReasonCode::ALL, ReasonCode::as_str);
        check(PreflightLevel::ALL, PreflightLevel::as_str);
        check(PreflightScope::ALL, PreflightScope::as_str);
        check(PreflightCode::ALL, PreflightCode::as_str);
        assert_eq!(ReasonCode::parse("budget_cap"), Some(ReasonCode::BudgetCap));
        assert_eq!(ReasonCode::parse("nope"), None);
    }
}
