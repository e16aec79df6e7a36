//! Worktrees, checkpoints, resets and merges on real repositories, and stops that leave no
//! lock behind.

use tokio_util::sync::CancellationToken;

use super::testing::*;
use super::*;
use crate::error::Error;
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
