//! A usage limit (OAuth-style 429 with the unified rate-limit headers) in the middle of a step:
//! the worktree is rolled back to the checkpoint, the line parks until the reset time the CLI
//! reported, and then the same session is resumed.

use conveyor_api::{Line, LineState, StepState};
use serde_json::json;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_usage_limit_mid_step_rolls_back_parks_and_resumes_the_session() {
    let (mut d, line) = setup(true, "", "limit").await;
    let (c, mock) = (d.client(), d.mock());
    let plan = json!({"steps": [{"title": "done", "task": "write done.txt", "checks": [{"cmd": "test -f done.txt"}]}]});
    mock.script(
        &line.session_id,
        json!({
            "1": [write_plan(&plan), text("planned")],
            // Half the work, then the account's 5-hour limit.
            "2.1": [write("partial.txt", "half\n"), {"limit": "five_hour", "reset_in_secs": 4}],
            "2.2": [write("done.txt", "done\n"), text("done after the reset")],
        }),
    )
    .await;

    let parked = wait_state(c, &line.id, LineState::WaitingBudget, 120).await;
    let worktree = d.worktree(&line.id);
    assert!(
        !worktree.join("partial.txt").exists(),
        "not rolled back to the checkpoint"
    );
    let park = parked.line.park_until.clone().expect("park_until set");
    assert!(
        parked
            .line
            .reason
            .as_deref()
            .unwrap_or("")
            .contains("limit"),
        "{:?}",
        parked.line.reason
    );
    let budget = c.budget().await.unwrap();
    assert!(budget.park_until.is_some());
    let rl = budget.last_rate_limit.expect("rate_limit_event recorded");
    assert_eq!(rl.status, "rejected");
    assert_eq!(rl.rate_limit_type.as_deref(), Some("five_hour"));
    // The reset time is the server's (the mock's header), not a guess.
    let reset_ms = chrono::DateTime::parse_from_rfc3339(&park)
        .unwrap()
        .timestamp_millis();
    let log = mock.log().await;
    let limited = log.iter().find(|e| e["reply"] == "limit").unwrap();
    assert_eq!(reset_ms, limited["resets_at"].as_i64().unwrap() * 1000);

    let done = wait_state(c, &line.id, LineState::AwaitingAcceptance, 120).await;
    let s2 = &done.line.steps[1];
    assert_eq!((s2.state, s2.attempts), (StepState::Done, 2));
    let reqs = mock.requests(&line.session_id).await;
    let resumed = reqs
        .iter()
        .find(|e| e["step"] == 2 && e["attempt"] == 2)
        .expect("step 2 resumed");
    // Not before the reset, in the same session, with the earlier conversation and the note
    // that the worktree was rolled back.
    assert!(resumed["at"].as_i64().unwrap() >= reset_ms);
    let conv = resumed["conversation"].as_str().unwrap();
    assert!(conv.contains("conveyor step 2 attempt 1"), "{conv}");
    assert!(
        conv.contains("rolled back to the last checkpoint"),
        "{conv}"
    );
    // The cut attempt's cost (one answered request before the 429) is kept.
    let paid = reqs
        .iter()
        .filter(|e| e["step"] == 2 && e["reply"] != "limit")
        .count() as f64;
    assert!(
        (s2.cost_usd - paid * SONNET_REQUEST_USD).abs() < 1e-6,
        "{} vs {paid}",
        s2.cost_usd
    );
    // The cut attempt is a miss: counted, and it raises the executor's estimate (its one
    // finished run is below the cold start of 2.0, which still bounds it: 2.0 × 1.15 margin ×
    // 1.5 per miss).
    let budget = c.budget().await.unwrap();
    assert_eq!(budget.misses.total, 1);
    let exec = budget
        .kinds
        .iter()
        .find(|k| k.kind == conveyor_api::StepKind::Executor)
        .unwrap();
    assert_eq!(exec.count, 1);
    assert!(
        (exec.estimate_usd - 2.0 * 1.15 * 1.5).abs() < 1e-9,
        "{exec:?}"
    );
    d.stop().await;
}

