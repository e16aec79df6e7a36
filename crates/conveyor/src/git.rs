//! Git: git2 for reads (refs, blobs, ancestry), the git CLI for worktrees, commits, resets and
//! merges, where git2 is awkward. Every writing operation on a repository holds that
//! repository's lock, so two lines of different projects never fight, and the merge of one
//! line never races another line's worktree creation in the same repository.

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

/// Runs `git args…` in `dir`; returns stdout, or an error quoting stderr.
pub async fn git(dir: &Path, args: &[&str]) -> Result<String> {
    let out = git_raw(dir, args).await?;
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

async fn git_raw(dir: &Path, args: &[&str]) -> Result<exec::Output> {
    // The daemon's git runs on worktrees an agent user may own (`root_mode = { user = … }`):
    // git's ownership check ("dubious ownership") must not stop it.
    let spec = Spec::new("git", dir)
        .args(["-c", "safe.directory=*"])
        .args(args.iter().copied())
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C");
    exec::run(&spec, Duration::from_secs(600), &CancellationToken::new()).await
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
/// branch does not exist.
///
/// # Errors
/// [`Error::Git`] when the repository cannot be read.
pub async fn line_diff(
    repo: &Path,
    main: &str,
    branch: &str,
) -> Result<Option<(String, String, Vec<conveyor_api::FileDiff>)>> {
    let repo = repo.to_path_buf();
    let (main, branch) = (main.to_string(), branch.to_string());
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

/// Paths changed between two commits (git2).
///
/// # Errors
/// [`Error::Git`].
pub async fn changed_paths(repo: &Path, from: &str, to: &str) -> Result<Vec<String>> {
    let repo = repo.to_path_buf();
    let from = from.to_string();
    let to = to.to_string();
    blocking(move || {
        let r = git2::Repository::open(&repo).map_err(|e| git_err(&repo, e.message()))?;
        let tree = |rev: &str| {
            git2::Oid::from_str(rev)
                .and_then(|o| r.find_commit(o))
                .and_then(|c| c.tree())
                .map_err(|e| git_err(&repo, e.message()))
        };
        let diff = r
            .diff_tree_to_tree(Some(&tree(&from)?), Some(&tree(&to)?), None)
            .map_err(|e| git_err(&repo, e.message()))?;
        let mut out = Vec::new();
        for d in diff.deltas() {
            for f in [d.old_file().path(), d.new_file().path()]
                .into_iter()
                .flatten()
            {
                let s = f.to_string_lossy().into_owned();
                if !out.contains(&s) {
                    out.push(s);
                }
            }
        }
        Ok(out)
    })
    .await
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
/// [`Error::Git`] with git's message.
pub async fn add_worktree(
    locks: &Locks,
    repo: &Path,
    path: &Path,
    branch: &str,
    base: &str,
) -> Result<()> {
    let lock = locks.of(repo);
    let _g = lock.lock().await;
    if path.join(".git").exists() {
        return Ok(());
    }
    let _ = git(repo, &["worktree", "prune"]).await;
    let p = path.to_string_lossy().into_owned();
    if branch_exists(repo, branch).await {
        git(repo, &["worktree", "add", &p, branch]).await?;
    } else {
        git(repo, &["worktree", "add", "-b", branch, &p, base]).await?;
    }
    Ok(())
}

/// Removes the worktree at `path` and deletes `branch`.
///
/// # Errors
/// [`Error::Git`].
pub async fn remove_worktree(locks: &Locks, repo: &Path, path: &Path, branch: &str) -> Result<()> {
    let lock = locks.of(repo);
    let _g = lock.lock().await;
    if path.exists() {
        let p = path.to_string_lossy().into_owned();
        if git(repo, &["worktree", "remove", "--force", &p])
            .await
            .is_err()
        {
            let _ = std::fs::remove_dir_all(path);
        }
    }
    let _ = git(repo, &["worktree", "prune"]).await;
    if branch_exists(repo, branch).await {
        git(repo, &["branch", "-D", branch]).await?;
    }
    Ok(())
}

/// `-c user.name=… -c user.email=…` when the repository has no identity of its own.
async fn identity_args(dir: &Path, id: &Identity) -> Vec<String> {
    let has_name = git(dir, &["config", "user.name"]).await.is_ok();
    let has_email = git(dir, &["config", "user.email"]).await.is_ok();
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
/// [`Error::Git`].
pub async fn checkpoint(worktree: &Path, id: &Identity, message: &str) -> Result<String> {
    git(worktree, &["add", "-A"]).await?;
    let status = git(worktree, &["status", "--porcelain"]).await?;
    if !status.trim().is_empty() {
        let mut args = identity_args(worktree, id).await;
        args.extend([
            "commit".into(),
            "-q".into(),
            "--no-verify".into(),
            "-m".into(),
            message.into(),
        ]);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        git(worktree, &refs).await?;
    }
    Ok(git(worktree, &["rev-parse", "HEAD"])
        .await?
        .trim()
        .to_string())
}

/// Puts the worktree back at `commit`: tracked files reset, untracked ones removed (ignored
/// files such as build output are kept).
///
/// # Errors
/// [`Error::Git`].
pub async fn reset_to(worktree: &Path, commit: &str) -> Result<()> {
    git(worktree, &["reset", "-q", "--hard", commit]).await?;
    git(worktree, &["clean", "-q", "-fd"]).await?;
    Ok(())
}

/// What a merge into main came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeOutcome {
    /// Main now points at this commit.
    Merged { main: String },
    /// Nothing to merge: main already holds the branch.
    AlreadyMerged,
    /// The branch conflicts with main.
    Conflict { files: String },
    /// The regression command was red after the merge.
    Red { output: String },
    /// Main's checkout has uncommitted changes: it cannot be moved.
    DirtyCheckout { detail: String },
}

/// The merge the seed prescribes: take fresh main, merge the line's branch into it in a
/// separate worktree, run the regression command there, and only when it is green move main
/// forward by compare-and-swap (merging again when main moved meanwhile). A checkout of main in
/// the repository itself is fast-forwarded only when clean.
///
/// # Errors
/// [`Error::Git`] for failures other than the outcomes above.
#[allow(clippy::too_many_arguments)]
pub async fn merge_into_main(
    locks: &Locks,
    repo: &Path,
    main: &str,
    branch: &str,
    scratch: &Path,
    id: &Identity,
    message: &str,
    regression: Option<&str>,
    env: &std::collections::BTreeMap<String, String>,
    user: Option<&exec::AgentUser>,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<MergeOutcome> {
    for _round in 0..3 {
        let main_at = branch_head(repo, main).await?;
        if commits_not_in(repo, branch, main).await? == 0 {
            return Ok(MergeOutcome::AlreadyMerged);
        }
        // The scratch worktree, detached at fresh main.
        {
            let lock = locks.of(repo);
            let _g = lock.lock().await;
            if scratch.exists() {
                let s = scratch.to_string_lossy().into_owned();
                let _ = git(repo, &["worktree", "remove", "--force", &s]).await;
                let _ = std::fs::remove_dir_all(scratch);
            }
            let _ = git(repo, &["worktree", "prune"]).await;
            let s = scratch.to_string_lossy().into_owned();
            git(repo, &["worktree", "add", "--detach", &s, &main_at]).await?;
        }
        let mut args = identity_args(scratch, id).await;
        args.extend(
            ["merge", "--no-ff", "--no-edit", "-m", message, branch]
                .iter()
                .map(|s| s.to_string()),
        );
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let merged = git_raw(scratch, &refs).await?;
        if merged.code != Some(0) {
            let files = git(scratch, &["diff", "--name-only", "--diff-filter=U"])
                .await
                .unwrap_or_default();
            let _ = git(scratch, &["merge", "--abort"]).await;
            drop_scratch(locks, repo, scratch).await;
            let files = if files.trim().is_empty() {
                exec::tail(&merged.stdout, 1000)
            } else {
                files.trim().replace('\n', ", ")
            };
            return Ok(MergeOutcome::Conflict { files });
        }
        if let Some(cmd) = regression {
            let mut spec = Spec::shell(cmd, scratch);
            spec.env.extend(env.clone());
            // The merged code is the agent's: with an agent user it runs as that user.
            if let Some(u) = user {
                exec::chown_worktree(scratch, u.uid, u.gid)?;
                u.apply(&mut spec);
            }
            let out = exec::run(&spec, timeout, cancel).await?;
            if out.code != Some(0) {
                drop_scratch(locks, repo, scratch).await;
                return Ok(MergeOutcome::Red {
                    output: format!(
                        "`{cmd}` exited {} after the merge:\n{}",
                        out.code.map_or("by a signal".into(), |c| c.to_string()),
                        out.tail(3000)
                    ),
                });
            }
        }
        let new = git(scratch, &["rev-parse", "HEAD"])
            .await?
            .trim()
            .to_string();
        let moved = {
            let lock = locks.of(repo);
            let _g = lock.lock().await;
            move_main(repo, main, &main_at, &new).await?
        };
        drop_scratch(locks, repo, scratch).await;
        match moved {
            Moved::Yes => return Ok(MergeOutcome::Merged { main: new }),
            Moved::Raced => continue,
            Moved::Dirty(detail) => return Ok(MergeOutcome::DirtyCheckout { detail }),
        }
    }
    Err(git_err(
        repo,
        format!("{main} kept moving during the merge"),
    ))
}

enum Moved {
    Yes,
    Raced,
    Dirty(String),
}

/// Moves `main` from `old` to `new` by compare-and-swap; a checkout of main is updated only
/// when it is clean.
async fn move_main(repo: &Path, main: &str, old: &str, new: &str) -> Result<Moved> {
    let head = git(repo, &["symbolic-ref", "-q", "HEAD"]).await.ok();
    let bare = git(repo, &["rev-parse", "--is-bare-repository"])
        .await
        .map(|s| s.trim() == "true")
        .unwrap_or(false);
    let checked_out =
        !bare && head.as_deref().map(str::trim) == Some(&format!("refs/heads/{main}"));
    if checked_out {
        let status = git(repo, &["status", "--porcelain", "--untracked-files=no"]).await?;
        if !status.trim().is_empty() {
            return Ok(Moved::Dirty(format!(
                "the checkout of {main} in {} has uncommitted changes: {}",
                repo.display(),
                exec::tail(status.trim(), 500)
            )));
        }
    }
    let r = git_raw(
        repo,
        &[
            "update-ref",
            "-m",
            "conveyor merge",
            &format!("refs/heads/{main}"),
            new,
            old,
        ],
    )
    .await?;
    if r.code != Some(0) {
        return Ok(Moved::Raced);
    }
    if checked_out {
        // Bring the clean checkout's index and files from `old` to `new`.
        git(repo, &["read-tree", "-u", "-m", old, new]).await?;
    }
    Ok(Moved::Yes)
}

async fn drop_scratch(locks: &Locks, repo: &Path, scratch: &Path) {
    let lock = locks.of(repo);
    let _g = lock.lock().await;
    let s = scratch.to_string_lossy().into_owned();
    let _ = git(repo, &["worktree", "remove", "--force", &s]).await;
    let _ = std::fs::remove_dir_all(scratch);
    let _ = git(repo, &["worktree", "prune"]).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn repo_with_main(dir: &Path) {
        for a in [
            vec!["init", "-q", "-b", "main"],
            vec!["config", "user.name", "t"],
            vec!["config", "user.email", "t@t"],
        ] {
            git(dir, &a).await.unwrap();
        }
        std::fs::write(dir.join("a.txt"), "a\n").unwrap();
        git(dir, &["add", "-A"]).await.unwrap();
        git(dir, &["commit", "-qm", "init"]).await.unwrap();
    }

    /// A repository with main under `dir`, and a worktree of a new branch `branch` from it:
    /// (repository, locks, main's head, worktree).
    async fn line_worktree(dir: &Path, branch: &str) -> (PathBuf, Locks, String, PathBuf) {
        let repo = dir.join("repo");
        std::fs::create_dir(&repo).unwrap();
        repo_with_main(&repo).await;
        let locks = Locks::default();
        let base = branch_head(&repo, "main").await.unwrap();
        let wt = dir.join("wt");
        add_worktree(&locks, &repo, &wt, branch, &base)
            .await
            .unwrap();
        (repo, locks, base, wt)
    }

    fn id() -> Identity {
        Identity {
            name: "c".into(),
            email: "c@c".into(),
        }
    }

    #[tokio::test]
    async fn worktree_checkpoint_reset_and_merge() {
        let d = tempfile::tempdir().unwrap();
        let (repo, locks, base, wt) = line_worktree(d.path(), "line/x").await;
        std::fs::write(wt.join("b.txt"), "b\n").unwrap();
        let cp = checkpoint(&wt, &id(), "step 1").await.unwrap();
        assert_ne!(cp, base);
        std::fs::write(wt.join("a.txt"), "broken\n").unwrap();
        std::fs::write(wt.join("junk.txt"), "junk\n").unwrap();
        reset_to(&wt, &cp).await.unwrap();
        assert_eq!(std::fs::read_to_string(wt.join("a.txt")).unwrap(), "a\n");
        assert!(!wt.join("junk.txt").exists());
        assert_eq!(commits_not_in(&repo, "line/x", "main").await.unwrap(), 1);
        let scratch = d.path().join("scratch");
        let out = merge_into_main(
            &locks,
            &repo,
            "main",
            "line/x",
            &scratch,
            &id(),
            "merge line/x",
            Some("test -f b.txt"),
            &Default::default(),
            None,
            Duration::from_secs(30),
            &CancellationToken::new(),
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
    async fn red_regression_leaves_main_alone() {
        let d = tempfile::tempdir().unwrap();
        let (repo, locks, base, wt) = line_worktree(d.path(), "line/y").await;
        std::fs::write(wt.join("c.txt"), "c\n").unwrap();
        checkpoint(&wt, &id(), "step").await.unwrap();
        let out = merge_into_main(
            &locks,
            &repo,
            "main",
            "line/y",
            &d.path().join("s"),
            &id(),
            "m",
            Some("echo nope; exit 1"),
            &Default::default(),
            None,
            Duration::from_secs(30),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
        assert!(matches!(out, MergeOutcome::Red { ref output } if output.contains("nope")));
        assert_eq!(branch_head(&repo, "main").await.unwrap(), base);
    }
}
