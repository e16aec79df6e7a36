//! The deploy after a line's merge (DESIGN.md, "Deploy, and what is never done
//! autonomously"): the project's `deploy` command from a scratch worktree of the new main
//! (never the line's worktree), with `CONVEYOR_PREVIOUS_COMMIT` (what production runs: the
//! last green deploy's commit, or what a rollback put back) and `CONVEYOR_COMMIT`; then its `health_check`, tried `health_retries` times,
//! `health_interval_secs` apart, within `health_deadline_secs`. Green → the line awaits
//! acceptance. Red → `rollback`, the line `rolled_back` with the output and an `investigate`
//! step in its session (a failed round); with no `rollback`, Anton.
//!
//! One deploy per project at a time: a line holds its project from planning to acceptance, and
//! a deploy's row stays `running` until it ends, across a restart. After a `kill -9` the deploy
//! is not run again blindly: the health check decides whether it took.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use conveyor_api::{DeployOutcome, EventKind, HealthCheck, LineState, ReasonCode, StepKind};
use tokio_util::sync::CancellationToken;

use crate::config::Checklist;
use crate::events::EventBody;
use crate::exec::{self, Spec};
use crate::state::Shared;
use crate::store::{self, LineRow};
use crate::{error::Result, git};

use super::checklist::checklist_or_stop;

/// The scratch worktree a line's deploy runs in.
fn scratch(sh: &Shared, line_id: &str) -> PathBuf {
    sh.cfg
        .data_dir
        .join("scratch")
        .join(format!("{line_id}-deploy"))
}

/// Deploys the line's merge (or settles a deploy a dead daemon left running).
///
/// # Errors
/// Database, file and git errors.
pub(super) async fn deploy(sh: &Shared, line: &LineRow, cancel: &CancellationToken) -> Result<()> {
    let Some((list, main, repo, _)) = checklist_or_stop(sh, line).await? else {
        return Ok(());
    };
    let Some(cmd) = list.deploy.clone() else {
        return green(sh, line).await;
    };
    let running =
        store::deploys::running_of_project(&mut *sh.store.conn().await?, &line.project_id).await?;
    if let Some(d) = running {
        if d.line_id != line.id {
            // Another line's deploy still holds the project: wait for it.
            return Ok(());
        }
        // The daemon died while this deploy ran (its process group was killed on restart):
        // the health check says whether it took, instead of deploying twice blindly.
        tracing::warn!(line = %line.id, commit = %d.commit, "a deploy was running when the daemon stopped: the health check decides whether it took");
        let dir = scratch(sh, &line.id);
        git::scratch_at(&sh.locks, &repo, &dir, &d.commit, cancel).await?;
        // What it printed until then is in its file, written as it came.
        let printed = std::fs::read_to_string(output_file(sh, &line.id, d.id)).unwrap_or_default();
        let output = format!(
            "$ {cmd}\n{}{}\n[conveyor] the daemon stopped during this deploy; its health check decides whether it took\n",
            exec::tail(&printed, 6000),
            d.output_tail
        );
        store::deploys::set_output(&mut *sh.store.conn().await?, d.id, &output).await?;
        let env = (d.previous_commit.as_str(), d.commit.as_str());
        let health = health(sh, line, &list, &dir, env, d.id, cancel).await?;
        return settle(
            sh,
            line,
            &list,
            (&repo, &dir),
            (d.id, env),
            health,
            output,
            cancel,
        )
        .await;
    }

    // What production runs now: what the rollback puts back if this deploy is red.
    let previous = match store::deploys::in_production(
        &mut *sh.store.conn().await?,
        &line.project_id,
    )
    .await?
    {
        Some(c) => c,
        // No deploy yet: the merge's first parent, main as it was before this line.
        None => git::git(&repo, &["rev-parse", &format!("{main}^1")], cancel)
            .await
            .map_or_else(|_| main.clone(), |s| s.trim().to_string()),
    };
    let id = store::deploys::start(
        &mut *sh.store.conn().await?,
        (&line.id, &line.project_id),
        (&main, &previous),
        sh.clock.now_ms(),
    )
    .await?;
    emit(sh, &line.id, &format!("deploy of {} started", short(&main)));
    let dir = scratch(sh, &line.id);
    git::scratch_at(&sh.locks, &repo, &dir, &main, cancel).await?;
    let env = (previous.as_str(), main.as_str());
    // Its output goes to its file as it comes, not through the daemon's memory: a `kill -9` of
    // the daemon mid-deploy leaves everything it printed until then for the record.
    let file = output_file(sh, &line.id, id);
    if let Some(d) = file.parent() {
        std::fs::create_dir_all(d).map_err(|e| crate::error::Error::io(d, e))?;
    }
    let out = run(sh, &line.id, &to_file(&cmd, &file), &dir, env, cancel).await?;
    if cancel.is_cancelled() {
        // Stopped: the row stays `running`; the health check decides after the restart.
        return Ok(());
    }
    let printed = std::fs::read_to_string(&file).unwrap_or_default();
    let output = format!("$ {cmd}\n{}{}", exec::tail(&printed, 6000), out.tail(2000));
    store::deploys::set_output(&mut *sh.store.conn().await?, id, &output).await?;
    let health = if out.code == Some(0) {
        health(sh, line, &list, &dir, env, id, cancel).await?
    } else {
        Health::Red(format!(
            "`{cmd}` exited {}",
            out.code.map_or("by a signal".into(), |c| c.to_string())
        ))
    };
    settle(
        sh,
        line,
        &list,
        (&repo, &dir),
        (id, env),
        health,
        output,
        cancel,
    )
    .await
}

