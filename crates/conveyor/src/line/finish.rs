//! Finishing a step: after a finished run the daemon's own checks (or, for a planner, the
//! plan) decide; green commits a checkpoint and records the step done, red or failed rolls
//! back to the checkpoint and retries or stops the line for Anton.

use std::path::Path;

use conveyor_api::{LineState, ReasonCode, StepKind, StepState};
use tokio_util::sync::CancellationToken;

use crate::config::Check;
use crate::exec;
use crate::git;
use crate::state::Shared;
use crate::store::runs::{self, RunOutcome};
use crate::store::{self, LineRow, StepRow};
use crate::{error::Result, plan};

use super::checks::run_checks;
use super::facts::{is_cancelled, next_step};
use super::folder::plan_path;

/// What a finished run leaves for [`finish_step`] to decide on.
pub(super) struct Finished<'a> {
    pub run_id: i64,
    pub worktree: &'a Path,
    pub checkpoint: &'a str,
    pub checks: &'a [Check],
    /// Times the Stop hook blocked.
    pub blocks: u32,
    /// The questions whose answers the run's prompt carried.
    pub carried: &'a [String],
}

/// After `is_error:false`: the daemon's own checks decide; green → checkpoint.
pub(super) async fn finish_step(
    sh: &Shared,
    line: &LineRow,
    step: &StepRow,
    f: Finished<'_>,
    cancel: &CancellationToken,
) -> Result<()> {
    let Finished {
        run_id,
        worktree,
        checkpoint,
        checks,
        blocks,
        carried,
    } = f;
    let kind = step.kind;
    let mut planned = None;
    let red = if kind == StepKind::Planner {
        let text = std::fs::read_to_string(plan_path(sh, &line.id)).unwrap_or_default();
        match plan::parse(&text) {
            Ok(p) => {
                planned = Some(p);
                Vec::new()
            }
            Err(e) if text.is_empty() => {
                vec![format!("no plan was written to $CONVEYOR_PLAN ({e})")]
            }
            Err(e) => vec![e.to_string()],
        }
    } else {
        run_checks(sh, &line.id, worktree, checks, cancel)
            .await?
            .into_iter()
            .map(|(_, what)| what)
            .collect()
    };
    if is_cancelled(sh, &line.id).await? {
        // Cancelled by Anton while the daemon checked.
        git::reset_to(worktree, checkpoint).await?;
        runs::set_outcome(&mut *sh.store.conn().await?, run_id, RunOutcome::Cancelled).await?;
        return sh
            .set_step_state(
                &line.id,
                &step.id,
                step.n,
                StepState::Cancelled,
                Some("line cancelled"),
            )
            .await;
    }
    if cancel.is_cancelled() {
        // Stopped while the daemon checked: the step is resumed after the restart.
        git::reset_to(worktree, checkpoint).await?;
        runs::set_outcome(
            &mut *sh.store.conn().await?,
            run_id,
            RunOutcome::Interrupted,
        )
        .await?;
        return store::steps::roll_back(
            &mut *sh.store.conn().await?,
            &step.id,
            StepState::Interrupted,
            "the daemon stopped while the step's checks ran",
            None,
        )
        .await;
    }
    if !red.is_empty()
        && let Ok((list, ..)) = super::checklist::checklist(sh, line).await?
        && let Some(pattern) = red.iter().find_map(|r| list.external(r))
    {
        // An external service is down: not the step's fault. Its work is rolled back, the
        // attempt is not counted, and the line tries again later.
        git::reset_to(worktree, checkpoint).await?;
        runs::set_outcome(
            &mut *sh.store.conn().await?,
            run_id,
            RunOutcome::Interrupted,
        )
        .await?;
        let why = format!("an external service was down (external_errors {pattern:?})");
        store::steps::roll_back(
            &mut *sh.store.conn().await?,
            &step.id,
            StepState::Pending,
            &why,
            None,
        )
        .await?;
        let again = sh.clock.now_ms()
            + i64::try_from(sh.cfg.preflight_interval_secs.saturating_mul(1000))
                .unwrap_or(i64::MAX);
        return sh
            .set_line_state(
                &line.id,
                line.state,
                Some((
                    ReasonCode::ExternalDown,
                    &format!("{why}: {}", red.join("\n")),
                )),
                Some(again),
            )
            .await;
    }
    if !red.is_empty() {
        runs::set_outcome(&mut *sh.store.conn().await?, run_id, RunOutcome::Red).await?;
        let reason = format!(
            "checks still red after {blocks} Stop-hook round(s):\n{}",
            red.join("\n")
        );
        // The hook already gave the agent its rounds: no new attempt, Anton decides.
        return fail_step(sh, line, step, worktree, checkpoint, &reason, false).await;
    }
    let message = format!("conveyor: line {} step {}: {}", line.id, step.n, step.title);
    // Stopped by the shutdown only (recovery then takes the step up again), not by a cancel of
    // the line: a line cancelled now still records its finished step.
    let sha = git::checkpoint(worktree, &sh.identity(), &message, &sh.shutdown).await?;
    store::steps::record_done(
        &mut *sh.store.conn().await?,
        store::steps::Done {
            line_id: &line.id,
            step_id: &step.id,
            run_id,
            sha: &sha,
            plan: planned.as_ref().map(|p| (p.level, p.steps.as_slice())),
            carried,
        },
    )
    .await?;
    sh.set_step_state(&line.id, &step.id, step.n, StepState::Done, None)
        .await?;
    let has_more =
        next_step(&store::steps::of_line(&mut *sh.store.conn().await?, &line.id).await?).is_some();
    let next = if has_more {
        LineState::Running
    } else {
        LineState::Gate
    };
    sh.set_line_state(&line.id, next, None, None).await?;
    Ok(())
}

/// A failed attempt: roll back; when `retry`, attempt again while attempts are left; else the
/// line needs Anton with the reason.
pub(super) async fn fail_step(
    sh: &Shared,
    line: &LineRow,
    step: &StepRow,
    worktree: &Path,
    checkpoint: &str,
    reason: &str,
    retry: bool,
) -> Result<()> {
    git::reset_to(worktree, checkpoint).await?;
    let failed = runs::count_of_step(
        &mut *sh.store.conn().await?,
        &step.id,
        &[RunOutcome::Failed, RunOutcome::Red],
    )
    .await?;
    if retry && failed < i64::from(sh.cfg.step_attempts) {
        store::steps::roll_back(
            &mut *sh.store.conn().await?,
            &step.id,
            StepState::Pending,
            &format!("the previous attempt failed: {}", exec::tail(reason, 1500)),
            Some(reason),
        )
        .await?;
        sh.set_step_state(&line.id, &step.id, step.n, StepState::Pending, Some(reason))
            .await?;
        return Ok(());
    }
    sh.set_step_state(&line.id, &step.id, step.n, StepState::Failed, Some(reason))
        .await?;
    super::answer::needs_anton(
        sh,
        &line.id,
        (
            ReasonCode::StepFailed,
            &format!("step {} ({}) failed: {reason}", step.n, step.title),
        ),
    )
    .await
}

/// A dead end the daemon cannot get past: roll back, the line needs Anton, the daemon goes on.
pub(super) async fn stop_line(
    sh: &Shared,
    line: &LineRow,
    step: &StepRow,
    worktree: &Path,
    checkpoint: &str,
    (code, reason): (ReasonCode, &str),
) -> Result<()> {
    git::reset_to(worktree, checkpoint).await?;
    sh.set_step_state(&line.id, &step.id, step.n, StepState::Failed, Some(reason))
        .await?;
    super::answer::needs_anton(sh, &line.id, (code, reason)).await
}
