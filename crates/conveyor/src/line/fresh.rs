//! A run in a fresh session of its own, in the line's worktree, for the steps that check
//! rather than write: the judge and the checking roles (tester, reviewer, skeptic, extra). Each
//! run gets a new session id (a checker keeps nothing between runs, and never sees the
//! author's conversation), a verdict file named by `$CONVEYOR_VERDICT`, a Stop hook that checks
//! it and a guard that lets nothing else be written; after the run the worktree is reset to the
//! checkpoint, whatever the run left there.

use std::path::{Path, PathBuf};

use conveyor_api::{StepKind, StepState};
use tokio_util::sync::CancellationToken;

use crate::budget::Admitted;
use crate::claude::{Invocation, Report, Verdict as RunVerdict};
use crate::judge::JudgeHooks;
use crate::roles::denials;
use crate::state::Shared;
use crate::store::runs::{self, NewRun};
use crate::store::{self, LineRow, StepRow};
use crate::{error::Result, git, hook};

use super::folder::give_to_agent;
use super::invocation::invocation;
use super::miss::{budget_cap_hit, usage_limit_hit};
use super::run::{RunEnd, record_run_end, run_agent};

/// The files of one attempt.
#[derive(Debug, Clone)]
pub(super) struct Files {
    pub attempt: i64,
    pub session: String,
    pub verdict: PathBuf,
    /// What the Stop hook is given besides the verdict (the judge's ids).
    pub given: PathBuf,
    /// The Stop hook's rounds.
    pub state: PathBuf,
    settings: PathBuf,
    log: PathBuf,
}

/// The next attempt's session and files.
pub(super) fn files(sh: &Shared, line: &LineRow, step: &StepRow) -> Files {
    let attempt = step.attempts + 1;
    let dir = sh.line_dir(&line.id);
    let agent = sh.agent_dir(&line.id);
    let tag = format!("{}-{}-{}", step.n, attempt, store::now_ms());
    Files {
        attempt,
        session: uuid::Uuid::new_v4().to_string(),
        verdict: agent.join(format!("verdict-{tag}.json")),
        given: dir.join(format!("verdict-{tag}.given.json")),
        state: agent.join(format!("verdict-{tag}.state")),
        settings: dir.join(format!("settings-{tag}.json")),
        log: dir.join(format!("step-{tag}.ndjson")),
    }
}

/// What one run is.
#[derive(Debug)]
pub(super) struct Fresh<'a> {
    pub kind: StepKind,
    pub prompt: String,
    /// `--tools` (none: the agent's own, or every tool).
    pub tools: Option<&'a str>,
    pub hooks: JudgeHooks,
    /// The `PreToolUse` matcher of the guard.
    pub guarded: &'a str,
    /// `(--agent name, --agents JSON)`: the project's own agent.
    pub agent: Option<(String, String)>,
}

/// How a run ended, once what every checker's run shares is settled.
#[derive(Debug)]
pub(super) enum Ended {
    /// The run finished: its verdict file decides.
    Finished { run_id: i64, log: PathBuf },
    /// The run failed: the caller counts it.
    Failed { run_id: i64, reason: String },
    /// Interrupted, or stopped by a limit: the step waits, nothing to decide.
    Settled,
}

