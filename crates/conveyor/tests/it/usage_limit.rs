//! A usage limit (OAuth-style 429 with the unified rate-limit headers) in the middle of a step:
//! the worktree is rolled back to the checkpoint, the line parks until the reset time the CLI
//! reported, and then the same session is resumed.

use conveyor_api::{Line, LineState, StepState};
use serde_json::{Value, json};

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

/// How much of a step cut by the usage limit is really lost (docs/benchmarks/budget.md, "A cut
/// step: what is really lost"), measured through the daemon with the real CLI and the mock's
/// counted usage (the cost of each request computed from what the CLI sends, with the prompt
/// cache honoured from the CLI's own breakpoints). One executor step of `TURNS` turns (reads of
/// sizeable modules, every third turn a new file written) runs on three lines one after another:
/// uncut, and cut by the five-hour limit at turn 4 and at turn 9. A cut line's worktree goes
/// back to the checkpoint and its session is resumed after the reset, when the cache has
/// expired; the resumed attempt writes the rolled-back files again and does the rest. The
/// figures are printed; `scripts/bench/resume-measured.mjs` measures longer steps.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::print_stderr)] // the measured figures, for the benchmark's notes
async fn a_usage_limit_cut_loses_the_cold_cache_and_the_rewrites_not_the_work() {
    let files = cut_files();
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let mut d = Daemon::builder().files(&files).mock_oauth().start().await;
    d.mock().counted_usage().await;
    let uncut = measure_cut(&d, None).await;
    let uncut_usd = uncut.attempts[0];
    let mut lines = vec![format!("uncut: {uncut_usd:.4}")];
    let mut kept = vec![];
    for k in [4, 9] {
        let cut = measure_cut(&d, Some(k)).await;
        let [cut_usd, resumed_usd] = cut.attempts[..] else {
            panic!("cut at {k}: two attempts expected, got {:?}", cut.attempts)
        };
        let lost = cut_usd + resumed_usd - uncut_usd;
        lines.push(format!(
            "cut at {k}: cut {cut_usd:.4}, resumed {resumed_usd:.4}, lost {lost:.4}, kept {:.1}%",
            100.0 * (1.0 - lost / cut_usd)
        ));
        let reqs = &cut.requests;
        let resumed: Vec<&Value> = reqs.iter().filter(|e| e["attempt"] == 2).collect();
        let first = resumed[0];
        // The resumed session starts with the whole earlier conversation: the cut attempt's
        // prompt and the output of the last module it read (carried by the request the 429
        // answered, never billed), and the note that the worktree was rolled back.
        let conv = first["conversation"].as_str().unwrap();
        let last_read = (0..k).rev().find(|&i| !is_edit(i)).unwrap();
        assert!(conv.contains("conveyor step 2 attempt 1"), "{conv}");
        assert!(
            conv.contains(&format!("module m{last_read} ")),
            "cut at {k}: {conv}"
        );
        assert!(conv.contains("rolled back to the last checkpoint"));
        // The reset expired the cache: the first resumed request writes the whole conversation
        // again, at least all that the cut attempt's last billed request held.
        let held = |e: &Value| {
            e["usage"]["cache_read_input_tokens"].as_u64().unwrap()
                + e["usage"]["cache_creation_input_tokens"].as_u64().unwrap()
        };
        let last_billed = reqs
            .iter()
            .rfind(|e| e["attempt"] == 1 && e["reply"] != "limit")
            .unwrap();
        assert_eq!(first["usage"]["cache_read_input_tokens"], 0, "{first}");
        assert!(
            first["usage"]["cache_creation_input_tokens"]
                .as_u64()
                .unwrap()
                >= held(last_billed),
            "{first} vs {last_billed}"
        );
        // A cut costs something (the cold cache, the rewrites), but never more than what the cut
        // attempt spent plus what the resume pays to get back to where it was: the first
        // request (the whole conversation written again) and the rewrites of the lost files.
        let rewrites = (0..k).filter(|&i| is_edit(i)).count();
        let skip = rewrites.max(1);
        let catch_up: f64 = resumed.iter().take(skip).map(|e| sonnet_usd(e)).sum();
        assert!(lost > 0.0, "cut at {k}: nothing lost: {lines:?}");
        assert!(
            lost <= cut_usd + catch_up + 1e-9,
            "cut at {k}: lost {lost} > cut {cut_usd} + catch-up {catch_up}"
        );
        // Past the catch-up, the resumed attempt pays for the turns after the cut about what
        // the uncut run paid for them (its context holds the rewrites too): it does not pay for
        // the turns before the cut again, as a session started over would.
        let after: f64 = resumed.iter().skip(skip).map(|e| sonnet_usd(e)).sum();
        let from = (k + skip - rewrites) as u64;
        let tail: f64 = uncut
            .requests
            .iter()
            .filter(|e| e["turn"].as_u64().unwrap() >= from)
            .map(sonnet_usd)
            .sum();
        assert!(
            (after - tail).abs() <= 0.25 * tail,
            "cut at {k}: after the catch-up {after} vs the uncut run's same turns {tail}"
        );
        kept.push(1.0 - lost / cut_usd);
    }
    // A later cut keeps a larger share of what it spent: what the resume pays again (the
    // session's context written to the cold cache, the rewrites) grows slower than the work
    // done before the cut, which the resumed session does not do again.
    assert!(kept[1] > kept[0], "{lines:?}");
    eprintln!(
        "a step of {TURNS} turns, cut by the usage limit:\n{}",
        lines.join("\n")
    );
    d.stop().await;
}

