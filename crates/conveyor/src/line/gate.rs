//! The gate and the merge: the project's checks (read from fresh main) in the line's worktree,
//! its hooks, the checking roles of the line's level, then the merge into fresh main in a
//! separate worktree with the regression again; a failed round adds a fixer step, or stops the
//! line after [`GATE_ROUNDS`] in a row.

use std::path::{Path, PathBuf};

use conveyor_api::{Level, LineState, ReasonCode};
use tokio_util::sync::CancellationToken;

use crate::config::Check;
use crate::error::Result;
use crate::exec;
use crate::git::{self, MergeOutcome, Regression};
use crate::roles;
use crate::state::Shared;
use crate::store::{self, LineRow};

use super::checklist::{Fork, checklist_or_stop, fork_of};
use super::checks::{exit_text, run_checks, run_command};
use super::hooks::{self, Boundary};
use super::round::round_failed;

/// A check red because an external service is down: the line stays at the gate and tries
/// again after the preflight's period; not a failed round.
async fn external_down(sh: &Shared, line: &LineRow, pattern: &str, what: &str) -> Result<()> {
    let again = sh.clock.now_ms()
        + i64::try_from(sh.cfg.preflight_interval_secs.saturating_mul(1000)).unwrap_or(i64::MAX);
    tracing::warn!(line = %line.id, pattern, "an external service is down: the gate waits and tries again");
    sh.set_line_state(
        &line.id,
        LineState::Gate,
        Some((
            ReasonCode::ExternalDown,
            &format!("an external service is down (external_errors {pattern:?}): {what}"),
        )),
        Some(again),
    )
    .await
}

/// A red gate item: a fixer round with what failed.
async fn gate_failed(sh: &Shared, line: &LineRow, code: ReasonCode, what: &str) -> Result<()> {
    let task = format!("The line's gate failed. Make it pass:\n{what}");
    round_failed(sh, line, code, what, &task).await
}

/// Whether `cmd` is red on main at `main` too (then a red in the line is someone else's): run
/// once per main commit in a scratch worktree of main, remembered.
async fn red_on_main(
    sh: &Shared,
    line: &LineRow,
    (repo, main): (&Path, &str),
    check: &Check,
    cancel: &CancellationToken,
) -> Result<bool> {
    let key = (main.to_string(), check.cmd.clone());
    if let Some(red) = sh.red_on_main.lock().expect("not poisoned").get(&key) {
        return Ok(*red);
    }
    let scratch = sh
        .cfg
        .data_dir
        .join("scratch")
        .join(format!("{}-main", line.id));
    git::scratch_at(&sh.locks, repo, &scratch, main, cancel).await?;
    if let Some(u) = &sh.agent_user {
        exec::chown_worktree(&scratch, u.uid, u.gid)?;
    }
    let out = run_command(sh, &line.id, &check.cmd, &scratch, cancel).await;
    git::drop_scratch(&sh.locks, repo, &scratch).await;
    let out = out?;
    if cancel.is_cancelled() {
        return Ok(false);
    }
    let red = out.code != Some(check.expect_exit);
    sh.red_on_main
        .lock()
        .expect("not poisoned")
        .insert(key, red);
    Ok(red)
}

/// A daemon's note in the line's journal, once per text (a gate that runs again does not
/// repeat it).
async fn note_once(sh: &Shared, line_id: &str, text: &str, why: &str) -> Result<()> {
    let text = format!("conveyor: {text}");
    let now = sh.clock.now_ms();
    let mut tx = sh.store.begin().await?;
    if !store::journal::has_text(&mut tx, line_id, &text).await? {
        store::journal::insert_daemon_decided(&mut tx, line_id, &text, why, now).await?;
    }
    tx.commit().await?;
    Ok(())
}

