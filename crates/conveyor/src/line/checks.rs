//! The daemon's own checks: shell commands run in the line's worktree (as the agent's user
//! when there is one), each compared with its expected exit code. A step's checks after its
//! run and the gate's regression and checklist both run here.

use std::path::Path;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::config::Check;
use crate::error::Result;
use crate::exec::{self, Spec};
use crate::state::Shared;

use super::folder::give_to_agent;

/// Runs the checks in the worktree; returns the red ones with what they said.
pub(super) async fn run_checks(
    sh: &Shared,
    line_id: &str,
    worktree: &Path,
    checks: &[Check],
    cancel: &CancellationToken,
) -> Result<Vec<(Check, String)>> {
    let mut red = Vec::new();
    // The checks come from the agent's plan and run the agent's code: with an agent user they
    // run as that user, never as root.
    give_to_agent(sh, line_id, worktree)?;
    for c in checks {
        let out = run_command(sh, line_id, &c.cmd, worktree, cancel).await?;
        if out.code != Some(c.expect_exit) {
            let what = format!(
                "`{}` exited {} (expected {}): {}",
                c.cmd,
                exit_text(&out),
                c.expect_exit,
                out.tail(1500).trim()
            );
            red.push((c.clone(), what));
        }
    }
    Ok(red)
}

/// One of the line's commands (a check, the regression) through `sh -c` in `dir`: marked as
/// this daemon's and the line's (so recovery finds it after a crash), as the agent's user when
/// there is one, within `command_timeout_secs`.
pub(super) async fn run_command(
    sh: &Shared,
    line_id: &str,
    cmd: &str,
    dir: &Path,
    cancel: &CancellationToken,
) -> Result<exec::Output> {
    let mut spec = Spec::shell(cmd, dir);
    spec.env.extend(sh.command_env(line_id));
    if let Some(u) = &sh.agent_user {
        u.apply(&mut spec);
    }
    let timeout = Duration::from_secs(sh.cfg.command_timeout_secs);
    exec::run(&spec, timeout, cancel).await
}

/// How a command ended, in words: its exit code, or "by a signal".
pub(super) fn exit_text(out: &exec::Output) -> String {
    out.code.map_or("by a signal".into(), |c| c.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks carry the daemon's marker and their line, so recovery finds them after a crash.
    #[tokio::test]
    async fn checks_carry_the_daemon_marker_and_their_line() {
        let tmp = tempfile::tempdir().unwrap();
        let d = crate::daemon::testing::start(&tmp.path().join("data"), "").await;
        let sh = d.shared().clone();
        let check = Check {
            cmd: format!(
                "test \"$CONVEYOR_DAEMON\" = '{}' && test \"$CONVEYOR_LINE\" = l1",
                sh.marker()
            ),
            expect_exit: 0,
        };
        let red = run_checks(&sh, "l1", tmp.path(), &[check], &CancellationToken::new())
            .await
            .unwrap();
        assert!(red.is_empty(), "{red:?}");
        drop(sh);
        d.stop().await;
    }
}