/// What the health checks said.
#[derive(Debug)]
enum Health {
    Green,
    Red(String),
    /// Stopped by the shutdown or a cancel before it could say.
    Stopped,
}

/// Tries the health check until green, `health_retries` times within the deadline.
async fn health(
    sh: &Shared,
    line: &LineRow,
    list: &Checklist,
    dir: &Path,
    env: (&str, &str),
    id: i64,
    cancel: &CancellationToken,
) -> Result<Health> {
    let Some(cmd) = &list.health_check else {
        return Ok(Health::Green);
    };
    let deadline = Instant::now() + Duration::from_secs(list.health_deadline_secs);
    let mut tries: Vec<HealthCheck> = Vec::new();
    let mut last = String::new();
    for n in 0..list.health_retries.max(1) {
        if n > 0 {
            let wait = Duration::from_secs(list.health_interval_secs);
            if Instant::now() + wait > deadline {
                break;
            }
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = cancel.cancelled() => return Ok(Health::Stopped),
            }
        }
        let out = run(sh, &line.id, cmd, dir, env, cancel).await?;
        if cancel.is_cancelled() {
            return Ok(Health::Stopped);
        }
        let ok = out.code == Some(0);
        last = out.tail(1500);
        tries.push(HealthCheck {
            at: store::rfc3339(sh.clock.now_ms()),
            ok,
            output_tail: last.clone(),
        });
        store::deploys::set_health(&mut *sh.store.conn().await?, id, &tries).await?;
        if ok {
            return Ok(Health::Green);
        }
    }
    Ok(Health::Red(format!(
        "`{cmd}` stayed red after {} tries: {}",
        tries.len(),
        last.trim()
    )))
}

/// Ends the deploy by what the health checks said.
#[allow(clippy::too_many_arguments)]
async fn settle(
    sh: &Shared,
    line: &LineRow,
    list: &Checklist,
    (repo, dir): (&Path, &Path),
    (id, env): (i64, (&str, &str)),
    health: Health,
    mut output: String,
    cancel: &CancellationToken,
) -> Result<()> {
    let now = sh.clock.now_ms();
    match health {
        Health::Stopped => Ok(()),
        Health::Green => {
            store::deploys::finish(&mut *sh.store.conn().await?, id, DeployOutcome::Green, now)
                .await?;
            git::drop_scratch(&sh.locks, repo, dir).await;
            emit(
                sh,
                &line.id,
                &format!("deploy of {} is green", short(env.1)),
            );
            green(sh, line).await
        }
        Health::Red(why) => {
            let Some(rollback) = &list.rollback else {
                store::deploys::finish(&mut *sh.store.conn().await?, id, DeployOutcome::Red, now)
                    .await?;
                git::drop_scratch(&sh.locks, repo, dir).await;
                emit(sh, &line.id, &format!("deploy of {} is red", short(env.1)));
                return super::answer::needs_anton(
                    sh,
                    &line.id,
                    (
                        ReasonCode::DeployRed,
                        &format!(
                            "the deploy of {} is red and the project has no rollback: {why}",
                            short(env.1)
                        ),
                    ),
                )
                .await;
            };
            let out = run(sh, &line.id, rollback, dir, env, cancel).await?;
            output.push_str(&format!("\n$ {rollback}\n{}", out.tail(4000)));
            let rolled = out.code == Some(0);
            store::deploys::set_output(&mut *sh.store.conn().await?, id, &output).await?;
            let outcome = if rolled {
                DeployOutcome::RolledBack
            } else {
                DeployOutcome::Red
            };
            store::deploys::finish(&mut *sh.store.conn().await?, id, outcome, sh.clock.now_ms())
                .await?;
            git::drop_scratch(&sh.locks, repo, dir).await;
            emit(
                sh,
                &line.id,
                &format!("deploy of {} rolled back: {why}", short(env.1)),
            );
            if !rolled {
                return super::answer::needs_anton(
                    sh,
                    &line.id,
                    (
                        ReasonCode::DeployRed,
                        &format!(
                            "the deploy of {} is red ({why}) and its rollback failed too: {}",
                            short(env.1),
                            out.tail(1500)
                        ),
                    ),
                )
                .await;
            }
            rolled_back(sh, line, env, &why, &output).await
        }
    }
}

