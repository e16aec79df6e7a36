//! The project's checklist (`.conveyor.toml`), always read from fresh main so an agent cannot
//! weaken its own gate, and where the line forked from main.

use std::path::{Path, PathBuf};

use conveyor_api::ReasonCode;
use tokio_util::sync::CancellationToken;

use crate::config::Checklist;
use crate::error::Result;
use crate::git;
use crate::state::Shared;
use crate::store::{self, LineRow};

/// The project's `.conveyor.toml` on fresh main does not parse: the line needs Anton.
#[derive(Debug, thiserror::Error)]
#[error("{source} (on {branch})")]
pub(crate) struct BadChecklist {
    source: crate::error::Error,
    branch: String,
}

/// The project's checklist from fresh main, with main's commit, the repository and main's name.
pub(crate) async fn checklist(
    sh: &Shared,
    line: &LineRow,
) -> Result<std::result::Result<(Checklist, String, PathBuf, String), BadChecklist>> {
    let project = store::projects::get(&mut *sh.store.conn().await?, &line.project_id)
        .await?
        .ok_or_else(|| crate::error::Error::Internal("line without project".into()))?;
    let repo = PathBuf::from(&project.repo_path);
    let main = git::branch_head(&repo, &project.main_branch).await?;
    let text = git::read_file_at(&repo, &main, ".conveyor.toml").await?;
    match text.map(|t| Checklist::parse(&t)).transpose() {
        Ok(c) => Ok(Ok((c.unwrap_or_default(), main, repo, project.main_branch))),
        Err(source) => Ok(Err(BadChecklist {
            source,
            branch: project.main_branch,
        })),
    }
}

/// The project's checklist from fresh main, or `None` once the line is stopped for Anton
/// because it does not parse (the line cannot be checked without it).
///
/// # Errors
/// Database and git errors.
pub(super) async fn checklist_or_stop(
    sh: &Shared,
    line: &LineRow,
) -> Result<Option<(Checklist, String, PathBuf, String)>> {
    match checklist(sh, line).await? {
        Ok(c) => Ok(Some(c)),
        Err(e) => {
            super::answer::needs_anton(sh, &line.id, (ReasonCode::ProjectConfig, &e.to_string()))
                .await?;
            Ok(None)
        }
    }
}

/// Where a line forked from main, and what it changed since.
#[derive(Debug, Clone)]
pub(super) struct Fork {
    pub base: String,
    pub files: Vec<conveyor_api::FileDiff>,
}

/// The line's fork point and files changed (none when its branch does not exist yet).
///
/// # Errors
/// Git errors.
pub(super) async fn fork_of(
    repo: &Path,
    main_branch: &str,
    line: &LineRow,
    cancel: &CancellationToken,
) -> Result<Fork> {
    Ok(
        match git::line_diff(repo, main_branch, &line.branch, cancel).await? {
            Some((base, _, files)) => Fork { base, files },
            None => Fork {
                base: git::branch_head(repo, main_branch).await?,
                files: Vec::new(),
            },
        },
    )
}
