//! A checking run (the tester, the judge) that tries a tool its role does not have, with the
//! real `claude` against the scripted mock: the denial is recorded on the line with its step,
//! Anton is not asked, and the line goes on; a checker that keeps trying is a failed run and
//! runs again. What the never-autonomous guard denies a checker still reaches Anton.

use conveyor_api::{LineDetail, LineState, StepKind, StepState};
use serde_json::{Value, json};

use crate::support::*;

fn plan() -> Value {
    json!({"level": "light", "steps": [{"title": "change", "task": "change", "checks": [{"cmd": "true"}]}]})
}

/// A checking role's turn writing its verdict where its prompt says.
fn verdict_pass() -> Value {
    json!({"tool": "Write", "input": {
        "file_path": "{{prompt:\\$CONVEYOR_VERDICT \\(([^)]+)\\)}}",
        "content": json!({"verdict": "pass", "findings": []}).to_string()}})
}

/// The questions the guard's denials made ("The agent was stopped before it ran …"), on the
/// line and on the morning page.
async fn denial_questions(c: &conveyor_api::Client, l: &LineDetail) -> Vec<String> {
    let review = c.review().await.unwrap();
    let on_review = review
        .projects
        .iter()
        .flat_map(|p| p.questions.iter().chain(&p.later))
        .filter(|q| q.line_id == l.line.id)
        .map(|q| q.text.clone());
    l.questions
        .iter()
        .map(|q| q.text.clone())
        .chain(on_review)
        .filter(|t| t.starts_with("The agent was stopped before it ran"))
        .collect()
}

/// A daemon with the real CLI against the mock, on a repository holding `a.txt`.
async fn daemon() -> Daemon {
    Daemon::builder()
        .files(&[("a.txt", "a\n")])
        .mock()
        .start()
        .await
}

/// A line whose planner plans one step and whose executor adds `b.txt`: what the checking
/// runs then look at.
async fn changed_line(d: &Daemon, title: &str) -> conveyor_api::Line {
    let l = d.line(title, "a change").await;
    d.mock()
        .script(
            &l.session_id,
            json!({
                "1": [write_plan(&plan()), text("planned")],
                "2": [write("b.txt", "b\n"), text("changed")],
            }),
        )
        .await;
    l
}