/// The gate (DESIGN.md, "Roles, levels and the gate"), in its order: the level the diff
/// forces; clicks mandatory where the diff touches `ui_paths`; the regression, the checklist
/// and the clicks in the worktree (a command red on fresh main too is someone else's); the
/// project's `before_done` hook; the checking roles of the level; the `before_deploy`
/// boundary (tests touched or an `uncovered` entry, and the project's hook); then the merge,
/// with the regression on the merge result ("nothing that worked broke").
pub(super) async fn gate(sh: &Shared, line: &LineRow, cancel: &CancellationToken) -> Result<()> {
    sh.set_line_state(&line.id, LineState::Gate, None, None)
        .await?;
    let Some((list, main, repo, main_branch)) = checklist_or_stop(sh, line).await? else {
        return Ok(());
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
    let head = git::git(&worktree, &["rev-parse", "HEAD"], cancel)
        .await?
        .trim()
        .to_string();
    let Fork { files, .. } = fork_of(&repo, &main_branch, line, cancel).await?;
    let touched: Vec<String> = files.iter().map(|f| f.path.clone()).collect();
    let diff_stat: String = files
        .iter()
        .map(|f| format!("{} ({})\n", f.path, f.change.as_str()))
        .collect();

    // The level the diff forces, journaled with why.
    if let Some(why) = roles::forced_full(&touched, &list.full_level_paths) {
        store::lines::raise_level(
            &mut *sh.store.conn().await?,
            &line.id,
            Level::Full,
            &why,
            sh.clock.now_ms(),
        )
        .await?;
    }
    let line = &store::lines::get(&mut *sh.store.conn().await?, &line.id)
        .await?
        .expect("line exists");

    // Clicks are mandatory where the diff touches the UI; with no scenarios to click no fixer
    // can cure it (the checklist is read from main): Anton at once.
    if list.ui_scenarios.is_none()
        && let Some(p) = roles::first_match(&touched, &list.ui_paths)
    {
        return super::answer::needs_anton(
            sh,
            &line.id,
            (
                ReasonCode::NoUiScenarios,
                &format!(
                    "the diff touches {p} (ui_paths) and the project has no ui_scenarios to click through it: add `ui_scenarios` to .conveyor.toml on {main_branch}"
                ),
            ),
        )
        .await;
    }

    let green_here = sh
        .green_at
        .lock()
        .expect("not poisoned")
        .get(&line.id)
        .is_some_and(|at| *at == head);
    if !green_here {
        let mut checks: Vec<Check> = Vec::new();
        if let Some(r) = &list.regression {
            checks.push(Check {
                cmd: r.clone(),
                expect_exit: 0,
            });
        }
        checks.extend(list.checklist.iter().cloned());
        if let Some(ui) = &list.ui_scenarios {
            checks.push(Check {
                cmd: ui.clone(),
                expect_exit: 0,
            });
        }
        let red = run_checks(sh, &line.id, &worktree, &checks, cancel).await?;
        if cancel.is_cancelled() {
            return Ok(());
        }
        // An external service down is nobody's fault here: wait and try again.
        if let Some((pattern, what)) = red
            .iter()
            .find_map(|(_, what)| list.external(what).map(|p| (p, what)))
        {
            return external_down(sh, line, pattern, what).await;
        }
        let mut ours = Vec::new();
        for (check, what) in red {
            if red_on_main(sh, line, (&repo, &main), &check, cancel).await? {
                note_once(
                    sh,
                    &line.id,
                    &format!(
                        "`{}` is red on fresh {main_branch} too: someone else's, the line goes on",
                        check.cmd
                    ),
                    &format!(
                        "it fails on {main_branch} at {} as well, without this line's change",
                        &main[..main.len().min(12)]
                    ),
                )
                .await?;
            } else {
                ours.push(what);
            }
        }
        if cancel.is_cancelled() {
            return Ok(());
        }
        if !ours.is_empty() {
            return gate_failed(
                sh,
                line,
                ReasonCode::GateRed,
                &format!("gate red in the worktree:\n{}", ours.join("\n")),
            )
            .await;
        }
        if let Some(cmd) = &list.hooks.before_done
            && let Some(why) = hooks::run(
                sh,
                line,
                (Boundary::Done, cmd),
                None,
                &diff_stat,
                &worktree,
                cancel,
            )
            .await?
        {
            return gate_failed(sh, line, ReasonCode::HookBlocked, &why).await;
        }
        sh.green_at
            .lock()
            .expect("not poisoned")
            .insert(line.id.clone(), head.clone());
    }

    // The checking roles of the level, each its own run.
    if super::roles::queue_round(sh, line, &list, (&repo, &main)).await? {
        return Ok(());
    }

    // Before deploy: the change is tested, or the journal says how it was checked by hand.
    if !list.tests_paths.is_empty() && roles::first_match(&touched, &list.tests_paths).is_none() {
        let uncovered = store::journal::count_kind(
            &mut *sh.store.conn().await?,
            &line.id,
            conveyor_api::JournalKind::Uncovered,
        )
        .await?;
        if uncovered == 0 {
            let what = format!(
                "no test changed (tests_paths: {}) and the journal has no `uncovered` entry: add or change a test that covers the change, or append an `uncovered` entry to $CONVEYOR_JOURNAL saying how you checked the change by hand",
                list.tests_paths.join(", ")
            );
            return gate_failed(sh, line, ReasonCode::NoTestEvidence, &what).await;
        }
    }
    if let Some(cmd) = &list.hooks.before_deploy
        && let Some(why) = hooks::run(
            sh,
            line,
            (Boundary::Deploy, cmd),
            None,
            &diff_stat,
            &worktree,
            cancel,
        )
        .await?
    {
        return gate_failed(sh, line, ReasonCode::HookBlocked, &why).await;
    }
    if cancel.is_cancelled() {
        return Ok(());
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
    let Some((list, _, repo, main_branch)) = checklist_or_stop(sh, line).await? else {
        return Ok(());
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
            // An answer given while the line merged queued a step: it runs, and the line
            // merges again after it.
            let steps = store::steps::of_line(&mut *sh.store.conn().await?, &line.id).await?;
            let next = if steps.iter().any(super::facts::open) {
                LineState::Running
            } else if list.deploy.is_some() {
                LineState::Deploying
            } else {
                // Rounds reset only once the line is done.
                store::lines::set_gate_failures(&mut *sh.store.conn().await?, &line.id, 0)
                    .await?;
                LineState::AwaitingAcceptance
            };
            sh.set_line_state(&line.id, next, None, None).await
        }
        MergeOutcome::Conflict { files } => {
            gate_failed(
                sh,
                line,
                ReasonCode::GateRed,
                &format!(
                    "merging {} into fresh {main_branch} conflicts in: {files}. Merge {main_branch} into the line's branch and resolve the conflicts.",
                    line.branch
                ),
            )
            .await
        }
        MergeOutcome::Red { output } => {
            // "Nothing that worked broke": the regression on the merge result, reported apart.
            gate_failed(
                sh,
                line,
                ReasonCode::GateRed,
                &format!("nothing that worked broke: red after merging into fresh {main_branch}:
{output}"),
            )
            .await
        }
        MergeOutcome::DirtyCheckout { detail } => {
            // Someone's uncommitted work: the line keeps its project and its state, and the
            // merge is tried again once a minute (the preflight's period) until it is clean.
            let again = sh.clock.now_ms()
                + i64::try_from(sh.cfg.preflight_interval_secs.saturating_mul(1000))
                    .unwrap_or(i64::MAX);
            sh.set_line_state(
                &line.id,
                LineState::Merging,
                Some((ReasonCode::DirtyCheckout, &detail)),
                Some(again),
            )
            .await
        }
    }
}
