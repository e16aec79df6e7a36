//! The git CLI, through the one `exec` module: a stop ends a long or hung call by SIGTERM
//! first, so that git removes its lock files; and the identity commits are made as where a
//! repository has none of its own.

use std::path::Path;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};
use crate::exec::{self, Spec};

/// Identity for commits when the repository has none.
#[derive(Debug, Clone)]
pub struct Identity {
    pub name: String,
    pub email: String,
}

pub(super) fn git_err(repo: &Path, message: impl Into<String>) -> Error {
    Error::Git {
        repo: repo.to_path_buf(),
        message: message.into(),
    }
}

/// A git call's longest run.
const GIT_TIMEOUT: Duration = Duration::from_secs(600);

/// How long a stopped git call has after SIGTERM (to remove its lock files) before SIGKILL.
const GIT_STOP_GRACE: Duration = Duration::from_secs(5);

/// Runs `git args…` in `dir`; returns stdout, or an error quoting stderr.
///
/// # Errors
/// [`Error::GitCancelled`] when `cancel` stops it (or was cancelled before it started);
/// [`Error::Git`] when git fails.
pub async fn git(dir: &Path, args: &[&str], cancel: &CancellationToken) -> Result<String> {
    let out = git_raw(dir, args, cancel).await?;
    if out.code != Some(0) {
        return Err(git_err(
            dir,
            format!(
                "git {} failed ({}): {}",
                args.join(" "),
                out.code.map_or("killed".into(), |c| c.to_string()),
                exec::tail(out.stderr.trim(), 2000)
            ),
        ));
    }
    Ok(out.stdout)
}

/// Runs `git args…` in `dir` to its end, whatever its exit code; [`Error::GitCancelled`] when
/// `cancel` stops it.
pub(super) async fn git_raw(
    dir: &Path,
    args: &[&str],
    cancel: &CancellationToken,
) -> Result<exec::Output> {
    let stopped = || Error::GitCancelled {
        repo: dir.to_path_buf(),
        command: args.join(" "),
    };
    if cancel.is_cancelled() {
        return Err(stopped());
    }
    // The daemon's git runs on worktrees an agent user may own (`root_mode = { user = … }`):
    // git's ownership check ("dubious ownership") must not stop it.
    let spec = Spec::new("git", dir)
        .args(["-c", "safe.directory=*"])
        .args(args.iter().copied())
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C")
        .stop_grace(GIT_STOP_GRACE);
    let out = exec::run(&spec, GIT_TIMEOUT, cancel).await?;
    if out.cancelled {
        return Err(stopped());
    }
    Ok(out)
}

/// `-c user.name=… -c user.email=…` when the repository has no identity of its own.
pub(super) async fn identity_args(
    dir: &Path,
    id: &Identity,
    cancel: &CancellationToken,
) -> Vec<String> {
    let has_name = git(dir, &["config", "user.name"], cancel).await.is_ok();
    let has_email = git(dir, &["config", "user.email"], cancel).await.is_ok();
    let mut a = Vec::new();
    if !has_name {
        a.extend(["-c".into(), format!("user.name={}", id.name)]);
    }
    if !has_email {
        a.extend(["-c".into(), format!("user.email={}", id.email)]);
    }
    a
}
