//! A step's run against the mock CLI: sessions, verdicts, checkpoints and rollbacks.

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

/// The config of a daemon whose CLI is a fake one run in a plain repository: these tests are
/// about sessions, so the sandbox (which needs a real worktree) is off.
fn fake_cli_config(claude: &Path) -> String {
    format!(
        "claude_bin = {:?}\nsandbox = {{ mode = \"off\" }}",
        claude.display().to_string()
    )
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
    let d =
        crate::daemon::testing::start(&tmp.path().join("data"), &fake_cli_config(&claude)).await;
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
    let d =
        crate::daemon::testing::start(&tmp.path().join("data"), &fake_cli_config(&claude)).await;
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
    let d =
        crate::daemon::testing::start(&tmp.path().join("data"), &fake_cli_config(&claude)).await;
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
