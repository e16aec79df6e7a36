//! Watching a run: a line's runs and each run's conversation, read from its stream-json while
//! the real CLI still writes it and after, paged with `after=`, with `run_event`s on
//! `/api/events` and the daemon's token never in what is served.

use conveyor_api::{EventKind, LineState, RunOutcome, StepKind, TranscriptKind};
use serde_json::json;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_steps_conversation_is_served_in_order_and_the_token_never() {
    let d = Daemon::builder()
        .files(&[
            ("README.md", "x\n"),
            (".conveyor.toml", "regression = \"test -f done.txt\"\n"),
        ])
        .mock()
        .start()
        .await;
    let line = d.line("watched", "write done.txt").await;
    let (c, mock) = (d.client(), d.mock());
    let mut events = c.events().await.unwrap();
    let plan = json!({"steps": [{"title": "done", "task": "write done.txt", "size": "xs", "checks": [{"cmd": "test -f done.txt"}]}]});
    // The agent prints the daemon's token: it must never be served.
    let mut echo = bash(&format!("echo the token is {TOKEN}"));
    echo["say"] = json!("Looking **first**.");
    let missing = json!({"tool": "Read", "input": {"file_path": "{{cwd}}/missing.txt"}});
    let mut held = text("All done.");
    held["hold"] = json!(true);
    mock.script(
        &line.session_id,
        json!({
            "1": [write_plan(&plan), text("planned")],
            "2": [echo, missing, write("done.txt", "done\n"), held],
        }),
    )
    .await;

    use TranscriptKind::*;
    let step2 = |runs: &[conveyor_api::Run]| runs.iter().find(|r| r.step_n == 2).cloned();
    // While the last answer is held: the step's run shows its three calls and their results.
    let (run, live) = wait_for(180, "the running step's tool calls", || async {
        let runs = c.line_runs(&line.id).await.unwrap();
        let run = step2(&runs)?;
        let t = c.transcript(run.id, 0).await.unwrap();
        (t.events.iter().filter(|e| e.kind == ToolResult).count() == 3).then_some((run, t))
    })
    .await;
    assert_eq!(run.outcome, RunOutcome::Running);
    assert_eq!(run.kind, StepKind::Executor);
    assert_eq!(run.session_id.as_deref(), Some(line.session_id.as_str()));
    // The command that continues the session by hand: in the worktree, with the agent's home.
    let resume = run.resume.clone().expect("a resume command");
    let worktree = d.worktree(&line.id);
    assert!(
        resume.starts_with(&format!("cd {} && ", worktree.display()))
            && resume.contains(&format!("HOME={} ", d.agent_home().display()))
            && resume.ends_with(&format!(" --resume {}", line.session_id)),
        "{resume}"
    );
    assert!(!live.done, "the run goes on");
    // Tokens and cost so far, metered from the messages written before the held answer.
    assert!(
        live.tokens.input > 0 && live.tokens.output > 0 && live.cost_usd > 0.0,
        "{live:?}"
    );
    let kinds: Vec<_> = live.events.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        [
            Text, ToolUse, ToolResult, ToolUse, ToolResult, ToolUse, ToolResult
        ],
        "{live:?}"
    );
    let seqs: Vec<u64> = live.events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=7).collect::<Vec<u64>>());
    assert_eq!(live.events[0].text.as_deref(), Some("Looking **first**."));
    let tools: Vec<_> = live
        .events
        .iter()
        .map(|e| e.tool.as_deref().unwrap_or(""))
        .collect();
    assert_eq!(
        tools,
        ["", "Bash", "Bash", "Read", "Read", "Write", "Write"]
    );
    // The failed Read is an error; the others are not.
    let errors: Vec<_> = live.events.iter().map(|e| e.is_error).collect();
    assert_eq!(
        errors,
        [false, false, false, false, true, false, false],
        "{live:?}"
    );
    // The token is hidden in the call's input and in its output alike.
    let served = serde_json::to_string(&live).unwrap();
    assert!(!served.contains(TOKEN), "{served}");
    assert!(
        live.events[2]
            .output
            .as_deref()
            .is_some_and(|o| o.contains("the token is [secret hidden]")),
        "{live:?}"
    );
    // The runner said how far the transcript goes, on the event stream.
    // Waited on with a bound, not slept: the event was sent before the transcript above was
    // read, so it is already in the stream.
    let seen = tokio::time::timeout(std::time::Duration::from_secs(60), async {
        while let Some(ev) = events.next().await {
            let ev = ev.unwrap();
            if ev.kind == EventKind::RunEvent
                && ev
                    .run
                    .as_ref()
                    .is_some_and(|r| r.run_id == run.id && r.seq >= 7)
            {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(seen, Ok(true), "no run_event up to the third result");

    mock.release(&line.session_id).await;
    wait_state(c, &line.id, LineState::AwaitingAcceptance, 180).await;
    let runs = c.line_runs(&line.id).await.unwrap();
    let run = step2(&runs).unwrap();
    assert_ne!(run.outcome, RunOutcome::Running);
    assert!(run.ended_at.is_some() && run.cost_usd > 0.0, "{run:?}");
    assert_eq!(runs[0].step_n, 1, "oldest first: {runs:?}");
    let all = c.transcript(run.id, 0).await.unwrap();
    assert!(all.done);
    // Once it ended, the CLI's own figure; the tokens only grew.
    assert_eq!(all.cost_usd, run.cost_usd);
    assert!(all.tokens.output > live.tokens.output, "{all:?} {live:?}");
    assert_eq!(all.events[..7], live.events[..]);
    let rest: Vec<_> = all.events[7..].iter().map(|e| e.kind).collect();
    assert_eq!(rest, [Text, Result], "{all:?}");
    assert_eq!(all.events[7].text.as_deref(), Some("All done."));
    // Paged: past the seventh event, only what came after.
    let page = c.transcript(run.id, 7).await.unwrap();
    assert_eq!(page.events, all.events[7..]);
    assert!(page.done);
    let served = serde_json::to_string(&all).unwrap();
    assert!(!served.contains(TOKEN), "{served}");
    // An unknown run is a 404, and so is an id no run could have; an `after` that is no whole
    // number is the API's 400, with its body.
    let http = reqwest::Client::new();
    let status = |path: String| {
        let req = http
            .get(format!("{}{path}", d.url()))
            .bearer_auth(TOKEN)
            .send();
        async move {
            let r = req.await.unwrap();
            let code = r.status().as_u16();
            let body: serde_json::Value = r.json().await.unwrap();
            (code, body["code"].as_str().unwrap_or_default().to_string())
        }
    };
    assert_eq!(
        status("/api/runs/999999/transcript".into()).await,
        (404, "not_found".into())
    );
    assert_eq!(
        status("/api/runs/abc/transcript".into()).await,
        (404, "not_found".into())
    );
    assert_eq!(
        status(format!("/api/runs/{}/transcript?after=x", run.id)).await,
        (400, "bad_request".into())
    );
}

/// A daemon killed with -9 while its agent wrote: the run's log ends in half a line (here made
/// so by hand, as the writer leaves it, cut inside a character too). After the restart the run
/// is interrupted and its conversation reads cleanly up to its last whole line, and the line
/// goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_cut_by_kill_9_reads_cleanly_after_the_restart() {
    let mut d = Daemon::builder()
        .files(&[("README.md", "x\n")])
        .mock()
        .spawn()
        .await;
    let line = d.line("cut", "write done.txt").await;
    let s = line.session_id.clone();
    let plan = json!({"steps": [{"title": "done", "task": "write done.txt", "checks": [{"cmd": "test -f done.txt"}]}]});
    d.mock()
        .script(
            &s,
            json!({
                "1": [write_plan(&plan), text("planned")],
                "2.1": [bash("echo first try"), {"text": "x", "hold": true}],
                "2": [write("done.txt", "done\n"), text("done")],
            }),
        )
        .await;
    let c = d.client().clone();
    let (run, before) = wait_for(180, "the first executor run's call and result", || async {
        let runs = c.line_runs(&line.id).await.ok()?;
        let run = runs.iter().find(|r| r.step_n == 2)?.clone();
        let t = c.transcript(run.id, 0).await.ok()?;
        t.events
            .iter()
            .any(|e| e.kind == TranscriptKind::ToolResult)
            .then_some((run, t))
    })
    .await;
    d.kill9();
    let dir = d.data().join("lines").join(&line.id);
    let log = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("step-2-1-") && n.ends_with(".ndjson"))
        })
        .expect("the executor's log");
    let mut cut =
        br#"{"type":"assistant","message":{"id":"m9","content":[{"type":"text","text":"half a "#
            .to_vec();
    cut.extend_from_slice(&"é".as_bytes()[..1]);
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    std::io::Write::write_all(&mut f, &cut).unwrap();
    drop(f);

    d.restart().await;
    let c = d.client().clone();
    wait_state(&c, &line.id, LineState::AwaitingAcceptance, 180).await;
    let runs = c.line_runs(&line.id).await.unwrap();
    let first = runs.iter().find(|r| r.id == run.id).unwrap();
    assert_ne!(first.outcome, RunOutcome::Running, "{runs:?}");
    let after = c.transcript(run.id, 0).await.unwrap();
    assert!(after.done, "{after:?}");
    assert_eq!(
        after.events, before.events,
        "the whole lines, nothing of the cut one"
    );
    // The step's second attempt has a conversation of its own.
    let second = runs
        .iter()
        .find(|r| r.step_n == 2 && r.attempt == 2)
        .unwrap_or_else(|| panic!("a second attempt: {runs:?}"));
    let t = c.transcript(second.id, 0).await.unwrap();
    assert!(
        t.done && t.events.iter().any(|e| e.tool.as_deref() == Some("Write")),
        "{t:?}"
    );
}
