//! Running one step through the CLI: the prompt, the agent's environment and the session
//! (`--session-id` or `--resume`, switched when the CLI says so), the run's record and cost, and
//! what each verdict of the run means for the step and the line. A finished run goes on to
//! [`finish_step`].

use std::path::PathBuf;

use conveyor_api::{EventKind, LineState, ReasonCode, StepKind, StepState};
use tokio_util::sync::CancellationToken;

use crate::budget::Admitted;
use crate::claude::{Invocation, Verdict};
use crate::events::EventBody;
use crate::git;
use crate::state::Shared;
use crate::store::runs::{self, NewRun, RunOutcome};
use crate::store::{self, LineRow, StepRow, now_ms};
use crate::{error::Result, hook, plan, prompt};

use super::facts::{SESSION_TRIES, is_cancelled, latest_decisions};
use super::finish::{Finished, fail_step, finish_step, stop_line};
use super::folder::{give_to_agent, ingest_journal, journal_path, plan_path};
use super::guard::guard_hook;
use super::invocation::invocation;
use super::miss::{budget_cap_hit, usage_limit_hit};
use super::run::{RunEnd, record_run_end, run_agent};

/// How many of the project's latest decisions a step's prompt carries.
const DECISIONS_IN_PROMPT: i64 = 10;

