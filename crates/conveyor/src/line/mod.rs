//! The flow of a line: one call of [`advance`] does one thing (runs the next step, or the gate,
//! or the merge) and returns, so the scheduler decides again between any two steps.
//!
//! queued → planning (the planner writes `$CONVEYOR_PLAN`; its steps become executor steps) →
//! running (each executor step resumed in the same session; a checkpoint commit after each
//! success; a reset to the checkpoint after each failure) → gate (the project's regression and
//! checklist, read from fresh main, in the worktree) → merging (into fresh main in a separate
//! worktree, regression again, compare-and-swap of main) → awaiting_acceptance. A red gate or
//! merge adds a fixer step (`fixing`); three in a row and the line needs Anton.

mod accept;
pub(crate) mod answer;
mod checks;
mod deploy;
mod finish;
mod fresh;
mod gate;
mod hooks;
pub(crate) mod judge;
mod miss;
pub(crate) mod order;
mod roles;
mod run;
mod step;

use std::path::{Path, PathBuf};

use conveyor_api::{EventKind, LineState, ReasonCode, StepKind};
use tokio_util::sync::CancellationToken;

use crate::budget::Admitted;
use crate::events::EventBody;
use crate::exec;
use crate::git;
use crate::state::Shared;
use crate::store::{self, LineRow, StepRow};
use crate::{Result, journal};

pub(crate) use accept::{AcceptRefused, accept};
pub(crate) use gate::checklist;
use gate::{gate, merge};
use step::run_step;

/// Runs of one step attempt that may switch between `--session-id` and `--resume`.
pub(crate) const SESSION_TRIES: usize = 3;

pub use conveyor_core::line::GATE_ROUNDS;
pub(crate) use conveyor_core::line::{ACTIVE, Action, HOLDING};

pub(crate) fn open(s: &StepRow) -> bool {
    conveyor_core::line::open(s.state)
}

/// The step to run next ([`conveyor_core::line::next_step`]).
fn next_step(steps: &[StepRow]) -> Option<&StepRow> {
    let seen = decision_steps(steps);
    let id = conveyor_core::line::next_step(&seen)?.id;
    steps.iter().find(|s| s.id == id)
}

fn decision_steps(steps: &[StepRow]) -> Vec<conveyor_core::line::Step<'_>> {
    steps
        .iter()
        .map(|s| conveyor_core::line::Step {
            id: &s.id,
            kind: s.kind,
            size: s.size,
            state: s.state,
        })
        .collect()
}

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
        Err(e @ crate::Error::GitCancelled { .. }) => {
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
        Err(e @ crate::Error::GitCancelled { .. }) => return Err(e),
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
        .ok_or_else(|| crate::Error::Internal("line without project".into()))?;
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
    std::fs::create_dir_all(sh.line_dir(&line.id))
        .map_err(|e| crate::Error::io(sh.line_dir(&line.id), e))?;
    Ok(store::lines::get(&mut *sh.store.conn().await?, &line.id)
        .await?
        .expect("line exists"))
}

/// With `root_mode = { user = … }`: gives the line's folder (plan, journal, hook scripts and
/// state), its worktree and the worktree's git folder (index, HEAD) to the agent's user. Run
/// before every agent run: the daemon's own resets, checks and hooks write files as root.
fn give_to_agent(sh: &Shared, line_id: &str, worktree: &Path) -> Result<()> {
    let Some(u) = &sh.agent_user else {
        return Ok(());
    };
    exec::chown_tree(&sh.line_dir(line_id), u.uid, u.gid)?;
    exec::chown_worktree(worktree, u.uid, u.gid)
}

fn journal_path(sh: &Shared, line_id: &str) -> PathBuf {
    sh.line_dir(line_id).join("journal.jsonl")
}

fn plan_path(sh: &Shared, line_id: &str) -> PathBuf {
    sh.line_dir(line_id).join("plan.json")
}

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
    std::fs::create_dir_all(&dir).map_err(|e| crate::Error::io(&dir, e))?;
    let path = dir.join("guard.json");
    let text = serde_json::to_string(&cx).unwrap_or_default();
    std::fs::write(&path, text).map_err(|e| crate::Error::io(&path, e))?;
    // The CLI runs its hooks as the agent's user.
    if let Some(u) = &sh.agent_user {
        exec::chown_tree(&path, u.uid, u.gid)?;
    }
    Ok(Some(crate::guard::hook_command(&bin, &path)))
}

/// The project's own remotes (names and URLs), `[never] patterns` from fresh main, and the
/// line's PlanFix task (the one task its agents may write to). What cannot be read is left
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
    match gate::checklist(sh, line).await {
        Ok(Ok((list, ..))) => cx.patterns = list.never.patterns,
        Ok(Err(e)) => {
            tracing::warn!(line = %line.id, error = %e, "the guard cannot read [never] patterns")
        }
        Err(e) => {
            tracing::warn!(line = %line.id, error = %e, "the guard cannot read [never] patterns")
        }
    }
    cx
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

/// The project's latest `limit` decisions taken without Anton, as prompt lines (`text (why:
/// …)`): the catalogue fed back to the agents and the judge.
async fn latest_decisions(sh: &Shared, project_id: &str, limit: i64) -> Result<Vec<String>> {
    Ok(
        store::questions::decisions(&mut *sh.store.conn().await?, Some(project_id), false, limit)
            .await?
            .into_iter()
            .map(|d| match d.why {
                Some(w) => format!("{} (why: {w})", d.text),
                None => d.text,
            })
            .collect(),
    )
}

async fn is_cancelled(sh: &Shared, line_id: &str) -> Result<bool> {
    Ok(
        store::lines::state_of(&mut *sh.store.conn().await?, line_id).await?
            == Some(LineState::Cancelled),
    )
}
