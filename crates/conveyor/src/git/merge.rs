//! The merge of a line into fresh main: in a scratch worktree of main, the regression run on
//! the merged code by the caller's closure, then main moved by compare-and-swap of its ref
//! (merged again when main moved meanwhile).

use std::path::Path;

use tokio_util::sync::CancellationToken;

use super::cli::{Identity, git, git_err, git_raw, identity_args};
use super::locks::Locks;
use super::read::{branch_head, commits_not_in};
use crate::error::{Error, Result};
use crate::exec;

/// What a merge into main came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeOutcome {
    /// Main now points at this commit.
    Merged { main: String },
    /// Nothing to merge: main already holds the branch.
    AlreadyMerged,
    /// The branch conflicts with main.
    Conflict { files: String },
    /// The regression was red after the merge.
    Red { output: String },
    /// Main's checkout has uncommitted changes: it cannot be moved.
    DirtyCheckout { detail: String },
}

/// A merge of a line's branch into main: see [`merge_into_main`].
#[derive(Debug, Clone, Copy)]
pub struct Merge<'a> {
    pub locks: &'a Locks,
    pub repo: &'a Path,
    /// The branch that moves (`main`).
    pub main: &'a str,
    /// The line's branch.
    pub branch: &'a str,
    /// Where the merge is made and checked: made afresh at main's head, removed afterwards.
    pub scratch: &'a Path,
    /// Used when the repository has no identity of its own.
    pub identity: &'a Identity,
    /// The merge commit's message.
    pub message: &'a str,
    pub cancel: &'a CancellationToken,
}

/// What the regression said of the merged code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Regression {
    Green,
    /// Red, with what to tell the fixer.
    Red {
        output: String,
    },
}

/// The merge the seed prescribes: take fresh main, merge the line's branch into it in a
/// separate worktree (`m.scratch`), let `regression` judge the merged code there, and only
/// when it is green move main forward by compare-and-swap (merging again when main moved
/// meanwhile). A checkout of main in the repository itself is fast-forwarded only when clean.
/// `m.cancel` stops the git calls up to the green regression (stopping the regression is the
/// caller's); moving main, once begun, runs to its end.
///
/// # Errors
/// [`Error::Git`] for failures other than the outcomes above; [`Error::GitCancelled`], the
/// scratch worktree removed; `regression`'s own errors.
pub async fn merge_into_main<F: Future<Output = Result<Regression>>>(
    m: &Merge<'_>,
    mut regression: impl FnMut() -> F,
) -> Result<MergeOutcome> {
    let out = merge_rounds(m, &mut regression).await;
    if let Err(Error::GitCancelled { .. }) = out {
        drop_scratch(m.locks, m.repo, m.scratch).await;
    }
    out
}