/// Waits until the line is done or waits for Anton (so the old behaviour fails at once).
async fn settled(c: &conveyor_api::Client, id: &str) -> LineDetail {
    wait_for(240, "the line to be done or to wait for Anton", || async {
        let l = c.line(id).await.ok()?;
        matches!(
            l.line.state,
            LineState::AwaitingAcceptance | LineState::WaitingAnswer | LineState::NeedsHuman
        )
        .then_some(l)
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_testers_denied_write_is_on_the_line_and_never_asks_anton() {
    let d = daemon().await;
    let (c, mock) = (d.client(), d.mock());
    let l = changed_line(&d, "tested").await;
    // The tester tries to fix what it checks (its guard lets it write only its verdict), then
    // checks and passes.
    mock.script_line(
        &l.id,
        "tester",
        json!({"*": [write("fixed.txt", "x\n"), bash("cat b.txt"), verdict_pass(), text("checked")]}),
    )
    .await;
    let done = settled(c, &l.id).await;
    assert_eq!(denial_questions(c, &done).await, Vec::<String>::new());
    assert_eq!(
        done.line.state,
        LineState::AwaitingAcceptance,
        "{:#?}",
        done.line.steps
    );
    let tester = &done.line.steps[2];
    assert_eq!(
        (tester.kind, tester.state, tester.attempts),
        (StepKind::Tester, StepState::Done, 1)
    );
    // The denial is recorded on the line, with the tester's step.
    assert_eq!(done.line.denials.len(), 1, "{:#?}", done.line.denials);
    let denial = &done.line.denials[0];
    assert_eq!((denial.step_n, denial.tool_name.as_str()), (3, "Write"));
    assert!(
        denial.input["file_path"]
            .as_str()
            .is_some_and(|p| p.ends_with("fixed.txt")),
        "{denial:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tester_that_keeps_trying_to_write_is_a_failed_run() {
    let d = daemon().await;
    let (c, mock) = (d.client(), d.mock());
    let l = changed_line(&d, "stubborn tester").await;
    mock.script_line(
        &l.id,
        "tester",
        json!({
            "3.1": [write("f1.txt", "x\n"), write("f2.txt", "x\n"), write("f3.txt", "x\n"),
                    bash("cat b.txt"), verdict_pass(), text("checked")],
            "3": [bash("cat b.txt"), verdict_pass(), text("checked")],
        }),
    )
    .await;
    let done = settled(c, &l.id).await;
    assert_eq!(denial_questions(c, &done).await, Vec::<String>::new());
    assert_eq!(
        done.line.state,
        LineState::AwaitingAcceptance,
        "{:#?}",
        done.line.steps
    );
    // The first run's verdict was not taken: the second, clean, was.
    let tester = &done.line.steps[2];
    assert_eq!(
        (tester.kind, tester.state, tester.attempts),
        (StepKind::Tester, StepState::Done, 2)
    );
    assert_eq!(done.line.denials.len(), 3, "{:#?}", done.line.denials);
    assert!(done.line.denials.iter().all(|d| d.step_n == 3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judges_denied_write_never_asks_anton() {
    let d = daemon().await;
    let (c, mock) = (d.client(), d.mock());
    let l = d.line("judged", "a change").await;
    let fork = json!({"kind": "fork", "text": "Name the table events or log", "options": ["events", "log"], "default": "events", "why": "scripted", "reversible": true, "expensive": false});
    mock.script(
        &l.session_id,
        json!({
            "1": [write_plan(&plan()), text("planned")],
            "2": [bash(&format!("echo b > b.txt && echo '{fork}' >> \"$CONVEYOR_JOURNAL\"")), text("changed")],
        }),
    )
    .await;
    mock.script_line(
        &l.id,
        "judge",
        json!({"*": [write("decided.txt", "events\n"), judge_verdict(&[("events or log", "decided", None)]), text("judged")]}),
    )
    .await;
    let done = settled(c, &l.id).await;
    assert_eq!(denial_questions(c, &done).await, Vec::<String>::new());
    assert_eq!(
        done.line.state,
        LineState::AwaitingAcceptance,
        "{:#?}",
        done.line.steps
    );
    let judge = &done.line.steps[2];
    assert_eq!(
        (judge.kind, judge.state),
        (StepKind::Judge, StepState::Done)
    );
    assert_eq!(done.line.denials.len(), 1, "{:#?}", done.line.denials);
    assert_eq!(
        (
            done.line.denials[0].step_n,
            done.line.denials[0].tool_name.as_str()
        ),
        (3, "Write")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_never_guard_denies_a_tester_still_asks_anton() {
    let d = daemon().await;
    let (c, mock) = (d.client(), d.mock());
    let l = changed_line(&d, "publishing tester").await;
    mock.script_line(
        &l.id,
        "tester",
        json!({"*": [
            bash("touch published.sentinel && npm publish"),
            write(".npmrc", "//registry.npmjs.org/:_authToken=x\n"),
            write("fixed.txt", "x\n"),
            bash("cat b.txt"), verdict_pass(), text("checked"),
        ]}),
    )
    .await;
    let waiting = settled(c, &l.id).await;
    assert!(!d.worktree(&l.id).join("published.sentinel").exists());
    // Asked about the publish and the tokens, once each (on the line), not about the write
    // the tester's own guard refused.
    let on_line: Vec<&str> = waiting
        .questions
        .iter()
        .map(|q| q.text.as_str())
        .filter(|t| t.starts_with("The agent was stopped before it ran"))
        .collect();
    assert_eq!(on_line.len(), 2, "{on_line:#?}");
    assert!(
        on_line.iter().any(|t| t.contains("npm publish")),
        "{on_line:#?}"
    );
    assert!(on_line.iter().any(|t| t.contains(".npmrc")), "{on_line:#?}");
    assert!(
        denial_questions(c, &waiting)
            .await
            .iter()
            .all(|t| !t.contains("fixed.txt"))
    );
    assert_eq!(waiting.line.denials.len(), 3, "{:#?}", waiting.line.denials);
    assert!(waiting.line.denials.iter().all(|d| d.step_n == 3));
}
