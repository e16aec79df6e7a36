//! Repositories, hanging hooks and stopped calls for the tests of git and of what uses it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{Identity, Locks, Regression, add_worktree, branch_head, git};
use crate::error::{Error, Result};
use crate::exec::testing::fifo;
use crate::exec::{self, Spec};

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
pub(crate) async fn stopped<T: std::fmt::Debug>(task: tokio::task::JoinHandle<Result<T>>) -> Error {
    tokio::time::timeout(Duration::from_secs(30), task)
        .await
        .expect("the stopped git call ended promptly")
        .unwrap()
        .unwrap_err()
}

/// A repository with main under `dir`, and a worktree of a new branch `branch` from it:
/// (repository, locks, main's head, worktree).
pub(crate) async fn line_worktree(dir: &Path, branch: &str) -> (PathBuf, Locks, String, PathBuf) {
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