/// A rolled-back deploy: a failed round; the line investigates in its own session.
async fn rolled_back(
    sh: &Shared,
    line: &LineRow,
    (previous, commit): (&str, &str),
    why: &str,
    output: &str,
) -> Result<()> {
    let failures = line.gate_failures + 1;
    store::lines::set_gate_failures(&mut *sh.store.conn().await?, &line.id, failures).await?;
    if failures >= conveyor_core::line::GATE_ROUNDS {
        return super::answer::needs_anton(
            sh,
            &line.id,
            (
                ReasonCode::GateFailed,
                &format!(
                    "cannot pass the check: the deploy of {} was rolled back to {} ({why}); {failures} failed rounds in a row",
                    short(commit),
                    short(previous)
                ),
            ),
        )
        .await;
    }
    store::steps::add(
        &mut *sh.store.conn().await?,
        &line.id,
        StepKind::Investigate,
        "find why the deploy failed",
        &format!(
            "The deploy of {commit} (this line's merge) failed its health check and was rolled back to \
             {previous}: {why}.\n\nWhat the deploy, its health checks and the rollback printed:\n{}\n\n\
             Find why. The approach that was deployed failed: fix it on the line's branch with another \
             approach, not the same one again, and keep the checks green. The line is merged and \
             deployed again after the checks.",
            exec::tail(output, 4000)
        ),
        &[],
    )
    .await?;
    sh.set_line_state(
        &line.id,
        LineState::RolledBack,
        Some((
            ReasonCode::RolledBack,
            &format!("the deploy of {} was rolled back: {why}", short(commit)),
        )),
        None,
    )
    .await
}

/// The line is done: rounds reset, it awaits acceptance.
async fn green(sh: &Shared, line: &LineRow) -> Result<()> {
    store::lines::set_gate_failures(&mut *sh.store.conn().await?, &line.id, 0).await?;
    sh.set_line_state(&line.id, LineState::AwaitingAcceptance, None, None)
        .await
}

/// A deploy, health-check or rollback command in `dir`, as the line's commands run.
async fn run(
    sh: &Shared,
    line_id: &str,
    cmd: &str,
    dir: &Path,
    (previous, commit): (&str, &str),
    cancel: &CancellationToken,
) -> Result<exec::Output> {
    let mut spec = Spec::shell(cmd, dir);
    spec.env.extend(sh.command_env(line_id));
    spec.env
        .insert("CONVEYOR_PREVIOUS_COMMIT".into(), previous.into());
    spec.env.insert("CONVEYOR_COMMIT".into(), commit.into());
    let timeout = Duration::from_secs(sh.cfg.command_timeout_secs);
    exec::run(&spec, timeout, cancel).await
}

/// Where deploy `id` of the line writes what it prints.
fn output_file(sh: &Shared, line_id: &str, id: i64) -> PathBuf {
    sh.line_dir(line_id).join(format!("deploy-{id}.log"))
}

/// `cmd` with its output (both streams) appended to `file` by the shell that runs it: the
/// deploy's processes write there themselves, whatever happens to the daemon. The command is
/// shell source already; a group keeps its exit code.
fn to_file(cmd: &str, file: &Path) -> String {
    format!(
        "{{\n{cmd}\n}} >>{} 2>&1",
        crate::hook::quote(&file.to_string_lossy())
    )
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}

fn emit(sh: &Shared, line_id: &str, detail: &str) {
    sh.events.emit(
        EventKind::Deploy,
        EventBody {
            line_id: Some(line_id.into()),
            detail: Some(detail.into()),
            ..EventBody::default()
        },
    );
}
