//! Git: git2 for reads (refs, blobs, ancestry), the git CLI for worktrees, commits, resets and
//! merges, where git2 is awkward. Every writing operation on a repository holds that
//! repository's lock, so two lines of different projects never fight, and the merge of one
//! line never races another line's worktree creation in the same repository.
//!
//! The git CLI calls take a cancellation token (a line's, or the daemon's `shutdown`): a stop
//! ends a long or hung call (a merge whose hook hangs, a checkout through a slow filter) with
//! [`Error::GitCancelled`], by SIGTERM first so that git removes its lock files. What puts
//! things back runs to its end instead, because a stop waits for that bookkeeping and half a
//! rollback is worse than a late one: [`reset_to`], removing a scratch or half-made worktree,
//! and moving main once the merged code is green.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::exec::{self, Spec};
use crate::{Error, Result};

/// The per-repository locks.
#[derive(Debug, Default, Clone)]
pub struct Locks {
    // std Mutex: held only to look up the entry, never across an await.
    inner: Arc<Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>>,
}

impl Locks {
    /// The lock of `repo` (held across the git commands of one operation).
    pub fn of(&self, repo: &Path) -> Arc<tokio::sync::Mutex<()>> {
        let key = repo.canonicalize().unwrap_or_else(|_| repo.to_path_buf());
        self.inner
            .lock()
            .expect("lock map poisoned")
            .entry(key)
            .or_default()
            .clone()
    }
}

/// Identity for commits when the repository has none.
#[derive(Debug, Clone)]
pub struct Identity {
    pub name: String,
    pub email: String,
}

