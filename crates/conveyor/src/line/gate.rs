//! The gate and the merge: the project's regression and checklist (read from fresh main) in
//! the line's worktree, then the merge into fresh main in a separate worktree with the
//! regression again; a red gate or merge adds a fixer step, or stops the line after
//! [`GATE_ROUNDS`] in a row.

use std::path::{Path, PathBuf};

use conveyor_api::{Level, LineState, ReasonCode, StepKind};
use tokio_util::sync::CancellationToken;

use crate::Result;
use crate::config::{Check, Checklist};
use crate::exec;
use crate::git::{self, MergeOutcome, Regression};
use crate::state::Shared;
use crate::store::{self, LineRow};

use super::GATE_ROUNDS;
use super::checks::{exit_text, run_checks, run_command};

/// The project's `.conveyor.toml` on fresh main does not parse: the line needs Anton.
#[derive(Debug, thiserror::Error)]
#[error("{source} (on {branch})")]
pub(super) struct BadChecklist {
    source: crate::Error,
    branch: String,
}

/// The project's checklist from fresh main, with main's commit, the repository and main's name.
pub(super) async fn checklist(
    sh: &Shared,
    line: &LineRow,
) -> Result<std::result::Result<(Checklist, String, PathBuf, String), BadChecklist>> {
    let project = store::projects::get(&mut *sh.store.conn().await?, &line.project_id)
        .await?
        .ok_or_else(|| crate::Error::Internal("line without project".into()))?;
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

/// A red gate or merge: a fixer step with what failed, or Anton after three in a row.
async fn gate_failed(sh: &Shared, line: &LineRow, what: &str) -> Result<()> {
    let failures = line.gate_failures + 1;
    store::lines::set_gate_failures(&mut *sh.store.conn().await?, &line.id, failures).await?;
    if failures >= GATE_ROUNDS {
        return super::answer::needs_anton(
            sh,
            &line.id,
            (
                ReasonCode::GateFailed,
                &format!("the gate failed {failures} times in a row; last: {what}"),
            ),
        )
        .await;
    }
    store::steps::add(
        &mut *sh.store.conn().await?,
        &line.id,
        StepKind::Fixer,
        "fix what the gate found",
        &format!("The line's gate failed. Make it pass:\n{what}"),
        &[],
    )
    .await?;
    sh.set_line_state(
        &line.id,
        LineState::Fixing,
        Some((ReasonCode::GateRed, what)),
        None,
    )
    .await
}

/// All steps done: the regression command and the checklist (from fresh main) in the worktree.
pub(super) async fn gate(sh: &Shared, line: &LineRow, cancel: &CancellationToken) -> Result<()> {
    sh.set_line_state(&line.id, LineState::Gate, None, None)
        .await?;
    let (list, main, repo, _) = match checklist(sh, line).await? {
        Ok(c) => c,
        Err(e) => {
            return super::answer::needs_anton(
                sh,
                &line.id,
                (ReasonCode::ProjectConfig, &e.to_string()),
            )
            .await;
        }
    };
    for k in list.not_yet_read() {
        tracing::warn!(
            line = %line.id,
            file = ".conveyor.toml",
            main = %main,
            key = k.key,
            read_by = k.read_by,
            "checklist key accepted but not yet read: it has no effect until the feature that reads it exists"
        );
    }
    let worktree = PathBuf::from(line.worktree.clone().unwrap_or_default());
    // The level is raised mechanically by what the diff touches.
    let head = git::git(&worktree, &["rev-parse", "HEAD"], cancel)
        .await?
        .trim()
        .to_string();
    let touched = git::changed_paths(&repo, &main, &head)
        .await
        .unwrap_or_default();
    let mut full = touched.iter().any(|p| p == ".conveyor.toml");
    if !list.full_level_paths.is_empty() {
        let mut b = globset::GlobSetBuilder::new();
        for g in &list.full_level_paths {
            if let Ok(g) = globset::Glob::new(g) {
                b.add(g);
            }
        }
        if let Ok(set) = b.build() {
            full |= touched.iter().any(|p| set.is_match(p));
        }
    }
    if full && line.level != Some(Level::Full) {
        store::lines::set_level(&mut *sh.store.conn().await?, &line.id, Level::Full).await?;
    }
    let mut checks: Vec<Check> = Vec::new();
    if let Some(r) = &list.regression {
        checks.push(Check {
            cmd: r.clone(),
            expect_exit: 0,
        });
    }
    checks.extend(list.checklist.iter().cloned());
    let red = run_checks(sh, &line.id, &worktree, &checks, cancel).await?;
    if cancel.is_cancelled() {
        return Ok(());
    }
    if !red.is_empty() {
        return gate_failed(
            sh,
            line,
            &format!("gate red in the worktree:\n{}", red.join("\n")),
        )
        .await;
    }
    sh.set_line_state(&line.id, LineState::Merging, None, None)
        .await?;
    let fresh = store::lines::get(&mut *sh.store.conn().await?, &line.id)
        .await?
        .expect("line exists");
    merge(sh, &fresh, cancel).await
}

/// The regression command on the merged code, in the merge's scratch worktree `merged`; no
/// command is green.
async fn run_regression(
    sh: &Shared,
    line_id: &str,
    cmd: Option<&str>,
    merged: &Path,
    cancel: &CancellationToken,
) -> Result<Regression> {
    let Some(cmd) = cmd else {
        return Ok(Regression::Green);
    };
    // The merged code is the agent's: with an agent user it runs as that user.
    if let Some(u) = &sh.agent_user {
        exec::chown_worktree(merged, u.uid, u.gid)?;
    }
    let out = run_command(sh, line_id, cmd, merged, cancel).await?;
    if out.code != Some(0) {
        return Ok(Regression::Red {
            output: format!(
                "`{cmd}` exited {} after the merge:\n{}",
                exit_text(&out),
                out.tail(3000)
            ),
        });
    }
    Ok(Regression::Green)
}

/// Merge into fresh main in a separate worktree, regression after the merge, then main moves.
pub(super) async fn merge(sh: &Shared, line: &LineRow, cancel: &CancellationToken) -> Result<()> {
    let (list, _, repo, main_branch) = match checklist(sh, line).await? {
        Ok(c) => c,
        Err(e) => {
            return super::answer::needs_anton(
                sh,
                &line.id,
                (ReasonCode::ProjectConfig, &e.to_string()),
            )
            .await;
        }
    };
    let scratch = sh.cfg.data_dir.join("scratch").join(&line.id);
    let merge = git::Merge {
        locks: &sh.locks,
        repo: &repo,
        main: &main_branch,
        branch: &line.branch,
        scratch: &scratch,
        identity: &sh.identity(),
        message: &format!("Merge {}: {}", line.branch, line.title),
        cancel,
    };
    let regression = list.regression.as_deref();
    let out = git::merge_into_main(&merge, || {
        run_regression(sh, &line.id, regression, &scratch, cancel)
    })
    .await?;
    if cancel.is_cancelled() {
        return Ok(());
    }
    match out {
        MergeOutcome::Merged { .. } | MergeOutcome::AlreadyMerged => {
            store::lines::set_gate_failures(&mut *sh.store.conn().await?, &line.id, 0).await?;
            // An answer given while the line merged queued a step: it runs, and the line
            // merges again after it.
            let steps = store::steps::of_line(&mut *sh.store.conn().await?, &line.id).await?;
            let next = if steps.iter().any(super::open) {
                LineState::Running
            } else {
                // Deploy, health-check and rollback come in their own issue: no deploy → skip.
                LineState::AwaitingAcceptance
            };
            sh.set_line_state(&line.id, next, None, None).await
        }
        MergeOutcome::Conflict { files } => {
            gate_failed(
                sh,
                line,
                &format!(
                    "merging {} into fresh {main_branch} conflicts in: {files}. Merge {main_branch} into the line's branch and resolve the conflicts.",
                    line.branch
                ),
            )
            .await
        }
        MergeOutcome::Red { output } => gate_failed(sh, line, &output).await,
        MergeOutcome::DirtyCheckout { detail } => {
            sh.set_line_state(
                &line.id,
                LineState::Blocked,
                Some((ReasonCode::DirtyCheckout, &detail)),
                None,
            )
                .await
        }
    }
}