/// A step that outgrows its `--max-budget-usd` cap (its estimate × `max_budget_factor`) is cut
/// by the real CLI mid-step: a miss. The worktree goes back to the checkpoint, the executor's
/// estimate (and so its cap) goes up, and the same session is resumed; the API counts the miss.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_cut_by_its_budget_cap_is_a_miss_that_raises_the_estimate() {
    // An API-key login: every request costs OPUS_REQUEST_USD (0.0156). The executor's cold
    // start of 0.005 caps its first attempt below one request (× 2 while the kind has few
    // runs: 0.01); one miss raises it × 4.
    let (mut d, line) = setup(
        false,
        "[budget]\nmargin = 0.0\nmax_budget_factor = 1.0\nmiss_factor = 4.0\ncold_start_usd = { executor = 0.005 }\n",
        "cap",
    )
    .await;
    let (c, mock) = (d.client(), d.mock());
    let plan = json!({"steps": [{"title": "done", "task": "write done.txt", "checks": [{"cmd": "test -f done.txt"}]}]});
    mock.script(
        &line.session_id,
        json!({
            "1": [write_plan(&plan), text("planned")],
            "2.1": [write("partial.txt", "half\n"), write("more.txt", "more\n"), text("too late")],
            "2.2": [write("done.txt", "done\n"), text("done within the raised cap")],
        }),
    )
    .await;

    let done = wait_state(c, &line.id, LineState::AwaitingAcceptance, 180).await;
    let s2 = &done.line.steps[1];
    assert_eq!((s2.state, s2.attempts), (StepState::Done, 2));
    let worktree = d.worktree(&line.id);
    assert!(worktree.join("done.txt").exists());
    assert!(
        !worktree.join("partial.txt").exists() && !worktree.join("more.txt").exists(),
        "the cut attempt's work was not rolled back"
    );
    let reqs = mock.requests(&line.session_id).await;
    // The cap stopped the first attempt after its first request (0.0156 > 0.01).
    let cut = reqs
        .iter()
        .filter(|e| e["step"] == 2 && e["attempt"] == 1)
        .count();
    assert_eq!(cut, 1, "{reqs:?}");
    // The same session, resumed, with the note that the worktree was rolled back.
    let resumed = reqs
        .iter()
        .find(|e| e["step"] == 2 && e["attempt"] == 2)
        .expect("step 2 resumed");
    let conv = resumed["conversation"].as_str().unwrap();
    assert!(conv.contains("conveyor step 2 attempt 1"), "{conv}");
    assert!(
        conv.contains("rolled back to the last checkpoint"),
        "{conv}"
    );
    let budget = c.budget().await.unwrap();
    assert_eq!((budget.misses.total, budget.misses.recent), (1, 1));
    assert!(budget.misses.advice.is_none());
    let exec = budget
        .kinds
        .iter()
        .find(|k| k.kind == conveyor_api::StepKind::Executor)
        .unwrap();
    // One finished executor run (two requests) and one miss: max(0.0312, cold start) × 4.
    assert_eq!(exec.count, 1);
    assert!(
        (exec.estimate_usd - 2.0 * OPUS_REQUEST_USD * 4.0).abs() < 1e-6,
        "{exec:?}"
    );
    let window = &budget.pools[0];
    assert_eq!(window.kind, conveyor_api::PoolKind::Window);
    // Everything spent: planner (2 requests), the cut attempt (1), the finished one (2), and
    // the checks of the plan's level (medium: tester and reviewer, 3 requests each).
    let answered = mock
        .log()
        .await
        .iter()
        .filter(|e| e["kind"] == "messages" && e["side"] != true)
        .count();
    assert_eq!(answered, 11);
    assert!(
        (window.spent_usd - answered as f64 * OPUS_REQUEST_USD).abs() < 1e-6,
        "{window:?}"
    );
    assert!(window.resets_at.is_some());
    d.stop().await;
}

/// A daemon on the real CLI against the mock (logged in with an OAuth token or an API key),
/// with one line queued on the sample project, whose regression wants `done.txt`.
async fn setup(oauth: bool, config: &str, title: &str) -> (Daemon, Line) {
    let d = Daemon::builder().files(&[
        ("README.md", "x\n"),
        (".conveyor.toml", "regression = \"test -f done.txt\"\n"),
    ]);
    let d = if oauth { d.mock_oauth() } else { d.mock() };
    let d = d.config(config).start().await;
    let line = d.line(title, "write done.txt").await;
    (d, line)
}
