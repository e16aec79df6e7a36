//! The budget while a step runs: its spend so far, from the usage the real CLI streams, is in
//! `GET /api/budget`; and every `rate_limit_event` with a utilisation is an observation of the
//! window's real size that moves the proposal.

use conveyor_api::{LineState, PoolKind};
use serde_json::json;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_steps_live_spend_shows_and_the_servers_utilisation_moves_the_proposal() {
    // "auto" between $5 and $1000: the mock's calls cost cents, so the proposal stays below
    // the floor and the window's threshold is the floor.
    let mut d = Daemon::builder()
        .files(&[
            ("README.md", "x\n"),
            (".conveyor.toml", "regression = \"test -f done.txt\"\n"),
        ])
        .mock_oauth()
        .config(
            "[budget]\nthreshold_usd = \"auto\"\nthreshold_floor_usd = 5.0\nthreshold_ceiling_usd = 1000.0\n",
        )
        .start()
        .await;
    let line = d.line("live", "write done.txt").await;
    let (c, mock) = (d.client(), d.mock());
    let plan = json!({"steps": [{"title": "done", "task": "write done.txt", "size": "xs", "checks": [{"cmd": "test -f done.txt"}]}]});
    let mut first = bash("echo one");
    first["utilization"] = json!({"five_hour": 0.1, "seven_day": 0.01});
    let mut held = write("done.txt", "done\n");
    held["utilization"] = json!({"five_hour": 0.2});
    held["hold"] = json!(true);
    mock.script(
        &line.session_id,
        json!({
            "1": [write_plan(&plan), text("planned")],
            // One answered call, then the step waits on the model.
            "2": [first, held, text("done")],
        }),
    )
    .await;

    // While the second call waits: the step has spent one call, and the API shows it.
    let budget = wait_for(120, "the step's live spend", || async {
        let b = c.budget().await.unwrap();
        // The CLI writes the call's `assistant` event before its `rate_limit_event`: both.
        let calibrated = b
            .pools
            .iter()
            .any(|p| p.kind == PoolKind::Window && p.calibration.is_some());
        (calibrated
            && b.running
                .first()
                .is_some_and(|r| r.live_usd > 0.0 && r.step_n == 2))
        .then_some(b)
    })
    .await;
    let r = &budget.running[0];
    assert_eq!(
        (r.line_id.as_str(), r.kind),
        (line.id.as_str(), conveyor_api::StepKind::Executor)
    );
    // The call costs $0.0078 at sonnet's prices; the stream's usage gives its output as 1 token
    // and the meter counts it from the text, so a little less.
    assert!(
        r.live_usd <= SONNET_REQUEST_USD + 1e-9 && r.live_usd >= 0.9 * SONNET_REQUEST_USD,
        "{r:?}"
    );
    assert!(
        r.claim_usd >= r.estimate_usd && r.claim_usd >= r.live_usd,
        "{r:?}"
    );
    // One observation: (the planner's cost + this live spend) ÷ 10%. The seven days' 1% is
    // too small to say anything.
    let steps = c.line(&line.id).await.unwrap().line.steps;
    let planner = steps[0].cost_usd;
    assert!(planner > 0.0);
    // The plan's size is the running step's, as the budget learns from it.
    assert_eq!(
        steps.iter().map(|s| s.size).collect::<Vec<_>>(),
        [None, Some(conveyor_api::StepSize::Xs)]
    );
    let window = budget
        .pools
        .iter()
        .find(|p| p.kind == PoolKind::Window)
        .unwrap();
    let cal = window.calibration.clone().expect("calibrated");
    let size1 = (planner + r.live_usd) / 0.1;
    assert_eq!(cal.observations, 1);
    assert!(
        (cal.observed_size_usd - size1).abs() < 1e-9,
        "{cal:?} vs {size1}"
    );
    assert_eq!(cal.proposed_usd, cal.observed_size_usd);
    // Below the floor (and on one observation): the threshold is the floor.
    assert_eq!(window.threshold_usd, 5.0);

    // The second call's answer says 20%: a second observation moves the proposal.
    mock.release(&line.session_id).await;
    let done = wait_state(c, &line.id, LineState::AwaitingAcceptance, 120).await;
    let budget = c.budget().await.unwrap();
    assert!(budget.running.is_empty(), "{:?}", budget.running);
    let window = budget
        .pools
        .iter()
        .find(|p| p.kind == PoolKind::Window)
        .unwrap();
    let cal = window.calibration.clone().expect("calibrated");
    assert_eq!(cal.observations, 2, "{cal:?}");
    // The second: the planner and the step's two calls as the meter saw them, over 20%.
    let executor = done.line.steps[1].cost_usd;
    assert!(
        (executor - 3.0 * SONNET_REQUEST_USD).abs() < 1e-9,
        "three calls: {executor}"
    );
    let size2_low = (planner + 2.0 * 0.9 * SONNET_REQUEST_USD) / 0.2;
    let size2_high = (planner + 2.0 * SONNET_REQUEST_USD) / 0.2;
    let median_low = f64::midpoint(size1, size2_low);
    let median_high = f64::midpoint(size1, size2_high);
    assert!(
        cal.observed_size_usd >= median_low - 1e-9 && cal.observed_size_usd <= median_high + 1e-9,
        "{cal:?} not in {median_low}..{median_high}"
    );
    assert!(
        (cal.observed_size_usd - size1).abs() > 1e-6,
        "the proposal moved"
    );
    assert!(cal.spread_usd > 0.0);
    // `conveyord budget` says the same.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_conveyord"))
        .args(["budget", "--url", d.url(), "--token", TOKEN])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("server's view: size") && text.contains("from 2 observations"),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    d.stop().await;
}
