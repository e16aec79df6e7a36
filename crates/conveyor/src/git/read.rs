//! Reads through git2, on the blocking pool: a branch's head, a file at a commit, the commits a
//! branch has that main lacks, and a line's diff against the main commit it forked from.

use std::path::Path;

use tokio_util::sync::CancellationToken;

use super::cli::git_err;
use crate::error::{Error, Result};

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
