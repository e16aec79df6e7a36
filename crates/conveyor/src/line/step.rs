//! Running one step through the CLI: the prompt, the agent's environment and the session
//! (`--session-id` or `--resume`, switched when the CLI says so), the run's record and cost, and
//! what each verdict of the run means for the step and the line. A finished run goes on to
//! [`finish_step`].

use std::path::PathBuf;
use std::time::Duration;

use conveyor_api::{EventKind, LineState, ReasonCode, StepKind, StepState};
use tokio_util::sync::CancellationToken;

use crate::budget::Admitted;
use crate::claude::{Invocation, Verdict};
use crate::events::EventBody;
use crate::git;
use crate::state::Shared;
use crate::store::runs::{self, NewRun, RunOutcome};
use crate::store::{self, LineRow, StepRow, now_ms};
use crate::{Result, hook, plan, prompt};

use super::finish::{Finished, fail_step, finish_step, stop_line};
use super::miss::{budget_cap_hit, usage_limit_hit};
use super::run::{record_run_end, run_agent};
use super::{SESSION_TRIES, give_to_agent, ingest_journal, is_cancelled, journal_path, plan_path};

/// How many of the project's latest decisions a step's prompt carries.
const DECISIONS_IN_PROMPT: i64 = 10;

fn agent_env(
    sh: &Shared,
    line: &LineRow,
    step: &StepRow,
) -> std::collections::BTreeMap<String, String> {
    let mut env = sh.agent_base_env();
    env.insert(
        "CONVEYOR_JOURNAL".into(),
        journal_path(sh, &line.id).to_string_lossy().into_owned(),
    );
    env.insert(
        "CONVEYOR_PLAN".into(),
        plan_path(sh, &line.id).to_string_lossy().into_owned(),
    );
    env.extend(sh.command_env(&line.id));
    env.insert("CONVEYOR_STEP".into(), step.id.clone());
    env
}

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
    let decisions = super::latest_decisions(sh, &line.project_id, DECISIONS_IN_PROMPT).await?;
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
        let never = super::guard_hook(sh, line).await?;
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
            &sh.line_dir(&line.id),
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
        let report = run_agent(sh, &line.id, run_id, &inv, cancel).await;
        let verdict = report.verdict();
        tracing::info!(line = %line.id, step = step.n, ?verdict, exit = ?report.exit_code, "step run ended");

        let (blocks, _) = hook.rounds();
        record_run_end(sh, &line.id, run_id, &report, &verdict, blocks, true).await?;
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

