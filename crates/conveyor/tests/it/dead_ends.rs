//! Dead ends stop the line with a clear reason, and the daemon goes on; the budget holds a
//! step that does not fit.

use conveyor_api::{LineState, StepState};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_claude_binary_stops_the_line_not_the_daemon() {
    let mut d = Daemon::start().await;
    let c = d.client();
    let a = d.line("a", "x").await.id;
    let l = wait_state(c, &a, LineState::NeedsHuman, 30).await;
    let reason = l.line.reason.unwrap();
    assert!(
        reason.contains("claude binary cannot be started"),
        "{reason}"
    );
    assert_eq!(l.line.steps[0].state, StepState::Failed);
    // The daemon goes on: the next line of the project is taken up (and stops the same way).
    let b = d.line("b", "x").await.id;
    wait_state(c, &b, LineState::NeedsHuman, 30).await;
    assert_eq!(c.health().await.unwrap().status, "ok");
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn not_logged_in_stops_the_line_with_the_reason() {
    // No login, and nowhere real to reach: the API base is a closed loopback port and every
    // optional traffic is off, as in the other tests.
    let mut d = Daemon::builder().not_logged_in().start().await;
    let a = d.line("a", "x").await.id;
    let l = wait_state(d.client(), &a, LineState::NeedsHuman, 60).await;
    let reason = l.line.reason.unwrap();
    assert!(reason.contains("not logged in"), "{reason}");
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_that_does_not_fit_the_window_waits_at_its_checkpoint() {
    let mut d = Daemon::builder()
        .config("[budget]\nthreshold_usd = 0.5\ndefault_estimate_usd = 1.0\n")
        .start()
        .await;
    let a = d.line("a", "x").await.id;
    let l = wait_state(d.client(), &a, LineState::WaitingBudget, 30).await;
    assert!(l.line.reason.unwrap().contains("threshold"));
    assert!(l.line.park_until.is_some());
    // Nothing ran: the binary (missing) was never tried.
    assert!(l.line.steps.iter().all(|s| s.attempts == 0));
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checks_still_red_after_three_hook_rounds_fail_the_step_with_what_stayed_red() {
    let mut d = Daemon::builder().mock().start().await;
    let c = d.client();
    let id = d.line("stubborn", "x").await.id;
    let session = c.line(&id).await.unwrap().line.session_id;
    let plan = serde_json::json!({"steps": [{"title": "never", "task": "x", "checks": [{"cmd": "test -f never.txt"}]}]});
    // The model keeps claiming it is done without doing anything.
    d.mock()
        .script(
            &session,
            serde_json::json!({"1": [write_plan(&plan), text("planned")], "2": []}),
        )
        .await;
    let l = wait_state(c, &id, LineState::NeedsHuman, 120).await;
    let reason = l.line.reason.unwrap();
    assert!(
        reason.contains("still red after 3 Stop-hook round(s)"),
        "{reason}"
    );
    assert!(reason.contains("test -f never.txt"), "{reason}");
    assert_eq!(l.line.steps[1].state, StepState::Failed);
    // One answer plus one per block.
    let step2 = d
        .mock()
        .requests(&session)
        .await
        .into_iter()
        .filter(|e| e["step"] == 2)
        .count();
    assert_eq!(step2, 4);
    d.stop().await;
}