fn git_err(repo: &Path, message: impl Into<String>) -> Error {
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
async fn git_raw(dir: &Path, args: &[&str], cancel: &CancellationToken) -> Result<exec::Output> {
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

/// The commit `branch` points at in `repo` (git2).
///
/// # Errors
/// [`Error::Git`] when the repository or branch cannot be read.
pub async fn branch_head(repo: &Path, branch: &str) -> Result<String> {
    let repo = repo.to_path_buf();
    let branch = branch.to_string();
    blocking(move || {
        let r = git2::Repository::open(&repo).map_err(|e| git_err(&repo, e.message()))?;
        let oid = r
            .refname_to_id(&format!("refs/heads/{branch}"))
            .map_err(|e| git_err(&repo, format!("branch {branch}: {}", e.message())))?;
        Ok(oid.to_string())
    })
    .await
}

/// A file's text at `rev` (e.g. `main:.conveyor.toml`); `None` when the file is not there.
///
/// # Errors
/// [`Error::Git`] when the repository cannot be read.
pub async fn read_file_at(repo: &Path, commit: &str, path: &str) -> Result<Option<String>> {
    let repo = repo.to_path_buf();
    let commit = commit.to_string();
    let path = path.to_string();
    blocking(move || {
        let r = git2::Repository::open(&repo).map_err(|e| git_err(&repo, e.message()))?;
        let oid = git2::Oid::from_str(&commit).map_err(|e| git_err(&repo, e.message()))?;
        let tree = r
            .find_commit(oid)
            .and_then(|c| c.tree())
            .map_err(|e| git_err(&repo, e.message()))?;
        let Ok(entry) = tree.get_path(Path::new(&path)) else {
            return Ok(None);
        };
        let blob = r
            .find_blob(entry.id())
            .map_err(|e| git_err(&repo, e.message()))?;
        Ok(Some(String::from_utf8_lossy(blob.content()).into_owned()))
    })
    .await
}

/// How many commits `branch` has that `main` lacks (git2).
///
/// # Errors
/// [`Error::Git`] when either ref cannot be read.
pub async fn commits_not_in(repo: &Path, branch: &str, main: &str) -> Result<usize> {
    let repo = repo.to_path_buf();
    let branch = branch.to_string();
    let main = main.to_string();
    blocking(move || {
        let r = git2::Repository::open(&repo).map_err(|e| git_err(&repo, e.message()))?;
        let b = r
            .refname_to_id(&format!("refs/heads/{branch}"))
            .map_err(|e| git_err(&repo, format!("{branch}: {}", e.message())))?;
        let m = r
            .refname_to_id(&format!("refs/heads/{main}"))
            .map_err(|e| git_err(&repo, format!("{main}: {}", e.message())))?;
        let (ahead, _) = r
            .graph_ahead_behind(b, m)
            .map_err(|e| git_err(&repo, e.message()))?;
        Ok(ahead)
    })
    .await
}

/// What `branch` changes against the main commit it forked from: the first commit of the
/// branch's first-parent history that is also on main's first-parent history. Merges into
/// main are merge commits, so a merged line still shows its own change. `None` when the
/// branch does not exist. `cancel` stops it between two files.
///
/// # Errors
/// [`Error::Git`] when the repository cannot be read; [`Error::GitCancelled`].
pub async fn line_diff(
    repo: &Path,
    main: &str,
    branch: &str,
    cancel: &CancellationToken,
) -> Result<Option<(String, String, Vec<conveyor_api::FileDiff>)>> {
    let repo = repo.to_path_buf();
    let (main, branch) = (main.to_string(), branch.to_string());
    let cancel = cancel.clone();
    blocking(move || {
        let r = git2::Repository::open(&repo).map_err(|e| git_err(&repo, e.message()))?;
        let Ok(head) = r.refname_to_id(&format!("refs/heads/{branch}")) else {
            return Ok(None);
        };
        let main_id = r
            .refname_to_id(&format!("refs/heads/{main}"))
            .map_err(|e| git_err(&repo, format!("branch {main}: {}", e.message())))?;
        let first_parents = |from: git2::Oid| -> Result<Vec<git2::Oid>> {
            let mut walk = r.revwalk().map_err(|e| git_err(&repo, e.message()))?;
            walk.simplify_first_parent()
                .and_then(|()| walk.push(from))
                .map_err(|e| git_err(&repo, e.message()))?;
            walk.map(|o| o.map_err(|e| git_err(&repo, e.message())))
                .collect()
        };
        let on_main: std::collections::HashSet<git2::Oid> =
            first_parents(main_id)?.into_iter().collect();
        let base = first_parents(head)?
            .into_iter()
            .find(|o| on_main.contains(o))
            .unwrap_or(head);
        let tree = |o: git2::Oid| {
            r.find_commit(o)
                .and_then(|c| c.tree())
                .map_err(|e| git_err(&repo, e.message()))
        };
        let mut opts = git2::DiffOptions::new();
        opts.context_lines(3);
        let mut diff = r
            .diff_tree_to_tree(Some(&tree(base)?), Some(&tree(head)?), Some(&mut opts))
            .map_err(|e| git_err(&repo, e.message()))?;
        diff.find_similar(None)
            .map_err(|e| git_err(&repo, e.message()))?;
        let mut files = Vec::new();
        for i in 0..diff.deltas().len() {
            if cancel.is_cancelled() {
                return Err(Error::GitCancelled {
                    repo: repo.clone(),
                    command: format!("diff {main}...{branch}"),
                });
            }
            let Some(delta) = diff.get_delta(i) else {
                continue;
            };
            let path = delta
                .new_file()
                .path()
                .or_else(|| delta.old_file().path())
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            let change = match delta.status() {
                git2::Delta::Added => conveyor_api::FileChange::Added,
                git2::Delta::Deleted => conveyor_api::FileChange::Deleted,
                git2::Delta::Renamed => conveyor_api::FileChange::Renamed,
                _ => conveyor_api::FileChange::Modified,
            };
            let mut patch_text = String::new();
            let mut binary = delta.flags().is_binary();
            if let Ok(Some(mut patch)) = git2::Patch::from_diff(&diff, i) {
                binary |= patch.delta().flags().is_binary();
                if !binary {
                    let buf = patch.to_buf().map_err(|e| git_err(&repo, e.message()))?;
                    let text = String::from_utf8_lossy(&buf);
                    // Keep the hunks: drop the `diff --git`, index and ---/+++ header lines.
                    if let Some(at) = text.find("\n@@") {
                        patch_text = text[at + 1..].to_string();
                    }
                }
            }
            files.push(conveyor_api::FileDiff {
                path,
                change,
                patch: patch_text,
                binary,
            });
        }
        Ok(Some((base.to_string(), head.to_string(), files)))
    })
    .await
}

/// Whether `branch` exists in `repo`.
pub async fn branch_exists(repo: &Path, branch: &str) -> bool {
    branch_head(repo, branch).await.is_ok()
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Error::Internal(format!("git task: {e}")))?
}

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

/// `-c user.name=… -c user.email=…` when the repository has no identity of its own.
async fn identity_args(dir: &Path, id: &Identity, cancel: &CancellationToken) -> Vec<String> {
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

mod merge;

pub use merge::{
    Checkout, Merge, MergeOutcome, Regression, Reverted, checkout_of, drop_scratch,
    merge_into_main, revert_on_main, scratch_at,
};

#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    use crate::exec::testing::fifo;

    /// `git` that is never cancelled.
    pub(crate) async fn run(dir: &Path, args: &[&str]) -> String {
        git(dir, args, &CancellationToken::new()).await.unwrap()
    }

    pub(crate) async fn repo_with_main(dir: &Path) {
        for a in [
            vec!["init", "-q", "-b", "main"],
            vec!["config", "user.name", "t"],
            vec!["config", "user.email", "t@t"],
        ] {
            run(dir, &a).await;
        }
        std::fs::write(dir.join("a.txt"), "a\n").unwrap();
        run(dir, &["add", "-A"]).await;
        run(dir, &["commit", "-qm", "init"]).await;
    }

    /// Makes the repository's hook `name` say so on a pipe and then hang; returns the pipe.
    pub(crate) async fn hanging_hook(dir: &Path, repo: &Path, name: &str) -> PathBuf {
        let hooks = dir.join("hooks");
        std::fs::create_dir_all(&hooks).unwrap();
        let ready = fifo(&dir.join(format!("{name}.ready")));
        let hook = hooks.join(name);
        std::fs::write(
            &hook,
            format!("#!/bin/sh\necho > '{}'\nexec sleep 600\n", ready.display()),
        )
        .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        run(
            repo,
            &["config", "core.hooksPath", &hooks.to_string_lossy()],
        )
        .await;
        ready
    }

    /// Awaits a stopped git operation: it must end soon (its hook sleeps 600 s).
    pub(crate) async fn stopped<T: std::fmt::Debug>(
        task: tokio::task::JoinHandle<Result<T>>,
    ) -> Error {
        tokio::time::timeout(Duration::from_secs(30), task)
            .await
            .expect("the stopped git call ended promptly")
            .unwrap()
            .unwrap_err()
    }

    /// A repository with main under `dir`, and a worktree of a new branch `branch` from it:
    /// (repository, locks, main's head, worktree).
    pub(crate) async fn line_worktree(
        dir: &Path,
        branch: &str,
    ) -> (PathBuf, Locks, String, PathBuf) {
        let repo = dir.join("repo");
        std::fs::create_dir(&repo).unwrap();
        repo_with_main(&repo).await;
        let locks = Locks::default();
        let base = branch_head(&repo, "main").await.unwrap();
        let wt = dir.join("wt");
        add_worktree(&locks, &repo, &wt, branch, &base, &CancellationToken::new())
            .await
            .unwrap();
        (repo, locks, base, wt)
    }

    /// A regression in the merged worktree: `cmd` through `sh -c`, red with its output.
    pub(crate) async fn shell(cmd: &str, merged: &Path) -> Result<Regression> {
        let out = exec::run(
            &Spec::shell(cmd, merged),
            Duration::from_secs(30),
            &CancellationToken::new(),
        )
        .await?;
        Ok(if out.code == Some(0) {
            Regression::Green
        } else {
            Regression::Red {
                output: out.tail(3000),
            }
        })
    }

    pub(crate) fn id() -> Identity {
        Identity {
            name: "c".into(),
            email: "c@c".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;
    use crate::exec::testing::reached;

    #[tokio::test]
    async fn worktree_checkpoint_reset_and_merge() {
        let d = tempfile::tempdir().unwrap();
        let (repo, locks, base, wt) = line_worktree(d.path(), "line/x").await;
        std::fs::write(wt.join("b.txt"), "b\n").unwrap();
        let cp = checkpoint(&wt, &id(), "step 1", &CancellationToken::new())
            .await
            .unwrap();
        assert_ne!(cp, base);
        std::fs::write(wt.join("a.txt"), "broken\n").unwrap();
        std::fs::write(wt.join("junk.txt"), "junk\n").unwrap();
        reset_to(&wt, &cp).await.unwrap();
        assert_eq!(std::fs::read_to_string(wt.join("a.txt")).unwrap(), "a\n");
        assert!(!wt.join("junk.txt").exists());
        assert_eq!(commits_not_in(&repo, "line/x", "main").await.unwrap(), 1);
        let scratch = d.path().join("scratch");
        let out = merge_into_main(
            &Merge {
                locks: &locks,
                repo: &repo,
                main: "main",
                branch: "line/x",
                scratch: &scratch,
                identity: &id(),
                message: "merge line/x",
                cancel: &CancellationToken::new(),
            },
            || shell("test -f b.txt", &scratch),
        )
        .await
        .unwrap();
        assert!(matches!(out, MergeOutcome::Merged { .. }), "{out:?}");
        assert_eq!(commits_not_in(&repo, "line/x", "main").await.unwrap(), 0);
        // The clean checkout of main followed.
        assert!(repo.join("b.txt").exists());
        assert!(!scratch.exists());
    }

    #[tokio::test]
    async fn a_cancelled_git_call_stops_promptly_and_leaves_no_lock() {
        let d = tempfile::tempdir().unwrap();
        let repo = d.path().join("repo");
        std::fs::create_dir(&repo).unwrap();
        repo_with_main(&repo).await;
        let cancel = CancellationToken::new();
        // Cancelled before: git is not started.
        let before = CancellationToken::new();
        before.cancel();
        let e = git(&repo, &["status"], &before).await.unwrap_err();
        assert!(matches!(e, Error::GitCancelled { ref command, .. } if command == "status"));
        // Cancelled while git holds the index lock and its hook hangs.
        let ready = hanging_hook(d.path(), &repo, "pre-commit").await;
        std::fs::write(repo.join("a.txt"), "changed\n").unwrap();
        let commit = tokio::spawn({
            let (repo, cancel) = (repo.clone(), cancel.clone());
            async move { git(&repo, &["commit", "-a", "-qm", "x"], &cancel).await }
        });
        reached(&ready).await;
        assert!(repo.join(".git/index.lock").exists(), "git holds the lock");
        cancel.cancel();
        let e = stopped(commit).await;
        assert!(
            matches!(e, Error::GitCancelled { ref command, .. } if command == "commit -a -qm x"),
            "{e:?}"
        );
        assert!(e.to_string().contains("stopped"), "{e}");
        assert!(
            !repo.join(".git/index.lock").exists(),
            "SIGTERM let git unlock"
        );
        assert_eq!(
            run(&repo, &["rev-list", "--count", "HEAD"]).await.trim(),
            "1"
        );
    }

    #[tokio::test]
    async fn a_cancelled_worktree_is_not_left_half_made() {
        let d = tempfile::tempdir().unwrap();
        let repo = d.path().join("repo");
        std::fs::create_dir(&repo).unwrap();
        repo_with_main(&repo).await;
        let base = branch_head(&repo, "main").await.unwrap();
        let ready = hanging_hook(d.path(), &repo, "post-checkout").await;
        let (locks, wt, cancel) = (
            Locks::default(),
            d.path().join("wt"),
            CancellationToken::new(),
        );
        let add = tokio::spawn({
            let (locks, repo, wt, base, cancel) = (
                locks.clone(),
                repo.clone(),
                wt.clone(),
                base.clone(),
                cancel.clone(),
            );
            async move { add_worktree(&locks, &repo, &wt, "line/z", &base, &cancel).await }
        });
        reached(&ready).await;
        cancel.cancel();
        assert!(matches!(stopped(add).await, Error::GitCancelled { .. }));
        assert!(!wt.exists());
        run(&repo, &["config", "--unset", "core.hooksPath"]).await;
        add_worktree(
            &locks,
            &repo,
            &wt,
            "line/z",
            &base,
            &CancellationToken::new(),
        )
        .await
        .unwrap();
        assert!(wt.join("a.txt").exists());
    }
}