async fn merge_rounds<F: Future<Output = Result<Regression>>>(
    m: &Merge<'_>,
    regression: &mut impl FnMut() -> F,
) -> Result<MergeOutcome> {
    let Merge {
        locks,
        repo,
        main,
        branch,
        scratch,
        identity,
        message,
        cancel,
    } = *m;
    for _round in 0..3 {
        let main_at = branch_head(repo, main).await?;
        if commits_not_in(repo, branch, main).await? == 0 {
            return Ok(MergeOutcome::AlreadyMerged);
        }
        // The scratch worktree, detached at fresh main.
        scratch_at(locks, repo, scratch, &main_at, cancel).await?;
        let mut args = identity_args(scratch, identity, cancel).await;
        args.extend(
            ["merge", "--no-ff", "--no-edit", "-m", message, branch]
                .iter()
                .map(|s| s.to_string()),
        );
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let merged = git_raw(scratch, &refs, cancel).await?;
        if merged.code != Some(0) {
            let files = git(scratch, &["diff", "--name-only", "--diff-filter=U"], cancel)
                .await
                .unwrap_or_default();
            let _ = git(scratch, &["merge", "--abort"], cancel).await;
            drop_scratch(locks, repo, scratch).await;
            let files = if files.trim().is_empty() {
                exec::tail(&merged.stdout, 1000)
            } else {
                files.trim().replace('\n', ", ")
            };
            return Ok(MergeOutcome::Conflict { files });
        }
        if let Regression::Red { output } = regression().await? {
            drop_scratch(locks, repo, scratch).await;
            return Ok(MergeOutcome::Red { output });
        }
        let (new, moved) = move_to_scratch_head(m, &main_at).await?;
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

/// Moves main from `main_at` to the scratch worktree's head (compare-and-swap, under the
/// repository's lock) and removes the scratch worktree; the head and how the move went.
async fn move_to_scratch_head(m: &Merge<'_>, main_at: &str) -> Result<(String, Moved)> {
    let new = git(m.scratch, &["rev-parse", "HEAD"], m.cancel)
        .await?
        .trim()
        .to_string();
    let moved = {
        let lock = m.locks.of(m.repo);
        let _g = lock.lock().await;
        move_main(m.repo, m.main, main_at, &new).await?
    };
    drop_scratch(m.locks, m.repo, m.scratch).await;
    Ok((new, moved))
}

/// How a revert on main ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reverted {
    /// Main now points at the revert commit.
    Yes { main: String },
    /// The revert does not apply to main as it is now (later work touches the same lines).
    Conflict { detail: String },
    /// Main's checkout has uncommitted changes.
    DirtyCheckout { detail: String },
}

/// Reverts the merge commit `merge` on main with a revert commit (never a history rewrite): in
/// a scratch worktree of fresh main, then main moves by compare-and-swap, as a merge does.
///
/// # Errors
/// Git errors; main moving on every try.
pub async fn revert_on_main(m: &Merge<'_>, merge: &str) -> Result<Reverted> {
    let Merge {
        locks,
        repo,
        main,
        scratch,
        identity,
        message,
        cancel,
        ..
    } = *m;
    for _round in 0..3 {
        let main_at = branch_head(repo, main).await?;
        scratch_at(locks, repo, scratch, &main_at, cancel).await?;
        let mut args = identity_args(scratch, identity, cancel).await;
        args.extend(
            ["revert", "--no-edit", "-m", "1", merge]
                .iter()
                .map(|s| s.to_string()),
        );
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = git_raw(scratch, &refs, cancel).await?;
        if out.code != Some(0) {
            let _ = git(scratch, &["revert", "--abort"], cancel).await;
            drop_scratch(locks, repo, scratch).await;
            return Ok(Reverted::Conflict {
                detail: exec::tail(&format!("{}{}", out.stdout, out.stderr), 1000),
            });
        }
        let _ = git(scratch, &["commit", "--amend", "-m", message], cancel).await;
        let (new, moved) = move_to_scratch_head(m, &main_at).await?;
        match moved {
            Moved::Yes => return Ok(Reverted::Yes { main: new }),
            Moved::Raced => continue,
            Moved::Dirty(detail) => return Ok(Reverted::DirtyCheckout { detail }),
        }
    }
    Err(git_err(
        repo,
        format!("{main} kept moving during the revert"),
    ))
}

/// Whether `main` is checked out in the repository itself, and if so whether it is clean.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checkout {
    /// Bare, or another branch checked out: moving main touches no files.
    NotCheckedOut,
    Clean,
    /// Uncommitted changes to tracked files: main cannot move under them (what they are).
    Dirty(String),
}

/// The state of main's checkout: what the merge checks before it moves main, and what the
/// preflight reports ahead of it.
///
/// # Errors
/// When git cannot tell the status of a checked-out main.
pub async fn checkout_of(repo: &Path, main: &str) -> Result<Checkout> {
    let to_the_end = &CancellationToken::new();
    let head = git(repo, &["symbolic-ref", "-q", "HEAD"], to_the_end)
        .await
        .ok();
    let bare = git(repo, &["rev-parse", "--is-bare-repository"], to_the_end)
        .await
        .map(|s| s.trim() == "true")
        .unwrap_or(false);
    if bare || head.as_deref().map(str::trim) != Some(&format!("refs/heads/{main}")) {
        return Ok(Checkout::NotCheckedOut);
    }
    let status = git(
        repo,
        &["status", "--porcelain", "--untracked-files=no"],
        to_the_end,
    )
    .await?;
    if status.trim().is_empty() {
        return Ok(Checkout::Clean);
    }
    Ok(Checkout::Dirty(format!(
        "the checkout of {main} in {} has uncommitted changes: {}",
        repo.display(),
        exec::tail(status.trim(), 500)
    )))
}

enum Moved {
    Yes,
    Raced,
    Dirty(String),
}

