//! The line's folder (its journal, plan, hook scripts and state, beside its worktree) and who
//! may write it.

use std::path::{Path, PathBuf};

use conveyor_api::EventKind;

use crate::events::EventBody;
use crate::exec;
use crate::state::Shared;
use crate::{error::Result, journal};

/// Makes sure the agents' part of the line's folder exists, and with `root_mode = { user = … }`
/// gives the line's folder (plan, journal, hook scripts and
/// state), its worktree and the worktree's git folder (index, HEAD) to the agent's user. Run
/// before every agent run: the daemon's own resets, checks and hooks write files as root.
pub(super) fn give_to_agent(sh: &Shared, line_id: &str, worktree: &Path) -> Result<()> {
    // A line from before the agents' folder existed has none yet.
    let agent = sh.agent_dir(line_id);
    std::fs::create_dir_all(&agent).map_err(|e| crate::error::Error::io(&agent, e))?;
    let Some(u) = &sh.agent_user else {
        return Ok(());
    };
    exec::chown_tree(&sh.line_dir(line_id), u.uid, u.gid)?;
    exec::chown_worktree(worktree, u.uid, u.gid)
}

pub(super) fn journal_path(sh: &Shared, line_id: &str) -> PathBuf {
    sh.agent_dir(line_id).join("journal.jsonl")
}

pub(super) fn plan_path(sh: &Shared, line_id: &str) -> PathBuf {
    sh.agent_dir(line_id).join("plan.json")
}

/// Ingests the line's journal and tells the subscribers about new entries.
///
/// # Errors
/// Database or file errors.
pub async fn ingest_journal(sh: &Shared, line_id: &str, step_id: Option<&str>) -> Result<()> {
    let got = journal::ingest(
        &sh.store,
        line_id,
        step_id,
        &journal_path(sh, line_id),
        true,
    )
    .await?;
    if got.entries > 0 {
        sh.events.emit(
            EventKind::Journal,
            EventBody {
                line_id: Some(line_id.into()),
                detail: Some(format!(
                    "{} entries ({} malformed, {} questions)",
                    got.entries, got.malformed, got.questions
                )),
                ..EventBody::default()
            },
        );
        if got.questions > 0 {
            sh.events.emit(
                EventKind::Question,
                EventBody {
                    line_id: Some(line_id.into()),
                    state: Some(conveyor_api::QuestionStatus::Unvalidated.into()),
                    detail: Some(format!("{} new questions", got.questions)),
                    ..EventBody::default()
                },
            );
        }
    }
    Ok(())
}
