//! A line's worktree: made on its branch, committed into as checkpoints, put back at one,
//! removed with its branch; and the lock files a killed git leaves there, cleared at recovery.

use std::path::{Path, PathBuf};

use tokio_util::sync::CancellationToken;

use super::cli::{Identity, git, identity_args};
use super::locks::Locks;
use super::read::branch_exists;
use crate::error::{Error, Result};

/// Creates branch `branch` at `base` and a worktree for it at `path` (idempotent: an existing
/// worktree at `path` is kept).
///
/// # Errors
/// [`Error::Git`] with git's message; [`Error::GitCancelled`], the half-made worktree removed.
pub async fn add_worktree(
    locks: &Locks,
    repo: &Path,
    path: &Path,
    branch: &str,
    base: &str,
    cancel: &CancellationToken,
) -> Result<()> {
    let lock = locks.of(repo);
    let _g = lock.lock().await;
    if path.join(".git").exists() {
        return Ok(());
    }
    let _ = git(repo, &["worktree", "prune"], cancel).await;
    let p = path.to_string_lossy().into_owned();
    let added = if branch_exists(repo, branch).await {
        git(repo, &["worktree", "add", &p, branch], cancel).await
    } else {
        git(repo, &["worktree", "add", "-b", branch, &p, base], cancel).await
    };
    if let Err(Error::GitCancelled { .. }) = added {
        // A checkout cut short must not pass for a worktree (the test above looks for `.git`
        // only): it goes, and the next attempt makes it again.
        let to_the_end = CancellationToken::new();
        let _ = git(repo, &["worktree", "remove", "--force", &p], &to_the_end).await;
        let _ = std::fs::remove_dir_all(path);
        let _ = git(repo, &["worktree", "prune"], &to_the_end).await;
    }
    added.map(drop)
}

/// Removes the worktree at `path` and deletes `branch`.
///
/// # Errors
/// [`Error::Git`]; [`Error::GitCancelled`] (calling it again finishes the job).
pub async fn remove_worktree(
    locks: &Locks,
    repo: &Path,
    path: &Path,
    branch: &str,
    cancel: &CancellationToken,
) -> Result<()> {
    let lock = locks.of(repo);
    let _g = lock.lock().await;
    if path.exists() {
        let p = path.to_string_lossy().into_owned();
        if git(repo, &["worktree", "remove", "--force", &p], cancel)
            .await
            .is_err()
        {
            let _ = std::fs::remove_dir_all(path);
        }
    }
    let _ = git(repo, &["worktree", "prune"], cancel).await;
    if branch_exists(repo, branch).await {
        git(repo, &["branch", "-D", branch], cancel).await?;
    }
    Ok(())
}

/// Commits everything in the worktree (if anything changed) and returns HEAD: the checkpoint.
///
/// # Errors
/// [`Error::Git`]; [`Error::GitCancelled`].
pub async fn checkpoint(
    worktree: &Path,
    id: &Identity,
    message: &str,
    cancel: &CancellationToken,
) -> Result<String> {
    git(worktree, &["add", "-A"], cancel).await?;
    let status = git(worktree, &["status", "--porcelain"], cancel).await?;
    if !status.trim().is_empty() {
        let mut args = identity_args(worktree, id, cancel).await;
        args.extend([
            "commit".into(),
            "-q".into(),
            "--no-verify".into(),
            "-m".into(),
            message.into(),
        ]);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        git(worktree, &refs, cancel).await?;
    }
    Ok(git(worktree, &["rev-parse", "HEAD"], cancel)
        .await?
        .trim()
        .to_string())
}

/// Puts the worktree back at `commit`: tracked files reset, untracked ones removed (ignored
/// files such as build output are kept). A rollback: it runs to its end, never cancelled.
///
/// # Errors
/// [`Error::Git`].
pub async fn reset_to(worktree: &Path, commit: &str) -> Result<()> {
    let to_the_end = CancellationToken::new();
    git(worktree, &["reset", "-q", "--hard", commit], &to_the_end).await?;
    git(worktree, &["clean", "-q", "-fd"], &to_the_end).await?;
    Ok(())
}

/// Removes the lock files a git command killed with the daemon leaves in a worktree the daemon
/// owns: its `index.lock` and `HEAD.lock` (in the worktree's own git folder) and the lock of
/// its `branch` (in the repository's `refs`). Only for recovery, when no command of the daemon
/// runs: a lock left by a dead process stops every later command there ("Unable to create
/// '…/index.lock': File exists"). Returns the files removed.
pub fn clear_stale_locks(worktree: &Path, branch: &str) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    // A linked worktree's `.git` is a file: `gitdir: <repo>/.git/worktrees/<name>`.
    let Ok(dot_git) = std::fs::read_to_string(worktree.join(".git")) else {
        return removed;
    };
    let Some(gitdir) = dot_git
        .trim()
        .strip_prefix("gitdir:")
        .map(|p| PathBuf::from(p.trim()))
    else {
        return removed;
    };
    // `commondir` holds the path of the repository's git folder, relative to the gitdir.
    let common = std::fs::read_to_string(gitdir.join("commondir"))
        .map(|c| gitdir.join(c.trim()))
        .unwrap_or_else(|_| gitdir.join("../.."));
    let branch_lock = common.join("refs/heads").join(format!("{branch}.lock"));
    for lock in [
        gitdir.join("index.lock"),
        gitdir.join("HEAD.lock"),
        branch_lock,
    ] {
        if lock.exists() && std::fs::remove_file(&lock).is_ok() {
            removed.push(lock);
        }
    }
    removed
}
