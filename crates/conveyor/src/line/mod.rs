//! The flow of a line: one call of [`advance`] does one thing (runs the next step, or the gate,
//! or the merge) and returns, so the scheduler decides again between any two steps.
//!
//! queued → planning (the planner writes `$CONVEYOR_PLAN`; its steps become executor steps) →
//! running (each executor step resumed in the same session; a checkpoint commit after each
//! success; a reset to the checkpoint after each failure) → gate (the project's regression and
//! checklist, read from fresh main, in the worktree) → merging (into fresh main in a separate
//! worktree, regression again, compare-and-swap of main) → awaiting_acceptance. A red gate or
//! merge adds a fixer step (`fixing`); three in a row and the line needs Anton.

// From the bottom up: what every part reads (`facts`, `folder`, `checks`, `answer`), the
// project's checklist and hooks, a step's end and a failed round, one run of the CLI, then
// the kinds of step, the gate and the deploy. No file imports one above it.
mod accept;
pub(crate) mod answer;
mod checklist;
mod checks;
mod deploy;
mod facts;
mod finish;
mod folder;
mod fresh;
mod gate;
mod guard;
mod hooks;
mod invocation;
pub(crate) mod judge;
mod miss;
pub(crate) mod order;
mod refusal;
mod roles;
mod round;
mod run;
mod step;

use std::path::PathBuf;

use conveyor_api::{LineState, ReasonCode, StepKind};
use tokio_util::sync::CancellationToken;

use crate::budget::Admitted;
use crate::error::Result;
use crate::git;
use crate::state::Shared;
use crate::store::{self, LineRow};

pub(crate) use accept::{AcceptRefused, accept};
pub(crate) use checklist::checklist;
use facts::{decision_steps, next_step};
pub use folder::ingest_journal;
use gate::{gate, merge};
use step::run_step;

pub use conveyor_core::line::GATE_ROUNDS;
pub(crate) use conveyor_core::line::{ACTIVE, Action, HOLDING};

/// What the line needs next: its steps and questions from the store, the decision
/// [`conveyor_core::line::next_action`]'s.
///
/// # Errors
/// Database errors.
pub(crate) async fn next_action(sh: &Shared, line: &LineRow) -> Result<Action> {
    if !ACTIVE.contains(&line.state) {
        return Ok(conveyor_core::line::next_action(
            line.state,
            &[],
            &Default::default(),
        ));
    }
    let c = &mut *sh.store.conn().await?;
    let steps = store::steps::of_line(c, &line.id).await?;
    let questions = answer::questions(c, &line.id).await?;
    Ok(conveyor_core::line::next_action(
        line.state,
        &decision_steps(&steps),
        &questions,
    ))
}

/// Applies the daemon's rules (by day, duplicates, "read the memory first") to the line's
/// unvalidated entries, queueing a judge step for what they leave; the scheduler does this
/// before every step.
///
/// # Errors
/// Database and git errors.
pub async fn judge_by_rules(sh: &Shared, line_id: &str) -> Result<()> {
    if let Some(line) = store::lines::get(&mut *sh.store.conn().await?, line_id).await? {
        judge::sort(sh, &line).await?;
        sh.announce_questions(line_id, 0);
    }
    Ok(())
}

/// Does the line's next thing.
///
/// # Errors
/// Database errors; everything else ends in a line state with a reason, except a git call
/// stopped by `cancel` or the shutdown: the line keeps its state and is taken up again (after
/// a restart, by recovery), as when an agent or a check is stopped.
pub(crate) async fn advance(
    sh: &Shared,
    line_id: &str,
    admitted: Admitted,
    cancel: &CancellationToken,
) -> Result<()> {
    match advance_once(sh, line_id, admitted, cancel).await {
        Err(e @ crate::error::Error::GitCancelled { .. }) => {
            tracing::info!(line = line_id, error = %e, "stopped during a git call");
            Ok(())
        }
        done => done,
    }
}

async fn advance_once(
    sh: &Shared,
    line_id: &str,
    admitted: Admitted,
    cancel: &CancellationToken,
) -> Result<()> {
    let Some(line) = store::lines::get(&mut *sh.store.conn().await?, line_id).await? else {
        return Ok(());
    };
    let action = next_action(sh, &line).await?;
    if action == Action::Nothing {
        return Ok(());
    }
    let line = match ensure_worktree(sh, &line).await {
        Ok(l) => l,
        Err(e @ crate::error::Error::GitCancelled { .. }) => return Err(e),
        Err(e) => {
            sh.set_line_state(
                line_id,
                LineState::Blocked,
                Some((
                    ReasonCode::Worktree,
                    &format!("cannot make the line's worktree: {e}"),
                )),
                None,
            )
            .await?;
            return Ok(());
        }
    };
    match action {
        Action::Step { .. } => {
            let mut steps = store::steps::of_line(&mut *sh.store.conn().await?, line_id).await?;
            if steps.is_empty() {
                store::steps::add(
                    &mut *sh.store.conn().await?,
                    line_id,
                    StepKind::Planner,
                    "plan",
                    &line.task,
                    &[],
                )
                .await?;
                steps = store::steps::of_line(&mut *sh.store.conn().await?, line_id).await?;
            }
            if let Some(step) = next_step(&steps).cloned() {
                if step.kind == StepKind::Judge {
                    judge::run_judge(sh, &line, &step, admitted, cancel).await?;
                } else if crate::roles::CHECKERS.contains(&step.kind) {
                    roles::run_role(sh, &line, &step, admitted, cancel).await?;
                } else {
                    run_step(sh, &line, &step, admitted, cancel).await?;
                }
            }
        }
        Action::Sort => {
            judge::sort(sh, &line).await?;
            sh.announce_questions(&line.id, 0);
        }
        Action::Wait(code, why) => answer::wait(sh, line_id, (code, why)).await?,
        Action::Gate => gate(sh, &line, cancel).await?,
        Action::Merge => merge(sh, &line, cancel).await?,
        Action::Deploy => deploy::deploy(sh, &line, cancel).await?,
        Action::Nothing => {}
    }
    Ok(())
}

/// Makes the branch `line/<id>` and its worktree from the project's fresh main (once).
async fn ensure_worktree(sh: &Shared, line: &LineRow) -> Result<LineRow> {
    let path = sh.worktree_path(&line.id);
    if line.worktree.is_some() && path.join(".git").exists() {
        return Ok(line.clone());
    }
    let project = store::projects::get(&mut *sh.store.conn().await?, &line.project_id)
        .await?
        .ok_or_else(|| crate::error::Error::Internal("line without project".into()))?;
    let repo = PathBuf::from(&project.repo_path);
    let base = git::branch_head(&repo, &project.main_branch).await?;
    git::add_worktree(&sh.locks, &repo, &path, &line.branch, &base, &sh.shutdown).await?;
    let head = git::git(&path, &["rev-parse", "HEAD"], &sh.shutdown)
        .await?
        .trim()
        .to_string();
    let checkpoint = line.checkpoint.clone().unwrap_or(head);
    store::lines::set_worktree(
        &mut *sh.store.conn().await?,
        &line.id,
        &path,
        Some(&checkpoint),
    )
    .await?;
    std::fs::create_dir_all(sh.agent_dir(&line.id))
        .map_err(|e| crate::error::Error::io(sh.agent_dir(&line.id), e))?;
    Ok(store::lines::get(&mut *sh.store.conn().await?, &line.id)
        .await?
        .expect("line exists"))
}