/// Runs one attempt: the attempt and its session recorded, the hooks written, the run
/// recorded with its cost, the worktree reset; interruptions and limits settled as for every
/// step.
///
/// # Errors
/// Database, file and git errors.
pub(super) async fn run(
    sh: &Shared,
    (line, step): (&LineRow, &StepRow),
    f: &Files,
    run: Fresh<'_>,
    admitted: Admitted,
    cancel: &CancellationToken,
) -> Result<Ended> {
    let worktree = PathBuf::from(line.worktree.clone().unwrap_or_default());
    let checkpoint = line.checkpoint.clone().unwrap_or_default();
    {
        let mut tx = sh.store.begin().await?;
        store::steps::start_attempt(&mut tx, &step.id, f.attempt).await?;
        store::steps::set_session(&mut tx, &step.id, &f.session).await?;
        tx.commit().await?;
    }
    sh.set_step_state(&line.id, &step.id, step.n, StepState::Running, None)
        .await?;
    let never = super::guard::guard_hook(sh, line).await?;
    let mut pre_tool: Vec<(&str, &str)> = Vec::new();
    if let Some(g) = &run.hooks.guard {
        pre_tool.push((run.guarded, g));
    }
    if let Some(g) = &never {
        pre_tool.push((crate::guard::MATCHER, g));
    }
    hook::write_settings(
        &f.settings,
        &hook::Hooks {
            stop: &run.hooks.stop,
            pre_tool: &pre_tool,
        },
    )?;
    let run_id = runs::start(
        &mut *sh.store.conn().await?,
        &NewRun {
            step_id: &step.id,
            line_id: &line.id,
            kind: run.kind,
            attempt: f.attempt,
            resumed: false,
            estimate_usd: admitted.estimate_usd,
            log_path: Some(&f.log.to_string_lossy()),
        },
    )
    .await?;
    let mut env = sh.agent_base_env();
    env.extend(sh.command_env(&line.id));
    env.insert("CONVEYOR_STEP".into(), step.id.clone());
    env.insert(
        "CONVEYOR_VERDICT".into(),
        f.verdict.to_string_lossy().into_owned(),
    );
    // As every step runs, but in a session of its own, with only a checker's environment (no
    // journal, no plan).
    let (agent, agents) = run.agent.map_or((None, None), |(a, j)| (Some(a), Some(j)));
    let inv = Invocation {
        prompt: run.prompt,
        session_id: f.session.clone(),
        resume: false,
        settings: f.settings.clone(),
        tools: run.tools.map(str::to_string),
        agent,
        agents,
        env,
        max_budget_usd: admitted.cap_usd,
        log: f.log.clone(),
        ..invocation(sh, line, step)
    };
    give_to_agent(sh, &line.id, &worktree)?;
    tracing::info!(line = %line.id, step = step.n, attempt = f.attempt, kind = %run.kind, "checker starts");
    let report: Report = run_agent(sh, line, run.kind, run_id, &inv, cancel).await;
    let outcome = report.verdict();
    tracing::info!(line = %line.id, step = step.n, verdict = ?outcome, "checker run ended");
    let (blocks, _) = hook::Hook::rounds_in(&f.state);
    let end = RunEnd {
        kind: run.kind,
        report: &report,
        verdict: &outcome,
        log: &f.log,
        hook_blocks: blocks,
        in_line_session: false,
    };
    let mistakes = record_run_end(sh, &line.id, run_id, &end).await?;
    // A checker changes nothing: whatever the run left in the worktree is undone.
    git::reset_to(&worktree, &checkpoint).await?;
    let ended = settle(
        sh,
        line,
        step,
        outcome,
        run_id,
        &f.log,
        (&worktree, &checkpoint),
    )
    .await?;
    // A Telegram check that could not run for the test account's sake (signed out between two
    // preflights, kurigram gone): the tester's verdict says nothing of the line, and a fixer
    // could not help. The step waits pending, as after an interruption, and the preflight,
    // asked now, holds the project with the login command until the account works again. A
    // step held so three times fails as any run does (a cause the preflight does not see).
    if let Some(why) = sh.telegram_held.take(run_id) {
        let reason = format!("the Telegram check could not run: {why}");
        if sh.telegram_held.again(&step.id) <= 2 {
            super::miss::back_to_pending(
                sh,
                line,
                step,
                "the Telegram check could not run",
                &reason,
            )
            .await?;
            sh.refresh_preflight().await?;
            return Ok(Ended::Settled);
        }
        return Ok(Ended::Failed { run_id, reason });
    }
    // A checker that kept trying what its role does not have is counted as a failed run, as
    // one without a verdict: its verdict is not taken, and it runs again within its step's
    // attempts (the judge's, the roles' own limits). Its denials stay on the line.
    Ok(match ended {
        Ended::Finished { run_id, .. } if denials::kept_trying(mistakes) => Ended::Failed {
            run_id,
            reason: format!(
                "the {} kept trying tools its role does not have ({mistakes} denied): its \
                 verdict is not taken",
                run.kind.as_str()
            ),
        },
        other => other,
    })
}

async fn settle(
    sh: &Shared,
    line: &LineRow,
    step: &StepRow,
    outcome: RunVerdict,
    run_id: i64,
    log: &Path,
    at: (&Path, &str),
) -> Result<Ended> {
    let failed = |reason: String| Ok(Ended::Failed { run_id, reason });
    match outcome {
        RunVerdict::Finished => Ok(Ended::Finished {
            run_id,
            log: log.to_path_buf(),
        }),
        RunVerdict::Interrupted => {
            store::steps::roll_back(
                &mut *sh.store.conn().await?,
                &step.id,
                StepState::Interrupted,
                "the daemon stopped while the check ran",
                None,
            )
            .await?;
            Ok(Ended::Settled)
        }
        RunVerdict::UsageLimit { resets_at, message } => {
            usage_limit_hit(sh, line, step, at, resets_at, &message).await?;
            Ok(Ended::Settled)
        }
        RunVerdict::BudgetCap { message } => {
            budget_cap_hit(sh, line, step, at, &message).await?;
            Ok(Ended::Settled)
        }
        RunVerdict::Failed { reason }
        | RunVerdict::Fatal { reason }
        | RunVerdict::NoConversation { reason } => failed(reason),
        RunVerdict::SessionInUse => failed("the check's fresh session was in use".into()),
    }
}