/// Moves `main` from `old` to `new` by compare-and-swap; a checkout of main is updated only
/// when it is clean. Never cancelled: a stop between the ref and the checkout would leave the
/// checkout behind its branch.
async fn move_main(repo: &Path, main: &str, old: &str, new: &str) -> Result<Moved> {
    let to_the_end = &CancellationToken::new();
    let checked_out = match checkout_of(repo, main).await? {
        Checkout::Dirty(detail) => return Ok(Moved::Dirty(detail)),
        Checkout::Clean => true,
        Checkout::NotCheckedOut => false,
    };
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
        to_the_end,
    )
    .await?;
    if r.code != Some(0) {
        return Ok(Moved::Raced);
    }
    if checked_out {
        // Bring the clean checkout's index and files from `old` to `new`.
        git(repo, &["read-tree", "-u", "-m", old, new], to_the_end).await?;
    }
    Ok(Moved::Yes)
}

/// Removes the scratch worktree; runs to its end (it is what a stopped merge leaves).
/// A scratch worktree at `scratch`, detached at `commit` (one left there before goes first).
///
/// # Errors
/// [`Error::Git`]; [`Error::GitCancelled`].
pub async fn scratch_at(
    locks: &Locks,
    repo: &Path,
    scratch: &Path,
    commit: &str,
    cancel: &CancellationToken,
) -> Result<()> {
    let lock = locks.of(repo);
    let _g = lock.lock().await;
    if scratch.exists() {
        let s = scratch.to_string_lossy().into_owned();
        let _ = git(repo, &["worktree", "remove", "--force", &s], cancel).await;
        let _ = std::fs::remove_dir_all(scratch);
    }
    let _ = git(repo, &["worktree", "prune"], cancel).await;
    let s = scratch.to_string_lossy().into_owned();
    git(repo, &["worktree", "add", "--detach", &s, commit], cancel)
        .await
        .map(drop)
}

/// Removes a scratch worktree (whatever state it is in).
pub async fn drop_scratch(locks: &Locks, repo: &Path, scratch: &Path) {
    let lock = locks.of(repo);
    let _g = lock.lock().await;
    let to_the_end = CancellationToken::new();
    let s = scratch.to_string_lossy().into_owned();
    let _ = git(repo, &["worktree", "remove", "--force", &s], &to_the_end).await;
    let _ = std::fs::remove_dir_all(scratch);
    let _ = git(repo, &["worktree", "prune"], &to_the_end).await;
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::super::worktree::checkpoint;
    use super::*;
    use crate::exec::testing::reached;

    #[tokio::test]
    async fn red_regression_leaves_main_alone() {
        let d = tempfile::tempdir().unwrap();
        let (repo, locks, base, wt) = line_worktree(d.path(), "line/y").await;
        let scratch = d.path().join("s");
        std::fs::write(wt.join("c.txt"), "c\n").unwrap();
        checkpoint(&wt, &id(), "step", &CancellationToken::new())
            .await
            .unwrap();
        let out = merge_into_main(
            &Merge {
                locks: &locks,
                repo: &repo,
                main: "main",
                branch: "line/y",
                scratch: &scratch,
                identity: &id(),
                message: "m",
                cancel: &CancellationToken::new(),
            },
            || shell("echo nope; exit 1", &scratch),
        )
        .await
        .unwrap();
        assert!(matches!(out, MergeOutcome::Red { ref output } if output.contains("nope")));
        assert_eq!(branch_head(&repo, "main").await.unwrap(), base);
    }

    #[tokio::test]
    async fn a_cancelled_merge_leaves_main_and_no_scratch() {
        let d = tempfile::tempdir().unwrap();
        let (repo, locks, base, wt) = line_worktree(d.path(), "line/w").await;
        std::fs::write(wt.join("w.txt"), "w\n").unwrap();
        checkpoint(&wt, &id(), "step", &CancellationToken::new())
            .await
            .unwrap();
        let ready = hanging_hook(d.path(), &repo, "pre-merge-commit").await;
        let (scratch, cancel) = (d.path().join("s"), CancellationToken::new());
        let merge = tokio::spawn({
            let (repo, scratch, cancel) = (repo.clone(), scratch.clone(), cancel.clone());
            async move {
                let m = Merge {
                    locks: &locks,
                    repo: &repo,
                    main: "main",
                    branch: "line/w",
                    scratch: &scratch,
                    identity: &id(),
                    message: "m",
                    cancel: &cancel,
                };
                merge_into_main(&m, || async {
                    Err(Error::Internal("a regression after a stopped merge".into()))
                })
                .await
            }
        });
        reached(&ready).await;
        cancel.cancel();
        assert!(matches!(stopped(merge).await, Error::GitCancelled { .. }));
        assert_eq!(branch_head(&repo, "main").await.unwrap(), base);
        assert!(!scratch.exists());
    }
}
