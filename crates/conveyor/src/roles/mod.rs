//! The checking roles' runs: their hooks, the project's own agents ([`agent`]), the prompts
//! ([`prompt`]) and whether a run did any real work ([`work`]). The rules (which roles a level
//! runs, what the diff forces, the verdict file) are `conveyor_core::roles`; a role's place in
//! a line's flow is `line::roles`.

pub mod agent;
pub mod prompt;
pub mod work;

pub use conveyor_core::roles::{
    CHECKERS, Role, Seen, chain, denials, first_match, forced_full, missing, rank, rework_task,
    title, verdict,
};

use std::path::Path;

use crate::hook::quote;
use crate::judge::JudgeHooks;

/// The tools a role's guard looks at (a `PreToolUse` matcher): it edits nothing but its
/// verdict. Bash stays free (a tester runs the tests); the worktree is reset after the run.
pub const GUARDED_TOOLS: &str = "Write|Edit|MultiEdit|NotebookEdit";

/// A role run's hook command lines: the Stop hook checks the verdict file, the guard lets
/// only the verdict be written.
pub fn hook_commands(bin: Option<&Path>, verdict: &Path, state: &Path, rounds: u32) -> JudgeHooks {
    let q = |p: &Path| quote(&p.to_string_lossy());
    crate::judge::verdict_hooks(
        bin,
        &format!(
            "role-verdict --file {} --state {} --rounds {rounds}",
            q(verdict),
            q(state)
        ),
        verdict,
    )
}

/// `conveyord hook role-verdict`: the Stop hook's answer (`None`: let the run end).
pub fn stop_hook(verdict: &Path, state: &Path, rounds: u32) -> Option<String> {
    let text = std::fs::read_to_string(verdict).ok();
    crate::hook::count_round(state, rounds, verdict::hook_answer(text.as_deref()))
}