/// How the CLI is run for every attempt of the step: the line's session, worktree and
/// environment, the daemon's permissions and limits. An attempt adds its prompt, its
/// `--resume`, its hook's settings, its budget cap and its log.
pub(super) fn invocation(sh: &Shared, line: &LineRow, step: &StepRow) -> Invocation {
    let bypass = sh.cfg.permission_mode == "bypassPermissions";
    Invocation {
        claude_bin: sh.cfg.claude_bin.clone(),
        cwd: PathBuf::from(line.worktree.clone().unwrap_or_default()),
        prompt: String::new(),
        session_id: line.session_id.clone(),
        resume: false,
        settings: PathBuf::new(),
        permission_mode: sh.cfg.permission_mode.clone(),
        allowed_tools: sh.cfg.allowed_tools.clone(),
        tools: None,
        agent: None,
        agents: None,
        add_dir: (!bypass).then(|| sh.line_dir(&line.id)),
        model: sh.cfg.model.clone(),
        env: agent_env(sh, line, step),
        user: sh.agent_user.as_ref().map(|u| (u.uid, u.gid)),
        inherit_env: sh.cfg.agent_env_inherit,
        max_budget_usd: None,
        log: PathBuf::new(),
        timeout: Duration::from_secs(sh.cfg.step_timeout_secs),
    }
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
        .map_err(|e| crate::Error::io(&path, e))?;
    // An agent's last line without its newline must not swallow the note.
    let needs_newline = {
        use std::io::{Read, Seek, SeekFrom};
        let mut last = [0u8; 1];
        f.seek(SeekFrom::End(-1)).is_ok() && f.read_exact(&mut last).is_ok() && last[0] != b'\n'
    };
    let line = format!("{}{entry}\n", if needs_newline { "\n" } else { "" });
    f.write_all(line.as_bytes())
        .map_err(|e| crate::Error::io(&path, e))?;
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
mod tests {
    use super::super::{Action, next_action};
    use super::*;
    use std::path::Path;

    /// One run of `step`, admitted at $1.
    async fn run_once(sh: &Shared, line: &LineRow, step: &StepRow) {
        let admitted = sh.budget.policy.admitted_at(1.0);
        run_step(sh, line, step, admitted, &CancellationToken::new())
            .await
            .unwrap();
    }

    /// A cancel that comes while the flow moves the line on is kept, and no agent is started
    /// for a cancelled line.
    #[tokio::test]
    async fn a_cancel_is_never_overwritten_and_starts_no_agent() {
        let tmp = tempfile::tempdir().unwrap();
        let d = crate::daemon::testing::start(
            &tmp.path().join("data"),
            "claude_bin = \"/nonexistent/claude\"",
        )
        .await;
        let sh = d.shared().clone();
        let id = crate::store::testing::line(&sh.store, "p", "l1", 0, "queued").await;
        store::lines::set_worktree(&mut sh.store.conn().await.unwrap(), &id, tmp.path(), None)
            .await
            .unwrap();
        let step = crate::store::testing::step(&sh.store, &id, StepKind::Planner).await;
        // The flow read the line, then Anton cancelled it.
        let line = store::lines::get(&mut sh.store.conn().await.unwrap(), &id)
            .await
            .unwrap()
            .unwrap();
        sh.set_line_state(
            &id,
            LineState::Cancelled,
            Some((ReasonCode::Cancelled, "cancelled by Anton")),
            None,
        )
        .await
        .unwrap();
        for s in [LineState::Planning, LineState::Gate, LineState::Running] {
            sh.set_line_state(&id, s, None, None).await.unwrap();
        }
        assert_eq!(
            store::lines::get(&mut sh.store.conn().await.unwrap(), &id)
                .await
                .unwrap()
                .unwrap()
                .state,
            LineState::Cancelled
        );

        run_once(&sh, &line, &step).await;
        let l = store::lines::get(&mut sh.store.conn().await.unwrap(), &id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(l.state, LineState::Cancelled);
        assert_eq!(l.reason.as_deref(), Some("cancelled by Anton"));
        let s = store::steps::get(&mut sh.store.conn().await.unwrap(), &step.id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(s.state, StepState::Cancelled);
        let runs = runs::count_of_line(&mut sh.store.conn().await.unwrap(), &id)
            .await
            .unwrap();
        assert_eq!(runs, 0, "no agent for a cancelled line");
        drop(sh);
        d.stop().await;
    }

    /// A fake `claude`: `body` is its shell script.
    fn fake_claude(dir: &Path, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let p = dir.join("claude");
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    /// A line with a real worktree (a repository at its checkpoint) and one step of `kind`.
    async fn line_with_worktree(sh: &Shared, dir: &Path, kind: StepKind) -> (LineRow, StepRow) {
        let wt = dir.join("wt");
        std::fs::create_dir_all(&wt).unwrap();
        let git = |args: &[&str]| {
            let o = std::process::Command::new("git")
                .args(args)
                .current_dir(&wt)
                .output()
                .unwrap();
            assert!(o.status.success());
            String::from_utf8_lossy(&o.stdout).trim().to_string()
        };
        git(&["init", "-q", "-b", "main"]);
        std::fs::write(wt.join("a.txt"), "a\n").unwrap();
        git(&["add", "-A"]);
        git(&[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "c",
        ]);
        let cp = git(&["rev-parse", "HEAD"]);
        let id = crate::store::testing::line(&sh.store, "p", "l1", 0, "running").await;
        store::lines::set_worktree(&mut sh.store.conn().await.unwrap(), &id, &wt, Some(&cp))
            .await
            .unwrap();
        std::fs::create_dir_all(sh.line_dir(&id)).unwrap();
        let step = crate::store::testing::step(&sh.store, &id, kind).await;
        (
            store::lines::get(&mut sh.store.conn().await.unwrap(), &id)
                .await
                .unwrap()
                .unwrap(),
            step,
        )
    }

    /// `--session-id` says "in use", `--resume` says "No conversation found": after the
    /// allowed switches the step fails and the line needs Anton, never left running.
    #[tokio::test]
    async fn a_step_that_cannot_find_its_session_fails_instead_of_staying_running() {
        let tmp = tempfile::tempdir().unwrap();
        let claude = fake_claude(
            tmp.path(),
            r#"for a in "$@"; do if [ "$a" = --resume ]; then echo "No conversation found with session ID: x" >&2; exit 1; fi; done
echo "Error: Session ID x is already in use." >&2; exit 1"#,
        );
        let d = crate::daemon::testing::start(
            &tmp.path().join("data"),
            &format!("claude_bin = {:?}", claude.display().to_string()),
        )
        .await;
        let sh = d.shared().clone();
        let (line, step) = line_with_worktree(&sh, tmp.path(), StepKind::Executor).await;
        run_once(&sh, &line, &step).await;
        let s = store::steps::get(&mut sh.store.conn().await.unwrap(), &step.id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(s.state, StepState::Failed);
        let l = store::lines::get(&mut sh.store.conn().await.unwrap(), &line.id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(l.state, LineState::NeedsHuman);
        let reason = l.reason.clone().unwrap_or_default();
        assert!(
            reason.contains("could not be run in the line's session"),
            "{reason}"
        );
        assert_eq!(next_action(&sh, &l).await.unwrap(), Action::Nothing);
        drop(sh);
        d.stop().await;
    }

    /// A fake `claude` that logs its arguments, says "No conversation found" to every
    /// `--resume`, "already in use" to the first `--session-id`, and then finishes.
    fn fake_session_claude(dir: &Path) -> (PathBuf, PathBuf) {
        let calls = dir.join("calls");
        let claude = fake_claude(
            dir,
            &format!(
                r#"m=session-id; for a in "$@"; do if [ "$a" = --resume ]; then m=resume; fi; done
echo $m >> '{calls}'
n=$(wc -l < '{calls}')
if [ $m = resume ]; then
  echo '{{"type":"result","subtype":"error_during_execution","is_error":true,"total_cost_usd":0,"errors":["No conversation found with session ID: x"]}}'
  echo "No conversation found with session ID: x" >&2; exit 1
fi
if [ "$n" = 1 ]; then echo "Error: Session ID x is already in use." >&2; exit 1; fi
echo '{{"type":"system","subtype":"init"}}'
echo '{{"type":"result","is_error":false,"total_cost_usd":0.01,"result":"ok"}}'"#,
                calls = calls.display()
            ),
        );
        (claude, calls)
    }

    fn calls(path: &Path) -> Vec<String> {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// No run ever reached system/init: the session never started, so `--session-id` may
    /// start it, and the journal says so.
    #[tokio::test]
    async fn a_session_never_started_is_started_again_and_the_journal_says_so() {
        let tmp = tempfile::tempdir().unwrap();
        let (claude, log) = fake_session_claude(tmp.path());
        let d = crate::daemon::testing::start(
            &tmp.path().join("data"),
            &format!("claude_bin = {:?}", claude.display().to_string()),
        )
        .await;
        let sh = d.shared().clone();
        let (line, step) = line_with_worktree(&sh, tmp.path(), StepKind::Executor).await;
        run_once(&sh, &line, &step).await;
        assert_eq!(calls(&log), ["session-id", "resume", "session-id"]);
        let s = store::steps::get(&mut sh.store.conn().await.unwrap(), &step.id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(s.state, StepState::Done);
        let notes = store::journal::recent(&mut sh.store.conn().await.unwrap(), &line.id, 10)
            .await
            .unwrap();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert_eq!(notes[0].kind, Some(conveyor_api::JournalKind::Decided));
        assert!(
            notes[0]
                .said
                .text
                .as_deref()
                .unwrap()
                .contains("--session-id"),
            "{notes:?}"
        );
        drop(sh);
        d.stop().await;
    }

    /// How the earlier run of [`after_an_earlier_run`] ended.
    #[derive(Clone, Copy, PartialEq)]
    enum Earlier {
        /// Killed after system/init, before the CLI saved anything.
        Cut,
        /// Ended with a result after system/init: the CLI had saved the conversation.
        Finished,
        /// A `--resume` the CLI answered "No conversation found": a result event with a zero
        /// total (observed with 2.1.332), but no system/init and nothing saved. Then a run of
        /// the line's session cut after system/init.
        NoConversation,
        /// A run of a step of this kind (a judge, a checking role) in a session of its own
        /// ended with a result. Then a run of the line's session cut after system/init.
        OwnSession(StepKind),
    }

    /// An earlier run of the line (see [`Earlier`]) before the step's own, then `run_step`:
    /// what the fake CLI was called with, and the line as it ends.
    async fn after_an_earlier_run(earlier: Earlier) -> (Vec<String>, store::LineRow, StepState) {
        let tmp = tempfile::tempdir().unwrap();
        let (claude, log) = fake_session_claude(tmp.path());
        let d = crate::daemon::testing::start(
            &tmp.path().join("data"),
            &format!("claude_bin = {:?}", claude.display().to_string()),
        )
        .await;
        let sh = d.shared().clone();
        let (line, step) = line_with_worktree(&sh, tmp.path(), StepKind::Executor).await;
        let run = if let Earlier::OwnSession(kind) = earlier {
            let own = crate::store::testing::step(&sh.store, &line.id, kind).await;
            store::steps::set_session(&mut sh.store.conn().await.unwrap(), &own.id, "its-own")
                .await
                .unwrap();
            crate::store::testing::run(&sh.store, &own.id, &line.id).await
        } else {
            crate::store::testing::run(&sh.store, &step.id, &line.id).await
        };
        if earlier != Earlier::NoConversation {
            runs::saw_init(&mut sh.store.conn().await.unwrap(), run, &line.id)
                .await
                .unwrap();
        }
        if earlier == Earlier::Cut {
            runs::set_outcome(
                &mut sh.store.conn().await.unwrap(),
                run,
                RunOutcome::Interrupted,
            )
            .await
            .unwrap();
        } else {
            let (outcome, total) = match earlier {
                Earlier::NoConversation => (RunOutcome::NoConversation, 0.0),
                _ => (RunOutcome::Failed, 0.01),
            };
            let mut tx = sh.store.begin().await.unwrap();
            runs::finish(
                &mut tx,
                run,
                &line.id,
                (!matches!(earlier, Earlier::OwnSession(_))).then_some(total),
                &runs::Ended {
                    outcome,
                    exit_code: Some(i32::from(outcome == RunOutcome::NoConversation)),
                    session_total: Some(total),
                    cost_usd: total,
                    input_tokens: 0,
                    output_tokens: 0,
                    cache_read: 0,
                    cache_write: 0,
                    duration_ms: 1,
                    result: Some("ok".into()),
                    stderr_tail: String::new(),
                    permission_denials: None,
                    hook_blocks: 0,
                    init_seen: earlier != Earlier::NoConversation,
                },
            )
            .await
            .unwrap();
            tx.commit().await.unwrap();
        }
        if matches!(earlier, Earlier::NoConversation | Earlier::OwnSession(_)) {
            // Then a run of the line's session cut after system/init, as in CI's kill storm:
            // the session counts as started, and the step's run resumes it.
            let cut = crate::store::testing::run(&sh.store, &step.id, &line.id).await;
            let c = &mut sh.store.conn().await.unwrap();
            runs::saw_init(c, cut, &line.id).await.unwrap();
            runs::set_outcome(c, cut, RunOutcome::Interrupted)
                .await
                .unwrap();
        }
        let line = store::lines::get(&mut sh.store.conn().await.unwrap(), &line.id)
            .await
            .unwrap()
            .unwrap();
        run_once(&sh, &line, &step).await;
        let l = store::lines::get(&mut sh.store.conn().await.unwrap(), &line.id)
            .await
            .unwrap()
            .unwrap();
        let s = store::steps::get(&mut sh.store.conn().await.unwrap(), &step.id)
            .await
            .unwrap()
            .unwrap();
        drop(sh);
        d.stop().await;
        (calls(&log), l, s.state)
    }

    /// An earlier run reached system/init and was killed before it ended (a daemon crash): the
    /// CLI may have saved nothing, and its work was rolled back, so a conversation the CLI
    /// does not know is started afresh — a crash is no reason to wake Anton.
    #[tokio::test]
    async fn a_session_whose_runs_were_all_cut_after_init_is_started_again() {
        let (calls, line, step) = after_an_earlier_run(Earlier::Cut).await;
        assert_eq!(calls, ["resume", "session-id"]);
        assert_eq!(step, StepState::Done);
        assert_ne!(line.state, LineState::NeedsHuman, "{:?}", line.reason);
    }

    /// Runs that ended with a result yet saved nothing of the line's session do not make it
    /// "saved": a `--resume` refused with "No conversation found" (counting one sent a line of
    /// CI's kill storm to needs_human after two crashes in its first step), and the run of a
    /// judge or a checking role, each in a session of its own.
    #[tokio::test]
    async fn a_refused_resume_or_a_run_in_a_session_of_its_own_is_no_saved_conversation() {
        for earlier in [
            Earlier::NoConversation,
            Earlier::OwnSession(StepKind::Judge),
            Earlier::OwnSession(StepKind::Reviewer),
        ] {
            let (calls, line, step) = after_an_earlier_run(earlier).await;
            assert_eq!(calls, ["resume", "session-id"]);
            assert_eq!(step, StepState::Done);
            assert_ne!(line.state, LineState::NeedsHuman, "{:?}", line.reason);
        }
    }

    /// An earlier run ended with a result: the CLI had saved the conversation, so one it no
    /// longer knows is lost work — the line stops for Anton, nothing is started under its id.
    #[tokio::test]
    async fn a_session_with_a_finished_run_is_never_started_again() {
        let (calls, line, _) = after_an_earlier_run(Earlier::Finished).await;
        assert_eq!(calls, ["resume"]);
        assert_eq!(line.state, LineState::NeedsHuman);
        assert_eq!(line.reason_code, Some(ReasonCode::NoConversation));
        assert!(line.reason.unwrap_or_default().contains("session is gone"));
    }
}