/// The turns of the measured executor step.
const TURNS: usize = 12;

/// Every third turn writes a new file; the others read a module (Read or `cat`).
fn is_edit(i: usize) -> bool {
    i % 3 == 2
}

fn cut_turn(i: usize) -> Value {
    if is_edit(i) {
        write(&format!("out/f{i}.rs"), &filler(1000 + i, 2000))
    } else if i.is_multiple_of(2) {
        json!({"tool": "Read", "input": {"file_path": format!("{{{{cwd}}}}/src/m{i}.rs")}})
    } else {
        bash(&format!("cat src/m{i}.rs"))
    }
}

/// The project: a module of 4 kB per turn (each opens with `// module m<i> `, so a test can
/// tell which outputs a conversation holds) and the folder the step writes into.
fn cut_files() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = (0..TURNS)
        .map(|i| {
            let text = format!("// module m{i} \n{}", filler(i, 4000));
            (format!("src/m{i}.rs"), text)
        })
        .collect();
    files.push(("out/.keep".into(), String::new()));
    files.push((
        ".conveyor.toml".into(),
        "regression = \"test -d src\"\n".into(),
    ));
    files
}

/// `bytes` of varied, source-like text (a linear congruential sequence: the same every run).
fn filler(seed: usize, bytes: usize) -> String {
    let mut x = (seed as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) + 1;
    let mut out = String::new();
    let mut j = 0;
    while out.len() < bytes {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        out.push_str(&format!(
            "    let v{j} = compute(\"{x:016x}\", {});\n",
            x >> 48
        ));
        j += 1;
    }
    out.truncate(bytes);
    out
}

/// What one line of the measurement spent on its executor step.
struct Measured {
    /// The daemon's recorded cost of each attempt, in order.
    attempts: Vec<f64>,
    /// The mock's log of the step's requests.
    requests: Vec<Value>,
}

/// Runs one line (planner, then the measured executor step, cut at turn `cut`), from a cold
/// cache, until it awaits acceptance (its checker done, so nothing else writes the cache while
/// the next line runs).
async fn measure_cut(d: &Daemon, cut: Option<usize>) -> Measured {
    let (c, mock) = (d.client(), d.mock());
    mock.clear_cache().await;
    // Titles of one length: the prompts, so the costs, differ only by the cut.
    let title = format!("measured {}", cut.unwrap_or(0));
    let line = d.line(&title, "read the modules, write the files").await;
    let plan = json!({"level": "light", "steps": [{"title": "work", "task": "read and write", "checks": [{"cmd": "test -d src"}]}]});
    let turns: Vec<Value> = (0..TURNS).map(cut_turn).collect();
    let mut steps = json!({"1": [write_plan(&plan), text("planned")]});
    match cut {
        None => steps["2"] = json!([&turns[..], &[text("done")]].concat()),
        Some(k) => {
            let rewrites: Vec<Value> = (0..k).filter(|&i| is_edit(i)).map(cut_turn).collect();
            steps["2.1"] = json!(
                [
                    &turns[..k],
                    &[json!({"limit": "five_hour", "reset_in_secs": 3})]
                ]
                .concat()
            );
            steps["2.2"] = json!([&rewrites[..], &turns[k..], &[text("done")]].concat());
        }
    }
    mock.script(&line.session_id, steps).await;
    let done = wait_state(c, &line.id, LineState::AwaitingAcceptance, 240).await;
    let step = &done.line.steps[1];
    let attempts = if cut.is_some() { 2 } else { 1 };
    assert_eq!((step.state, step.attempts), (StepState::Done, attempts));
    let mut runs: Vec<_> = c
        .line_runs(&line.id)
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.step_n == 2)
        .collect();
    runs.sort_by_key(|r| r.attempt);
    let requests: Vec<Value> = mock
        .requests(&line.session_id)
        .await
        .into_iter()
        .filter(|e| e["step"] == 2)
        .collect();
    // The daemon records each attempt's cost as the CLI reports it; the mock's usage of the
    // attempt's requests, at the model's prices, comes to the same.
    for r in &runs {
        let billed: f64 = requests
            .iter()
            .filter(|e| e["attempt"] == r.attempt && e["reply"] != "limit")
            .map(sonnet_usd)
            .sum();
        assert!(
            (r.cost_usd - billed).abs() < 1e-6,
            "attempt {}: recorded {} vs billed {billed}",
            r.attempt,
            r.cost_usd
        );
    }
    Measured {
        attempts: runs.iter().map(|r| r.cost_usd).collect(),
        requests,
    }
}

/// One request's cost from the mock's counted usage at the prices the CLI charges for
/// `claude-sonnet-5-5` (its model with an OAuth login): $2 input, $10 output, $0.10 cache
/// read, $2.50 a 5-minute and $4 a 1-hour cache write, per million tokens.
fn sonnet_usd(e: &Value) -> f64 {
    let u = &e["usage"];
    let n = |v: &Value| v.as_f64().unwrap_or(0.0);
    let written = &u["cache_creation"];
    (2.0 * n(&u["input_tokens"])
        + 10.0 * n(&u["output_tokens"])
        + 0.1 * n(&u["cache_read_input_tokens"])
        + 2.5 * n(&written["ephemeral_5m_input_tokens"])
        + 4.0 * n(&written["ephemeral_1h_input_tokens"]))
        / 1e6
}
