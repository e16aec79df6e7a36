//! The never-autonomous guard's context for a run of the line: what it needs to know of the
//! project, written to the line's folder for the hook to read.

use std::path::PathBuf;

use crate::error::Result;
use crate::exec;
use crate::git;
use crate::state::Shared;
use crate::store::{self, LineRow};

use super::checklist::checklist;

/// The never-autonomous guard's hook command for a run of the line, its context written to
/// the line's folder; `None` without a `conveyord` to run it (the preflight's `judge_hooks`
/// item says so).
///
/// # Errors
/// File errors writing the context.
pub(super) async fn guard_hook(sh: &Shared, line: &LineRow) -> Result<Option<String>> {
    let Some(bin) = crate::judge::hook_bin(&sh.cfg) else {
        return Ok(None);
    };
    let cx = guard_context(sh, line).await;
    let dir = sh.line_dir(&line.id);
    std::fs::create_dir_all(&dir).map_err(|e| crate::error::Error::io(&dir, e))?;
    let path = context_file(sh, &line.id);
    let text = serde_json::to_string(&cx).unwrap_or_default();
    std::fs::write(&path, text).map_err(|e| crate::error::Error::io(&path, e))?;
    // The CLI runs its hooks as the agent's user.
    if let Some(u) = &sh.agent_user {
        exec::chown_tree(&path, u.uid, u.gid)?;
    }
    Ok(Some(crate::guard::hook_command(&bin, &path)))
}

/// The guard's context file of a line's runs.
pub(super) fn context_file(sh: &Shared, line_id: &str) -> PathBuf {
    sh.line_dir(line_id).join("guard.json")
}

/// The project's own remotes (names and URLs), `[never] patterns` and `[production]` from
/// fresh main, and the line's PlanFix task (the one task its agents may write to). What cannot be read is left
/// out, so the guard errs on the side of denying.
async fn guard_context(sh: &Shared, line: &LineRow) -> crate::guard::Context {
    let mut cx = crate::guard::Context {
        planfix_task: line.planfix_task.clone(),
        ..crate::guard::Context::default()
    };
    let Ok(mut c) = sh.store.conn().await else {
        return cx;
    };
    let Ok(Some(project)) = store::projects::get(&mut c, &line.project_id).await else {
        return cx;
    };
    drop(c);
    let repo = PathBuf::from(&project.repo_path);
    match git::git(&repo, &["remote", "-v"], &sh.shutdown).await {
        Ok(out) => {
            for l in out.lines() {
                let mut w = l.split_whitespace();
                for part in [w.next(), w.next()].into_iter().flatten() {
                    if !cx.remotes.iter().any(|r| r == part) {
                        cx.remotes.push(part.to_string());
                    }
                }
            }
        }
        Err(e) => {
            tracing::warn!(line = %line.id, error = %e, "the guard cannot read the project's remotes: every named push is denied")
        }
    }
    match checklist(sh, line).await {
        Ok(Ok((list, ..))) => {
            cx.patterns = list.never.patterns;
            cx.production = list.production;
        }
        Ok(Err(e)) => {
            tracing::warn!(line = %line.id, error = %e, "the guard cannot read [never] patterns or [production]")
        }
        Err(e) => {
            tracing::warn!(line = %line.id, error = %e, "the guard cannot read [never] patterns or [production]")
        }
    }
    cx
}