/// One step: the run, its cost, its checks, its checkpoint or its rollback.
pub(super) async fn run_step(
    sh: &Shared,
    line: &LineRow,
    step: &StepRow,
    admitted: Admitted,
    cancel: &CancellationToken,
) -> Result<()> {
    let worktree = PathBuf::from(line.worktree.clone().unwrap_or_default());
    let checkpoint = line.checkpoint.clone().unwrap_or_default();
    let kind = step.kind;
    let line_state = if kind == StepKind::Planner {
        LineState::Planning
    } else if kind == StepKind::Fixer {
        LineState::Fixing
    } else if kind == StepKind::Investigate {
        // Active while it investigates, and says why (its merge is on main, its deploy rolled
        // back: a cancel now reverts the merge).
        LineState::RolledBack
    } else {
        LineState::Running
    };
    if kind == StepKind::Planner {
        let _ = std::fs::remove_file(plan_path(sh, &line.id));
    }
    let checks = step.checks();
    let hook_checks = if kind == StepKind::Planner {
        // "The plan parses and has at least one step".
        vec![plan::hook_check(&sh.line_dir(&line.id))?]
    } else {
        checks.clone()
    };
    // The catalogue is used, not only kept: the project's latest decisions go into the prompt.
    let decisions = latest_decisions(sh, &line.project_id, DECISIONS_IN_PROMPT).await?;
    let mut resume = line.session_started;
    // A first run refused with "already in use" is retried with --resume; a --resume of a
    // session whose first run died before the CLI saved anything is retried with --session-id.
    let mut retried: Vec<String> = Vec::new();
    for _ in 0..SESSION_TRIES {
        let attempt = step.attempts + 1;
        store::steps::start_attempt(&mut *sh.store.conn().await?, &step.id, attempt).await?;
        // Anton's answers are read once the attempt has started, never before: from then on
        // they can no longer change (an answer changed a moment earlier is the one sent).
        let undelivered =
            store::questions::undelivered_answers(&mut *sh.store.conn().await?, &line.id).await?;
        let answers: Vec<(String, String)> = undelivered
            .iter()
            .map(|u| (u.question.clone(), u.answer.clone()))
            .collect();
        let carried: Vec<String> = undelivered.into_iter().map(|u| u.id).collect();
        // A rolled-back line keeps saying why while it investigates.
        let keep = (line_state == LineState::RolledBack)
            .then(|| line.reason_code.zip(line.reason.as_deref()))
            .flatten();
        sh.set_line_state(&line.id, line_state, keep, None).await?;
        if cancel.is_cancelled() || is_cancelled(sh, &line.id).await? {
            // Cancelled (by Anton, or the daemon stops) before the agent started: start none.
            return step_not_started(sh, line, step).await;
        }
        sh.set_step_state(&line.id, &step.id, step.n, StepState::Running, None)
            .await?;
        let never = guard_hook(sh, line).await?;
        let tag = format!("{}-{}-{}", step.n, attempt, now_ms());
        let log = sh.line_dir(&line.id).join(format!("step-{tag}.ndjson"));
        let log_path = log.to_string_lossy().into_owned();
        let run_id = runs::start(
            &mut *sh.store.conn().await?,
            &NewRun {
                step_id: &step.id,
                line_id: &line.id,
                kind,
                attempt,
                resumed: resume,
                estimate_usd: admitted.estimate_usd,
                log_path: Some(&log_path),
            },
        )
        .await?;
        let pre_tool: Vec<(&str, &str)> = never
            .as_deref()
            .map(|g| (crate::guard::MATCHER, g))
            .into_iter()
            .collect();
        let hook = hook::write(
            &hook::Dirs {
                scripts: &sh.line_dir(&line.id),
                state: &sh.agent_dir(&line.id),
            },
            &tag,
            &hook_checks,
            sh.cfg.hook_rounds,
            &pre_tool,
        )?;
        let text = prompt::render(&prompt::StepPrompt {
            n: step.n,
            attempt,
            kind,
            line_id: &line.id,
            line_title: &line.title,
            line_task: &line.task,
            step_title: &step.title,
            step_task: &step.task,
            checks: &checks,
            rolled_back: step.rolled_back.as_deref(),
            checkpoint: line.checkpoint.as_deref(),
            answers: &answers,
            decisions: &decisions,
        });
        let inv = Invocation {
            prompt: text,
            resume,
            settings: hook.settings.clone(),
            max_budget_usd: admitted.cap_usd,
            log,
            ..invocation(sh, line, step)
        };
        give_to_agent(sh, &line.id, &worktree)?;
        tracing::info!(line = %line.id, step = step.n, attempt, resume, "step starts");
        let report = run_agent(sh, line, kind, run_id, &inv, cancel).await;
        let verdict = report.verdict();
        tracing::info!(line = %line.id, step = step.n, ?verdict, exit = ?report.exit_code, "step run ended");

        let (blocks, _) = hook.rounds();
        let end = RunEnd {
            kind,
            report: &report,
            verdict: &verdict,
            log: &inv.log,
            hook_blocks: blocks,
            in_line_session: true,
        };
        record_run_end(sh, &line.id, run_id, &end).await?;
        ingest_journal(sh, &line.id, Some(&step.id)).await?;

        // Cancelled by Anton while it ran: leave the line cancelled.
        if is_cancelled(sh, &line.id).await? {
            git::reset_to(&worktree, &checkpoint).await?;
            runs::set_outcome(&mut *sh.store.conn().await?, run_id, RunOutcome::Cancelled).await?;
            sh.set_step_state(
                &line.id,
                &step.id,
                step.n,
                StepState::Cancelled,
                Some("line cancelled"),
            )
            .await?;
            return Ok(());
        }

        match verdict {
            Verdict::Finished => {
                return finish_step(
                    sh,
                    line,
                    step,
                    Finished {
                        run_id,
                        worktree: &worktree,
                        checkpoint: &checkpoint,
                        checks: &checks,
                        blocks,
                        carried: &carried,
                    },
                    cancel,
                )
                .await;
            }
            Verdict::SessionInUse if !resume => {
                store::lines::set_session_started(&mut *sh.store.conn().await?, &line.id, true)
                    .await?;
                retried.push("--session-id: the session is already in use".into());
                resume = true;
                continue;
            }
            Verdict::SessionInUse => {
                return stop_line(
                    sh,
                    line,
                    step,
                    &worktree,
                    &checkpoint,
                    (
                        ReasonCode::SessionInUse,
                        "the session is in use by another run",
                    ),
                )
                .await;
            }
            Verdict::UsageLimit { resets_at, message } => {
                return usage_limit_hit(
                    sh,
                    line,
                    step,
                    (&worktree, &checkpoint),
                    resets_at,
                    &message,
                )
                .await;
            }
            Verdict::BudgetCap { message } => {
                return budget_cap_hit(sh, line, step, (&worktree, &checkpoint), &message).await;
            }
            Verdict::NoConversation { reason } => {
                // Safe to start the conversation afresh only if no run of the session ever
                // ended with a result: runs killed after `system/init` (a daemon crash) may
                // have saved nothing, and their work was rolled back to the checkpoint, so
                // there is no context to lose. After a finished run Anton decides.
                let finished = runs::session_finished_by_another(
                    &mut *sh.store.conn().await?,
                    &line.id,
                    run_id,
                )
                .await?;
                if resume && !finished {
                    let note = "the CLI knew no conversation under the line's session id although no run of it had finished (its runs were cut before the CLI saved anything): the session is started afresh with --session-id";
                    tracing::warn!(line = %line.id, "{note}");
                    journal_note(sh, &line.id, &step.id, note, &reason).await?;
                    store::lines::set_session_started(
                        &mut *sh.store.conn().await?,
                        &line.id,
                        false,
                    )
                    .await?;
                    retried.push(format!("--resume: {reason}"));
                    resume = false;
                    continue;
                }
                let why = (ReasonCode::NoConversation, reason.as_str());
                return stop_line(sh, line, step, &worktree, &checkpoint, why).await;
            }
            Verdict::Fatal { reason } => {
                let why = (ReasonCode::AgentFatal, reason.as_str());
                return stop_line(sh, line, step, &worktree, &checkpoint, why).await;
            }
            Verdict::Interrupted => {
                git::reset_to(&worktree, &checkpoint).await?;
                store::steps::roll_back(
                    &mut *sh.store.conn().await?,
                    &step.id,
                    StepState::Interrupted,
                    "the daemon stopped while the step ran",
                    None,
                )
                .await?;
                return Ok(());
            }
            Verdict::Failed { reason } => {
                return fail_step(sh, line, step, &worktree, &checkpoint, &reason, true).await;
            }
        }
    }
    // Never leave the step running (the line would go to the gate without it).
    let reason = format!(
        "the step could not be run in the line's session after {SESSION_TRIES} tries: {}",
        retried.join("; ")
    );
    let why = (ReasonCode::SessionUnusable, reason.as_str());
    stop_line(sh, line, step, &worktree, &checkpoint, why).await
}

