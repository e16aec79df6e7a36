//! Recovery at start-up, after a clean stop or a `kill -9`. A killed daemon does not stop its
//! children: every process group carrying this daemon's marker (agents, checks, regression
//! runs; see [`exec::DAEMON_MARKER`]) or a leftover step's `CONVEYOR_STEP` is found and killed
//! first. Then every run left `running` is marked interrupted, and every step still `running`
//! (its run was going, or had ended and the daemon was checking it, or had not started yet) is
//! marked interrupted, its line's journal ingested and its worktree reset to the checkpoint;
//! the scheduler resumes the step in its session.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use conveyor_api::{LineState, ReasonCode, StepState};

use crate::state::Shared;
use crate::store;
use crate::{error::Result, exec, git, line};

/// Why an interrupted step's next attempt starts from the checkpoint (told to the agent).
pub const INTERRUPTED: &str = "the daemon stopped while the step ran or while its result was checked; the worktree was reset to the last checkpoint";

/// Puts interrupted work back in order.
///
/// # Errors
/// Database errors.
pub async fn recover(sh: &Shared) -> Result<()> {
    let killed =
        exec::kill_groups_with(exec::DAEMON_MARKER, &sh.marker(), Duration::from_secs(10)).await;
    if !killed.is_empty() {
        tracing::warn!(groups = ?killed, "killed processes left running from before the restart");
    }
    let runs = store::runs::unfinished(&mut *sh.store.conn().await?).await?;
    for run in runs {
        // Agents started before the marker existed carry only their step.
        let killed = exec::kill_leftovers(&run.step_id, Duration::from_secs(10)).await;
        if !killed.is_empty() {
            tracing::warn!(line = %run.line_id, step = %run.step_id, groups = ?killed, "killed an agent left running from before the restart");
        }
        // What it spent before the crash is spent all the same: its stream file shows it (the
        // run has no result), and the budget counts it.
        let spent = run
            .log_path
            .as_deref()
            .and_then(|p| crate::budget::meter_file(std::path::Path::new(p)).ok())
            .map_or(0.0, |m| sh.budget.prices.cost(&m.tokens()));
        // A run that reached system/init started its session: the next attempt resumes it.
        let mut tx = sh.store.begin().await?;
        store::runs::interrupt(&mut tx, run.id, spent).await?;
        if run.init_seen && run.in_line_session {
            store::lines::set_session_started(&mut tx, &run.line_id, true).await?;
        }
        tx.commit().await?;
    }
    // Every step still running: its run was interrupted above, or it had ended (`finished`)
    // and the daemon died while checking it, or it had not started.
    let steps = store::steps::running(&mut *sh.store.conn().await?).await?;
    let mut lines = BTreeMap::new();
    for step in &steps {
        let mut tx = sh.store.begin().await?;
        store::runs::interrupt_unjudged(&mut tx, &step.id).await?;
        store::steps::roll_back(&mut tx, &step.id, StepState::Interrupted, INTERRUPTED, None)
            .await?;
        tx.commit().await?;
        lines.insert(step.line_id.clone(), step.id.clone());
    }
    for (line_id, step_id) in lines {
        if let Err(e) = line::ingest_journal(sh, &line_id, Some(&step_id)).await {
            tracing::warn!(line = %line_id, error = %e, "journal ingestion on recovery failed");
        }
        let Some(l) = store::lines::get(&mut *sh.store.conn().await?, &line_id).await? else {
            continue;
        };
        if let (Some(wt), Some(cp)) = (&l.worktree, &l.checkpoint) {
            let wt = PathBuf::from(wt);
            // A checkpoint commit cut by the kill leaves git's locks behind; the worktree and
            // its branch are the daemon's alone, and nothing of it runs now.
            let locks = git::clear_stale_locks(&wt, &l.branch);
            if !locks.is_empty() {
                tracing::warn!(line = %l.id, locks = ?locks, "removed git locks left by the kill");
            }
            if wt.exists()
                && let Err(e) = git::reset_to(&wt, cp).await
            {
                tracing::error!(line = %l.id, error = %e, "reset to checkpoint failed");
                // Never resume on a worktree that still holds the interrupted attempt.
                if l.state != LineState::Cancelled {
                    sh.set_line_state(
                        &l.id,
                        LineState::Blocked,
                        Some((
                            ReasonCode::Recovery,
                            &format!(
                                "recovery could not reset the worktree to the checkpoint: {e}"
                            ),
                        )),
                        None,
                    )
                    .await?;
                }
                continue;
            }
        }
        tracing::info!(line = %line_id, "interrupted step will be resumed from the checkpoint");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::testing;
    use crate::store::testing as rows;
    use conveyor_api::StepKind;
    use std::process::Command;

    fn git(dir: &std::path::Path, args: &[&str]) -> String {
        let o = Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    }

    /// The daemon died after the agent's run had `finished`, while it checked the step: the
    /// step is interrupted, its worktree reset, and commands it had started are killed.
    #[tokio::test]
    async fn a_step_killed_while_checked_is_rolled_back_and_its_commands_killed() {
        let tmp = tempfile::tempdir().unwrap();
        let wt = tmp.path().join("wt");
        std::fs::create_dir(&wt).unwrap();
        git(&wt, &["init", "-q", "-b", "main"]);
        std::fs::write(wt.join("a.txt"), "a\n").unwrap();
        git(&wt, &["add", "-A"]);
        git(
            &wt,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "c",
            ],
        );
        let cp = git(&wt, &["rev-parse", "HEAD"]);
        let data = tmp.path().join("data");

        let d = testing::start(&data, "").await;
        let sh = d.shared().clone();
        let line = rows::line(&sh.store, "p", "l1", 0, "running").await;
        store::lines::set_worktree(&mut sh.store.conn().await.unwrap(), &line, &wt, Some(&cp))
            .await
            .unwrap();
        let step = crate::store::testing::step(&sh.store, &line, StepKind::Executor).await;
        let run = rows::run(&sh.store, &step.id, &line).await;
        store::steps::set_state(
            &mut sh.store.conn().await.unwrap(),
            &step.id,
            StepState::Running,
            None,
        )
        .await
        .unwrap();
        rows::end_run(&sh.store, run, "executor", "finished", 0.0, store::now_ms()).await;
        // The agent's uncommitted work, and a check the daemon had started.
        std::fs::write(wt.join("a.txt"), "half\n").unwrap();
        std::fs::write(wt.join("junk.txt"), "junk\n").unwrap();
        let mut check = exec::Spec::shell("sleep 60", &wt);
        check.env.extend(sh.command_env(&line));
        let marker = sh.marker();
        drop(sh);
        d.stop().await;
        // Started once the daemon is down, as a check it left behind: a daemon still running
        // could act on the line (its scheduler sees a running line) and kill it first.
        let mut child = check.spawn().unwrap();
        assert_eq!(
            exec::groups_with_env(exec::DAEMON_MARKER, &marker),
            vec![child.id().unwrap()]
        );

        let d = testing::start(&data, "").await;
        let sh = d.shared().clone();
        assert!(exec::groups_with_env(exec::DAEMON_MARKER, &marker).is_empty());
        assert!(child.try_wait().unwrap().is_some(), "the check was killed");
        let s = store::steps::get(&mut sh.store.conn().await.unwrap(), &step.id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(s.state, StepState::Interrupted);
        assert_eq!(s.rolled_back.as_deref(), Some(INTERRUPTED));
        let outcome = rows::run_outcome(&sh.store, run).await;
        assert_eq!(outcome, "interrupted");
        assert_eq!(std::fs::read_to_string(wt.join("a.txt")).unwrap(), "a\n");
        assert!(!wt.join("junk.txt").exists());
        drop(sh);
        d.stop().await;
    }
}
