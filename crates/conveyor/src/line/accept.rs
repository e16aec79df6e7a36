//! Anton accepts a line: from pult, or by a press on the Catcher's "Accept". One path for
//! both, so a press can do nothing the app would refuse.

use std::path::PathBuf;

use conveyor_api::LineState;

use crate::state::Shared;
use crate::store::{self, outbox};
use crate::{error::Result, git};

/// Why an accept was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum AcceptRefused {
    #[error("no such line")]
    NoLine,
    #[error("the line is {}, not awaiting_acceptance", .0.as_str())]
    NotAwaiting(LineState),
    #[error("the line's project is gone")]
    NoProject,
    #[error(
        "{branch} holds {ahead} commit(s) that {main} does not: refusing to delete unmerged work"
    )]
    Unmerged {
        branch: String,
        main: String,
        ahead: usize,
    },
}

/// Accepts a line awaiting acceptance: its branch and worktree are removed, and a Catcher
/// message that offered the accept shows it was done.
///
/// # Errors
/// [`AcceptRefused`] inside `Ok(Err(..))`; database and git errors.
pub(crate) async fn accept(
    sh: &Shared,
    id: &str,
) -> Result<std::result::Result<(), AcceptRefused>> {
    let Some(l) = store::lines::get(&mut *sh.store.conn().await?, id).await? else {
        return Ok(Err(AcceptRefused::NoLine));
    };
    if l.state != LineState::AwaitingAcceptance {
        return Ok(Err(AcceptRefused::NotAwaiting(l.state)));
    }
    let Some(project) = store::projects::get(&mut *sh.store.conn().await?, &l.project_id).await?
    else {
        return Ok(Err(AcceptRefused::NoProject));
    };
    let repo = PathBuf::from(&project.repo_path);
    if git::branch_exists(&repo, &l.branch).await {
        let ahead = git::commits_not_in(&repo, &l.branch, &project.main_branch).await?;
        if ahead > 0 {
            return Ok(Err(AcceptRefused::Unmerged {
                branch: l.branch.clone(),
                main: project.main_branch.clone(),
                ahead,
            }));
        }
    }
    git::remove_worktree(
        &sh.locks,
        &repo,
        &sh.worktree_path(id),
        &l.branch,
        &sh.shutdown,
    )
    .await?;
    let now = sh.clock.now_ms();
    let mut tx = sh.store.begin().await?;
    store::lines::clear_worktree(&mut tx, id).await?;
    let t = crate::state::line_state_in(sh, &mut tx, id, LineState::Accepted, None, None).await?;
    let told = crate::tell::resolve(
        &mut tx,
        &sh.cfg,
        outbox::About::Ready(id),
        &crate::tell::words(&sh.cfg).accepted(),
        now,
    )
    .await?;
    tx.commit().await?;
    sh.announce(t);
    if told {
        sh.told();
    }
    Ok(Ok(()))
}
