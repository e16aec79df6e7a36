//! Finishing a step: after a finished run the daemon's own checks (or, for a planner, the
//! plan) decide; green commits a checkpoint and records the step done, red or failed rolls
//! back to the checkpoint and retries or stops the line for Anton.

use std::path::Path;

use conveyor_api::{LineState, StepKind, StepState};
use tokio_util::sync::CancellationToken;

use crate::config::Check;
use crate::daemon::Shared;
use crate::exec;
use crate::git;
use crate::store::{LineRow, StepRow, now_ms};
use crate::{Result, plan};

use super::checks::run_checks;
use super::{is_cancelled, next_step, plan_path};

pub(super) async fn set_run_outcome(sh: &Shared, run_id: i64, outcome: &str) -> Result<()> {
    sqlx::query("UPDATE runs SET outcome = ? WHERE id = ?")
        .bind(outcome)
        .bind(run_id)
        .execute(&sh.store.pool)
        .await?;
    Ok(())
}

/// After `is_error:false`: the daemon's own checks decide; green → checkpoint.
#[allow(clippy::too_many_arguments)]
pub(super) async fn finish_step(
    sh: &Shared,
    line: &LineRow,
    step: &StepRow,
    run_id: i64,
    worktree: &Path,
    checkpoint: &str,
    checks: &[Check],
    blocks: u32,
    cancel: &CancellationToken,
) -> Result<()> {
    let kind = step.kind();
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
        run_checks(sh, &line.id, worktree, checks, cancel).await?
    };
    if is_cancelled(sh, &line.id).await? {
        // Cancelled by Anton while the daemon checked.
        git::reset_to(worktree, checkpoint).await?;
        set_run_outcome(sh, run_id, "cancelled").await?;
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
        set_run_outcome(sh, run_id, "interrupted").await?;
        sqlx::query("UPDATE steps SET state = 'interrupted', rolled_back = ? WHERE id = ?")
            .bind("the daemon stopped while the step's checks ran")
            .bind(&step.id)
            .execute(&sh.store.pool)
            .await?;
        return Ok(());
    }
    if !red.is_empty() {
        set_run_outcome(sh, run_id, "red").await?;
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
    record_step_done(
        &sh.store.pool,
        &line.id,
        &step.id,
        run_id,
        &sha,
        planned.as_ref(),
    )
    .await?;
    sh.set_step_state(&line.id, &step.id, step.n, StepState::Done, None)
        .await?;
    let has_more = next_step(&sh.store.steps(&line.id).await?).is_some();
    let next = if has_more {
        LineState::Running
    } else {
        LineState::Gate
    };
    sh.set_line_state(&line.id, next, None, None).await?;
    Ok(())
}

/// Records a successful step: the run ok, the step done at checkpoint `sha`, the line's
/// checkpoint moved, answers delivered, and for a planner the plan's level and executor steps.
async fn record_step_done(
    pool: &sqlx::SqlitePool,
    line_id: &str,
    step_id: &str,
    run_id: i64,
    sha: &str,
    planned: Option<&plan::Plan>,
) -> Result<()> {
    let mut tx = pool.begin().await?;
    sqlx::query("UPDATE runs SET outcome = 'ok' WHERE id = ?")
        .bind(run_id)
        .execute(&mut *tx)
        .await?;
    sqlx::query("UPDATE steps SET state = 'done', checkpoint = ?, error = NULL, rolled_back = NULL WHERE id = ?")
        .bind(sha)
        .bind(step_id)
        .execute(&mut *tx)
        .await?;
    sqlx::query("UPDATE lines SET checkpoint = ?, updated_at = ? WHERE id = ?")
        .bind(sha)
        .bind(now_ms())
        .bind(line_id)
        .execute(&mut *tx)
        .await?;
    sqlx::query("UPDATE questions SET delivered = 1 WHERE line_id = ? AND status = 'answered'")
        .bind(line_id)
        .execute(&mut *tx)
        .await?;
    if let Some(p) = planned {
        sqlx::query("UPDATE lines SET level = ? WHERE id = ?")
            .bind(p.level.as_str())
            .bind(line_id)
            .execute(&mut *tx)
            .await?;
        // In the same transaction: a crash can never leave a done planner without its steps.
        for s in &p.steps {
            crate::store::insert_step(
                &mut tx,
                line_id,
                StepKind::Executor,
                &s.title,
                &s.task,
                &s.checks,
            )
            .await?;
        }
    }
    tx.commit().await?;
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
    let failed: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM runs WHERE step_id = ? AND outcome IN ('failed', 'red')",
    )
    .bind(&step.id)
    .fetch_one(&sh.store.pool)
    .await?;
    if retry && failed < i64::from(sh.cfg.step_attempts) {
        sqlx::query("UPDATE steps SET state = 'pending', error = ?, rolled_back = ? WHERE id = ?")
            .bind(reason)
            .bind(format!(
                "the previous attempt failed: {}",
                exec::tail(reason, 1500)
            ))
            .bind(&step.id)
            .execute(&sh.store.pool)
            .await?;
        sh.set_step_state(&line.id, &step.id, step.n, StepState::Pending, Some(reason))
            .await?;
        return Ok(());
    }
    sh.set_step_state(&line.id, &step.id, step.n, StepState::Failed, Some(reason))
        .await?;
    sh.set_line_state(
        &line.id,
        LineState::NeedsHuman,
        Some(&format!(
            "step {} ({}) failed: {reason}",
            step.n, step.title
        )),
        None,
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
    reason: &str,
) -> Result<()> {
    git::reset_to(worktree, checkpoint).await?;
    sh.set_step_state(&line.id, &step.id, step.n, StepState::Failed, Some(reason))
        .await?;
    sh.set_line_state(&line.id, LineState::NeedsHuman, Some(reason), None)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing;

    #[tokio::test]
    async fn a_planner_is_done_only_together_with_its_executor_steps() {
        let (_dir, store) = testing::store().await;
        let line = testing::line(&store, "p", "l", 0, "running").await;
        let planner = store
            .add_step(&line, StepKind::Planner, "plan", "t", &[])
            .await
            .unwrap();
        let run = testing::run(&store, &planner.id, &line).await;
        let plan = plan::parse(r#"{"steps":[{"title":"a","task":"x"},{"title":"b","task":"y"}]}"#)
            .unwrap();
        // The second executor step cannot be written (as if the daemon died in between).
        sqlx::query(
            "CREATE TRIGGER boom BEFORE INSERT ON steps WHEN NEW.title = 'b'
             BEGIN SELECT RAISE(ABORT, 'boom'); END",
        )
        .execute(&store.pool)
        .await
        .unwrap();
        let r = record_step_done(&store.pool, &line, &planner.id, run, "abc", Some(&plan)).await;
        assert!(r.is_err());
        let steps = store.steps(&line).await.unwrap();
        assert_eq!(steps.len(), 1, "no executor step without the planner done");
        assert_eq!(steps[0].state(), StepState::Pending);
        let l = store.line(&line).await.unwrap().unwrap();
        assert_eq!(l.checkpoint, None);

        sqlx::query("DROP TRIGGER boom")
            .execute(&store.pool)
            .await
            .unwrap();
        record_step_done(&store.pool, &line, &planner.id, run, "abc", Some(&plan))
            .await
            .unwrap();
        let steps = store.steps(&line).await.unwrap();
        assert_eq!(steps.len(), 3);
        assert_eq!(steps[0].state(), StepState::Done);
        assert!(steps[1..].iter().all(|s| s.kind() == StepKind::Executor));
    }
}
