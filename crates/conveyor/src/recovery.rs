//! Recovery at start-up, after a clean stop or a `kill -9`: every run left `running` belongs
//! to a step that was interrupted. Its agent may still be alive (a killed daemon does not stop
//! it): the process groups carrying its `CONVEYOR_STEP` are found and killed first. Then the
//! step is marked interrupted, the journal ingested, and the worktree reset to the checkpoint;
//! the scheduler resumes the step in its session.

use std::path::PathBuf;
use std::time::Duration;

use conveyor_api::StepState;

use crate::daemon::Shared;
use crate::store::now_ms;
use crate::{Result, exec, git, line};

/// Puts interrupted work back in order.
///
/// # Errors
/// Database errors.
pub async fn recover(sh: &Shared) -> Result<()> {
    let runs = sh.store.unfinished_runs().await?;
    for run in runs {
        let killed = exec::kill_leftovers(&run.step_id, Duration::from_secs(10)).await;
        if !killed.is_empty() {
            tracing::warn!(line = %run.line_id, step = %run.step_id, groups = ?killed, "killed an agent left running from before the restart");
        }
        sqlx::query("UPDATE runs SET outcome = 'interrupted', finished_at = ? WHERE id = ?")
            .bind(now_ms())
            .bind(run.id)
            .execute(&sh.store.pool)
            .await?;
        if run.init_seen {
            sqlx::query("UPDATE lines SET session_started = 1 WHERE id = ?")
                .bind(&run.line_id)
                .execute(&sh.store.pool)
                .await?;
        }
        let Some(step) = sh.store.step(&run.step_id).await? else {
            continue;
        };
        if step.state() == StepState::Running {
            sqlx::query("UPDATE steps SET state = 'interrupted', rolled_back = ? WHERE id = ?")
                .bind("the daemon stopped while the step ran")
                .bind(&step.id)
                .execute(&sh.store.pool)
                .await?;
        }
        if let Err(e) = line::ingest_journal(sh, &run.line_id, Some(&run.step_id)).await {
            tracing::warn!(line = %run.line_id, error = %e, "journal ingestion on recovery failed");
        }
        if let Some(l) = sh.store.line(&run.line_id).await?
            && let (Some(wt), Some(cp)) = (&l.worktree, &l.checkpoint)
        {
            let wt = PathBuf::from(wt);
            if wt.exists()
                && let Err(e) = git::reset_to(&wt, cp).await
            {
                tracing::error!(line = %l.id, error = %e, "reset to checkpoint failed");
            }
        }
        tracing::info!(line = %run.line_id, step = %run.step_id, "interrupted step will be resumed");
    }
    // Steps marked running without a run row (died between the two writes).
    sqlx::query(
        "UPDATE steps SET state = 'interrupted', rolled_back = 'the daemon stopped while the step ran'
         WHERE state = 'running'",
    )
    .execute(&sh.store.pool)
    .await?;
    Ok(())
}
