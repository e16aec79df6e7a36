//! A project's own hooks at the three boundaries (`[hooks]` in `.conveyor.toml`, read from
//! fresh main): a command through `sh -c` in the line's worktree, as the agent's user when
//! there is one, with `{"boundary", "line_id", "project_id", "entry"?, "diff_stat"}` on stdin.
//! Exit 0 passes; anything else blocks, with its stdout as the reason. The built-in checks of
//! each boundary run before it, in the gate and the judge's rules.

use std::path::Path;

use tokio_util::sync::CancellationToken;

use crate::error::Result;
use crate::state::Shared;
use crate::store::LineRow;

use super::checks::{exit_text, run_command};

/// Where a hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Boundary {
    /// Before a question reaches Anton.
    Question,
    /// Before the line counts as done.
    Done,
    /// Before the merge and deploy.
    Deploy,
}

impl Boundary {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Boundary::Question => "before_question",
            Boundary::Done => "before_done",
            Boundary::Deploy => "before_deploy",
        }
    }
}

/// Runs the project's hook `cmd` at `boundary`; `Some(reason)` when it blocks.
///
/// # Errors
/// File errors writing its input; a command that cannot start blocks, saying why.
pub(crate) async fn run(
    sh: &Shared,
    line: &LineRow,
    (boundary, cmd): (Boundary, &str),
    entry: Option<serde_json::Value>,
    diff_stat: &str,
    worktree: &Path,
    cancel: &CancellationToken,
) -> Result<Option<String>> {
    let mut input = serde_json::json!({
        "boundary": boundary.as_str(),
        "line_id": line.id,
        "project_id": line.project_id,
        "diff_stat": diff_stat,
    });
    if let Some(e) = entry {
        input["entry"] = e;
    }
    let file = sh
        .line_dir(&line.id)
        .join(format!("hook-{}.json", boundary.as_str()));
    std::fs::write(&file, input.to_string()).map_err(|e| crate::error::Error::io(&file, e))?;
    // The input file is read through the shell's redirect, as the agent's user when there is
    // one: it is made readable for them.
    if let Some(u) = &sh.agent_user {
        crate::exec::chown_tree(&file, u.uid, u.gid)?;
    }
    // The command is shell source already (it runs through `sh -c`): a group gives all of
    // it the input on stdin.
    let wrapped = format!(
        "{{\n{cmd}\n}} < {}",
        crate::hook::quote(&file.to_string_lossy())
    );
    let out = run_command(sh, &line.id, &wrapped, worktree, cancel).await?;
    if out.code == Some(0) {
        return Ok(None);
    }
    let said = out.stdout.trim();
    Ok(Some(format!(
        "the project's {} hook (`{cmd}`) exited {}: {}",
        boundary.as_str(),
        exit_text(&out),
        if said.is_empty() {
            "(it printed nothing on stdout)".to_string()
        } else {
            crate::exec::tail(said, 1500)
        }
    )))
}
