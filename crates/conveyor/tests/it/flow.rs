//! The gate's loop (a merge conflict with fresh main → a fixer step in the same session → merge)
//! and cancelling a running line.

use conveyor_api::{Level, LineState, StepKind, StepState};
use serde_json::json;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_merge_conflict_with_fresh_main_sends_the_line_to_a_fixer_step() {
    let mut d = Daemon::builder()
        .files(&[
            ("a.txt", "one\n"),
            (
                ".conveyor.toml",
                "regression = \"test -f a.txt\"\nfull_level_paths = [\"migrations/**\"]\n",
            ),
        ])
        .mock()
        .start()
        .await;
    let (c, mock, repo) = (d.client(), d.mock(), d.repo());
    let line = d.line("conflict", "change a.txt").await;
    let s = line.session_id.clone();
    let plan = json!({"level": "light", "steps": [{"title": "edit a", "task": "x", "checks": [{"cmd": "grep -q line-version a.txt"}]}]});
    mock.script(
        &s,
        json!({
            "1": [write_plan(&plan), text("planned")],
            "2.1": [bash("echo line-version > a.txt && mkdir -p migrations && echo x > migrations/1.sql"), {"text": "done", "hold": true}],
            // The fixer resolves the conflict in the line's favour (the migration made the
            // line full: tester, reviewer and skeptic ran as steps 3 to 5).
            "6": [bash("git -c user.name=f -c user.email=f@f merge -X ours main -m 'merge main' >/dev/null 2>&1; true"), text("merged main")],
        }),
    )
    .await;
    // While the executor works, someone moves main with a conflicting change.
    wait_for(120, "the executor's held turn", || async {
        mock.requests(&s)
            .await
            .iter()
            .any(|e| e["step"] == 2 && e["turn"] == 1)
            .then_some(())
    })
    .await;
    std::fs::write(repo.join("a.txt"), "main-version\n").unwrap();
    git(repo, &["commit", "-qam", "someone else's change"]);
    mock.release(&s).await;

    let done = wait_state(c, &line.id, LineState::AwaitingAcceptance, 180).await;
    let kinds: Vec<_> = done.line.steps.iter().map(|s| (s.kind, s.state)).collect();
    let checks = [
        (StepKind::Tester, StepState::Done),
        (StepKind::Reviewer, StepState::Done),
        (StepKind::Skeptic, StepState::Done),
    ];
    let mut want = vec![
        (StepKind::Planner, StepState::Done),
        (StepKind::Executor, StepState::Done),
    ];
    want.extend(checks);
    want.push((StepKind::Fixer, StepState::Done));
    // The fixer changed the code: every check ran again.
    want.extend(checks);
    assert_eq!(kinds, want);
    // The fixer was told what conflicted, in the same session.
    let reqs = mock.requests(&s).await;
    let fixer = reqs.iter().find(|e| e["step"] == 6).unwrap();
    let conv = fixer["conversation"].as_str().unwrap();
    assert!(conv.contains("conflicts in: a.txt"), "{conv}");
    assert!(conv.contains("conveyor step 2 attempt 1"));
    // The migration raised the level mechanically.
    assert_eq!(done.line.level, Some(Level::Full));
    assert_eq!(
        std::fs::read_to_string(repo.join("a.txt")).unwrap(),
        "line-version\n"
    );
    assert!(git(repo, &["log", "--format=%s", "main"]).contains("someone else's change"));
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_running_line_stops_its_agent_and_rolls_back() {
    let mut d = Daemon::builder().mock().start().await;
    let (c, mock) = (d.client(), d.mock());
    let line = d.line("cancel me", "x").await;
    let s = line.session_id.clone();
    mock.script(
        &s,
        json!({"1": [bash("echo junk > junk.txt"), {"text": "planned", "hold": true}]}),
    )
    .await;
    wait_for(120, "the planner's held turn", || async {
        mock.requests(&s)
            .await
            .iter()
            .any(|e| e["turn"] == 1)
            .then_some(())
    })
    .await;
    let step = c.line(&line.id).await.unwrap().line.steps[0].id.clone();
    assert!(!conveyor::exec::groups_with_env("CONVEYOR_STEP", &step).is_empty());
    let l = c.cancel(&line.id).await.unwrap();
    assert_eq!(l.state, LineState::Cancelled);
    wait_for(30, "the agent to be stopped", || async {
        conveyor::exec::groups_with_env("CONVEYOR_STEP", &step)
            .is_empty()
            .then_some(())
    })
    .await;
    let l = wait_for(30, "the step to be cancelled", || async {
        let l = c.line(&line.id).await.ok()?;
        (l.line.steps[0].state == StepState::Cancelled).then_some(l)
    })
    .await;
    assert_eq!(l.line.state, LineState::Cancelled);
    assert!(!d.worktree(&line.id).join("junk.txt").exists());
    d.stop().await;
}

/// A daemon stopped while the planner waited for its answer at `held_turn`, and started again
/// (with an empty `HOME` for the agent when `lose_transcripts`); the line and its session.
async fn stop_and_start_during_the_planner(
    held_turn: usize,
    lose_transcripts: bool,
) -> (Daemon, String, String) {
    let mut d = Daemon::builder().mock().start().await;
    let line = d.line("stop", "x").await;
    let s = line.session_id.clone();
    let plan = json!({"steps": [{"title": "b", "task": "add b.txt", "checks": [{"cmd": "test -f b.txt"}]}]});
    let mut first = vec![bash("echo looking around"); held_turn];
    first.push(json!({"text": "thinking", "hold": true}));
    d.mock()
        .script(
            &s,
            json!({
                "1.1": first,
                "1": [write_plan(&plan), text("planned")],
                "2": [write("b.txt", "b\n"), text("done")],
            }),
        )
        .await;
    wait_for(120, "the planner's held turn", || async {
        d.mock()
            .requests(&s)
            .await
            .iter()
            .any(|e| e["step"] == 1 && e["turn"] == held_turn)
            .then_some(())
    })
    .await;
    let step = d.client().line(&line.id).await.unwrap().line.steps[0]
        .id
        .clone();
    d.stop().await;
    assert!(
        conveyor::exec::groups_with_env("CONVEYOR_STEP", &step).is_empty(),
        "stop left the agent running"
    );
    if lose_transcripts {
        d.new_agent_home();
    }
    d.restart().await;
    (d, line.id, s)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_stop_kills_the_running_agent_and_the_step_resumes_in_its_session() {
    let (mut d, line, session) = stop_and_start_during_the_planner(1, false).await;
    let done = wait_state(d.client(), &line, LineState::AwaitingAcceptance, 120).await;
    assert_eq!(done.line.steps[0].attempts, 2);
    let reqs = d.mock().requests(&session).await;
    // The executor step resumed the session the planner's second attempt made.
    let exec = reqs.iter().find(|e| e["step"] == 2).unwrap();
    assert!(
        exec["conversation"]
            .as_str()
            .unwrap()
            .contains("conveyor step 1 attempt 2")
    );
    let resumed = reqs
        .iter()
        .find(|e| e["step"] == 1 && e["attempt"] == 2)
        .unwrap();
    let conv = resumed["conversation"].as_str().unwrap();
    assert!(conv.contains("conveyor step 1 attempt 1"), "{conv}");
    assert!(
        conv.contains("rolled back to the last checkpoint"),
        "{conv}"
    );
    d.stop().await;
}

/// The first step was stopped after its run reached system/init, and the CLI no longer knows
/// the conversation (the test takes the transcripts away; a run cut right after system/init
/// saves nothing at all): `--resume` finds nothing. No run of the session had ended with a
/// result, and the cut attempt's work was rolled back, so nothing is lost by starting the
/// session afresh with `--session-id` — a crash or a stop is no reason to wake Anton. The
/// journal says so, and the line goes on. (After a finished step it is Anton's: below.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_step_whose_cut_session_was_lost_starts_it_afresh() {
    let (mut d, line, session) = stop_and_start_during_the_planner(0, true).await;
    let done = wait_state(d.client(), &line, LineState::AwaitingAcceptance, 120).await;
    let reqs = d.mock().requests(&session).await;
    let again = reqs
        .iter()
        .find(|e| e["step"] == 1 && e["attempt"] == 2)
        .expect("the planner's second attempt ran");
    let conv = again["conversation"].as_str().unwrap();
    assert!(
        !conv.contains("conveyor step 1 attempt 1"),
        "a fresh conversation, not the lost one: {conv}"
    );
    assert!(
        done.journal.iter().any(|e| e
            .text
            .as_deref()
            .is_some_and(|t| t.contains("--session-id"))),
        "{:#?}",
        done.journal
    );
    d.stop().await;
}

/// "No conversation found" after a finished step: the line needs Anton; a new conversation
/// is never started silently.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_session_after_a_finished_step_stops_the_line_for_anton() {
    let mut d = Daemon::builder().mock().start().await;
    let line = d.line("lost", "x").await;
    let s = line.session_id.clone();
    let plan = json!({"steps": [{"title": "b", "task": "add b.txt", "checks": [{"cmd": "test -f b.txt"}]}]});
    d.mock()
        .script(
            &s,
            json!({"1": [write_plan(&plan), text("planned")], "2.1": [{"text": "hm", "hold": true}]}),
        )
        .await;
    wait_for(120, "the executor's held turn", || async {
        d.mock()
            .requests(&s)
            .await
            .iter()
            .any(|e| e["step"] == 2)
            .then_some(())
    })
    .await;
    d.stop().await;
    d.new_agent_home();
    d.restart().await;
    let l = wait_state(d.client(), &line.id, LineState::NeedsHuman, 120).await;
    assert!(l.line.reason.unwrap().contains("session is gone"));
    // Nothing was sent after the restart: no new conversation under the line's id.
    assert!(!a_second_attempt_ran(d.mock(), &s).await);
    d.stop().await;
}

/// Whether the mock saw a request of `session` from a step's second attempt.
async fn a_second_attempt_ran(mock: &Mock, session: &str) -> bool {
    mock.requests(session)
        .await
        .iter()
        .any(|e| e["attempt"] == 2)
}
