//! The checking roles in a line's flow (DESIGN.md, "Roles, levels and the gate"): once the
//! gate's own checks are green, the round of roles the level asks for is queued as steps
//! ([`queue_round`]); each runs in a fresh session of its own, as the project's own agent when
//! fresh main has it ([`run_role`]), and writes a verdict. `pass` lets the next role run (and,
//! after the last, the line goes on to the merge); `rework` ends the round: a fixer step in the
//! line's session carries the findings, and the whole round runs again after it. Three failed
//! rounds in a row (roles or gate) and the line needs Anton.

use std::path::{Path, PathBuf};

use conveyor_api::{LineState, ReasonCode, RoleCall, RoleVerdict, StepKind, StepState};
use tokio_util::sync::CancellationToken;

use crate::budget::Admitted;
use crate::config::Checklist;
use crate::roles::{self, Role, agent, prompt::RolePrompt, verdict, work};
use crate::state::Shared;
use crate::store::runs::{self, RunOutcome};
use crate::store::{self, LineRow, StepRow};
use crate::{error::Result, git, judge};

use super::checklist::{Fork, checklist_or_stop, fork_of};
use super::fresh::{self, Ended};

/// Queues the round of checking roles that has not passed since the code last changed;
/// returns whether it queued any (the line then runs them before the gate ends).
///
/// # Errors
/// Database and git errors.
pub(super) async fn queue_round(
    sh: &Shared,
    line: &LineRow,
    list: &Checklist,
    (repo, main): (&Path, &str),
) -> Result<bool> {
    let level = line.level.unwrap_or(conveyor_api::Level::Light);
    let mut chain = Vec::new();
    for r in roles::chain(level, &list.roles) {
        // An extra role is the project's own agent or nothing: there is no built-in one.
        if r.kind == StepKind::Extra && agent_file(repo, main, &r.agent).await?.is_none() {
            tracing::warn!(line = %line.id, agent = %r.agent, main, "extra role skipped: .claude/agents/{}.md is not on main", r.agent);
            continue;
        }
        chain.push(r);
    }
    let steps = store::steps::of_line(&mut *sh.store.conn().await?, &line.id).await?;
    let verdicts: Vec<Option<RoleCall>> = steps
        .iter()
        .map(|s| s.role_verdict().map(|v| v.verdict))
        .collect();
    let seen: Vec<roles::Seen<'_>> = steps
        .iter()
        .zip(&verdicts)
        .map(|(s, v)| roles::Seen {
            n: s.n,
            kind: s.kind,
            state: s.state,
            title: &s.title,
            verdict: *v,
        })
        .collect();
    let missing = roles::missing(&seen, &chain);
    if missing.is_empty() {
        return Ok(false);
    }
    {
        let mut tx = sh.store.begin().await?;
        for r in &missing {
            store::steps::add_in(
                &mut tx,
                &line.id,
                r.kind,
                &roles::title(r),
                &format!("Check the line's work as its {}.", r.kind.as_str()),
            )
            .await?;
        }
        tx.commit().await?;
    }
    tracing::info!(line = %line.id, roles = ?missing.iter().map(roles::title).collect::<Vec<_>>(), "checking round queued");
    sh.set_line_state(&line.id, LineState::Running, None, None)
        .await?;
    Ok(true)
}

/// The role a step was queued as (its title is `kind: agent`).
fn role_of(step: &StepRow) -> Role {
    let agent = step
        .title
        .split_once(": ")
        .map_or(step.title.as_str(), |(_, a)| a)
        .to_string();
    Role {
        kind: step.kind,
        agent,
    }
}

/// The project's agent file for `name` on fresh main, if it has one.
async fn agent_file(repo: &Path, main: &str, name: &str) -> Result<Option<String>> {
    // A name that could leave the agents folder names no agent.
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
        return Ok(None);
    }
    git::read_file_at(repo, main, &format!(".claude/agents/{name}.md")).await
}