/// A decision the daemon took for the line, appended to its journal (so it shows with the
/// line's entries and is kept) and announced to the subscribers.
async fn journal_note(
    sh: &Shared,
    line_id: &str,
    step_id: &str,
    text: &str,
    why: &str,
) -> Result<()> {
    use std::io::Write;
    let path = journal_path(sh, line_id);
    // A line from before the agents' folder existed has none yet.
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| crate::error::Error::io(dir, e))?;
    }
    let entry = serde_json::json!({
        "kind": "decided",
        "text": format!("conveyor: {text}"),
        "why": why,
        "reversible": false,
        "expensive": false,
    });
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .open(&path)
        .map_err(|e| crate::error::Error::io(&path, e))?;
    // An agent's last line without its newline must not swallow the note.
    let needs_newline = {
        use std::io::{Read, Seek, SeekFrom};
        let mut last = [0u8; 1];
        f.seek(SeekFrom::End(-1)).is_ok() && f.read_exact(&mut last).is_ok() && last[0] != b'\n'
    };
    let line = format!("{}{entry}\n", if needs_newline { "\n" } else { "" });
    f.write_all(line.as_bytes())
        .map_err(|e| crate::error::Error::io(&path, e))?;
    ingest_journal(sh, line_id, Some(step_id)).await?;
    sh.events.emit(
        EventKind::Line,
        EventBody {
            line_id: Some(line_id.into()),
            detail: Some(text.into()),
            ..EventBody::default()
        },
    );
    Ok(())
}

/// The step's run was never started: back to where it was (the attempt not counted), or
/// cancelled with its line.
async fn step_not_started(sh: &Shared, line: &LineRow, step: &StepRow) -> Result<()> {
    if is_cancelled(sh, &line.id).await? {
        return sh
            .set_step_state(
                &line.id,
                &step.id,
                step.n,
                StepState::Cancelled,
                Some("line cancelled"),
            )
            .await;
    }
    store::steps::restore(
        &mut *sh.store.conn().await?,
        &step.id,
        step.state,
        step.attempts,
    )
    .await
}

#[cfg(test)]
mod tests;