/// One run of a checking role's step.
///
/// # Errors
/// Database, file and git errors.
pub(super) async fn run_role(
    sh: &Shared,
    line: &LineRow,
    step: &StepRow,
    admitted: Admitted,
    cancel: &CancellationToken,
) -> Result<()> {
    if super::facts::is_cancelled(sh, &line.id).await? || cancel.is_cancelled() {
        return Ok(());
    }
    let Some((list, main, repo, main_branch)) = checklist_or_stop(sh, line).await? else {
        return Ok(());
    };
    let role = role_of(step);
    // The project's own agent, from fresh main: a branch that edits its reviewer changes
    // nothing for its own review (`--agents` wins over the worktree's file).
    let def = match agent_file(&repo, &main, &role.agent).await? {
        Some(text) => match agent::parse(&role.agent, &text) {
            Ok(d) => Some(d),
            Err(e) => {
                tracing::warn!(line = %line.id, agent = %role.agent, error = %e, "the project's agent file .claude/agents/{}.md cannot be used; the built-in prompt runs instead", role.agent);
                None
            }
        },
        None => None,
    };
    store::steps::set_agent(
        &mut *sh.store.conn().await?,
        &step.id,
        def.as_ref().map(|d| d.name.as_str()),
    )
    .await?;
    let Fork { base, files } = fork_of(&repo, &main_branch, line, cancel).await?;
    let diff_stat: String = files
        .iter()
        .map(|f| format!(" {} ({})\n", f.path, f.change.as_str()))
        .collect();
    let mut commands: Vec<String> = list.regression.iter().cloned().collect();
    commands.extend(list.checklist.iter().map(|c| c.cmd.clone()));
    commands.extend(list.ui_scenarios.iter().cloned());
    // The Telegram scenarios, when the project has some: the tester's command asks the daemon
    // to run them (the test account's session stays outside the sandbox).
    if step.kind == StepKind::Tester
        && sh.cfg.telegram.is_some()
        && let Some(wt) = line.worktree.as_deref()
        && crate::telegram::scenario_files(Path::new(wt), None).is_ok()
        && let Some(bin) = judge::hook_bin(&sh.cfg)
    {
        commands.push(format!("{} telegram-check", bin.display()));
    }
    let earlier: Vec<String> = store::steps::verdicts(&mut *sh.store.conn().await?, &line.id)
        .await?
        .into_iter()
        .filter(|(_, _, v)| v.verdict == RoleCall::Rework)
        .flat_map(|(_, _, v)| v.findings.into_iter().map(|f| f.text))
        .collect();
    let f = fresh::files(sh, line, step);
    let text = roles::prompt::render(&RolePrompt {
        n: step.n,
        attempt: f.attempt,
        kind: step.kind,
        agent: def.as_ref().map(|d| d.name.as_str()),
        line_id: &line.id,
        line_title: &line.title,
        line_task: &line.task,
        base: &base,
        diff_stat: &diff_stat,
        commands: &commands,
        earlier: &earlier,
        verdict_path: &f.verdict.to_string_lossy(),
    });
    let hooks = roles::hook_commands(
        judge::hook_bin(&sh.cfg).as_deref(),
        &f.verdict,
        &f.state,
        sh.cfg.hook_rounds,
    );
    let run = fresh::Fresh {
        kind: step.kind,
        prompt: text,
        tools: None,
        hooks,
        guarded: roles::GUARDED_TOOLS,
        agent: def.map(|d| (d.name.clone(), d.agents_json())),
    };
    match fresh::run(sh, (line, step), &f, run, admitted, cancel).await? {
        Ended::Finished { run_id, log } => {
            let text = std::fs::read_to_string(&f.verdict).unwrap_or_default();
            let log_text = std::fs::read_to_string(&log).unwrap_or_default();
            match verdict::check(&text) {
                Ok(_) if work::work_done(&log_text, &f.verdict).is_empty() => {
                    role_failed(
                        sh,
                        line,
                        step,
                        run_id,
                        "a verdict from a run that read no file and ran no command is not a check",
                    )
                    .await
                }
                Ok(v) => apply(sh, line, step, run_id, &v).await,
                Err(e) => role_failed(sh, line, step, run_id, &e.to_string()).await,
            }
        }
        Ended::Failed { run_id, reason } => role_failed(sh, line, step, run_id, &reason).await,
        Ended::Settled => Ok(()),
    }
}

/// A role's run without a usable verdict: another run, or the step fails after the step's
/// attempts (and the line needs Anton, saying why) — never a pass.
async fn role_failed(
    sh: &Shared,
    line: &LineRow,
    step: &StepRow,
    run_id: i64,
    reason: &str,
) -> Result<()> {
    runs::set_outcome(&mut *sh.store.conn().await?, run_id, RunOutcome::Failed).await?;
    tracing::warn!(line = %line.id, step = step.n, kind = %step.kind, reason, "checking run failed");
    let worktree = PathBuf::from(line.worktree.clone().unwrap_or_default());
    let checkpoint = line.checkpoint.clone().unwrap_or_default();
    super::finish::fail_step(sh, line, step, &worktree, &checkpoint, reason, true).await
}

/// A verdict: kept with its step; `rework` ends the round with a fixer step (or Anton, after
/// the third failed round in a row).
async fn apply(
    sh: &Shared,
    line: &LineRow,
    step: &StepRow,
    run_id: i64,
    v: &RoleVerdict,
) -> Result<()> {
    {
        let mut tx = sh.store.begin().await?;
        store::steps::set_verdict(&mut tx, &step.id, v).await?;
        runs::set_outcome(&mut tx, run_id, RunOutcome::Ok).await?;
        store::steps::set_state(&mut tx, &step.id, StepState::Done, None).await?;
        tx.commit().await?;
    }
    sh.set_step_state(&line.id, &step.id, step.n, StepState::Done, None)
        .await?;
    if v.verdict == RoleCall::Pass {
        return Ok(());
    }
    // The round ends here: the roles after this one would check code about to change.
    let steps = store::steps::of_line(&mut *sh.store.conn().await?, &line.id).await?;
    for s in steps
        .iter()
        .filter(|s| roles::CHECKERS.contains(&s.kind) && s.n > step.n && super::facts::open(s))
    {
        store::steps::set_state(
            &mut *sh.store.conn().await?,
            &s.id,
            StepState::Cancelled,
            Some("the round ended: an earlier role sent the line back"),
        )
        .await?;
        sh.set_step_state(
            &line.id,
            &s.id,
            s.n,
            StepState::Cancelled,
            Some("the round ended"),
        )
        .await?;
    }
    let role = role_of(step);
    let agent = step.agent.as_deref();
    let task = roles::rework_task(step.kind, agent, v);
    let what = format!(
        "the {} ({}) sent the line back: {}",
        role.kind.as_str(),
        agent.unwrap_or("built-in"),
        v.findings
            .iter()
            .map(|f| f.text.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    );
    super::round::round_failed(sh, line, ReasonCode::RoleRework, &what, &task).await
}
