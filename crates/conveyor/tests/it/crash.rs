//! `kill -9` of the real `conveyord` at several points of a line, then a restart: nothing is
//! lost, no finished step runs again (the mock counts requests per session and step), the agent
//! left running from before the crash is found and stopped, and the interrupted step is resumed
//! in its session from its checkpoint.

use conveyor_api::{LineState, StepKind, StepState};
use serde_json::{Value, json};

use crate::support::*;

async fn wait_request(mock: &Mock, session: &str, step: i64, attempt: i64, turn: i64) {
    wait_for(
        120,
        &format!("request step {step} attempt {attempt} turn {turn}"),
        || async {
            mock.requests(session)
                .await
                .iter()
                .any(|e| e["step"] == step && e["attempt"] == attempt && e["turn"] == turn)
                .then_some(())
        },
    )
    .await;
}

fn agents_of(step_id: &str) -> Vec<u32> {
    conveyor::exec::groups_with_env("CONVEYOR_STEP", step_id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_at_several_points_loses_nothing_and_reruns_no_finished_step() {
    let mut d = Daemon::builder()
        // Leftover agents exist only without the sandbox: a sandboxed run dies with its daemon
        // (sandbox_red.rs). Recovery still has to stop them for `mode = "off"`.
        .config("[sandbox]\nmode = \"off\"\n")
        .files(&[
            ("a.txt", "a\n"),
            (
                ".conveyor.toml",
                "regression = \"grep -q A a.txt && test -f b.txt\"\n",
            ),
        ])
        .mock()
        .spawn()
        .await;
    let line = d.line("crash", "change a.txt and add b.txt").await;
    let s = line.session_id.clone();
    let plan = json!({"steps": [
        {"title": "a", "task": "A in a.txt", "checks": [{"cmd": "grep -q A a.txt"}]},
        {"title": "b", "task": "add b.txt", "checks": [{"cmd": "test -f b.txt"}]}
    ]});
    d.mock()
        .script(
            &s,
            json!({
                "1.1": [write_plan(&plan), {"text": "planned", "hold": true}],
                "1": [write_plan(&plan), text("planned again")],
                "2.1": [bash("echo partial > partial.txt"), {"text": "x", "hold": true}],
                "2": [write("a.txt", "A\n"), text("a done")],
                "3": [write("b.txt", "B\n"), text("b done")],
            }),
        )
        .await;

    // Kill point 1: the planner (the session's first step) is mid-run, after system/init.
    wait_request(d.mock(), &s, 1, 1, 1).await;
    let step1 = d.client().line(&line.id).await.unwrap().line.steps[0]
        .id
        .clone();
    d.kill9();
    assert!(
        !agents_of(&step1).is_empty(),
        "the agent should outlive its daemon"
    );

    // Restart: the leftover agent is killed, the planner resumed with --resume.
    d.restart().await;
    wait_for(30, "the leftover agent to be stopped", || async {
        agents_of(&step1).is_empty().then_some(())
    })
    .await;
    // Kill point 2: the first executor step is mid-run, its tool call already made.
    wait_request(d.mock(), &s, 2, 1, 1).await;
    let wt = d.worktree(&line.id);
    assert!(wt.join("partial.txt").exists());
    let detail = d.client().line(&line.id).await.unwrap();
    let step2 = detail.line.steps[1].id.clone();
    assert_eq!(detail.line.steps[0].state, StepState::Done);
    d.kill9();
    assert!(!agents_of(&step2).is_empty());

    // Restart; kill point 3: right when step 2 is recorded done.
    d.restart().await;
    let c = d.client();
    wait_for(120, "step 2 done", || async {
        let l = c.line(&line.id).await.ok()?;
        (l.line.steps[1].state == StepState::Done).then_some(())
    })
    .await;
    let step2_requests = count(&d.mock().requests(&s).await, 2);
    d.kill9();
    assert!(agents_of(&step2).is_empty());

    d.restart().await;
    let done = wait_state(d.client(), &line.id, LineState::AwaitingAcceptance, 120).await;
    let reqs = d.mock().requests(&s).await;

    // Nothing lost: the plan's steps all done, the work on main, the interrupted half gone.
    let steps = &done.line.steps;
    let kinds: Vec<StepKind> = steps.iter().map(|s| s.kind).collect();
    // The plan's steps, then the checks of its level (medium: no level in the plan).
    assert_eq!(
        kinds,
        [
            StepKind::Planner,
            StepKind::Executor,
            StepKind::Executor,
            StepKind::Tester,
            StepKind::Reviewer
        ],
        "{steps:#?}"
    );
    assert!(
        steps.iter().all(|s| s.state == StepState::Done),
        "{steps:#?}"
    );
    assert_eq!((steps[0].attempts, steps[1].attempts), (2, 2));
    assert_eq!(
        std::fs::read_to_string(d.repo().join("a.txt")).unwrap(),
        "A\n"
    );
    assert!(d.repo().join("b.txt").exists());
    assert!(!d.repo().join("partial.txt").exists());

    // No finished step ran again: each step's requests all come before the next step's.
    for n in 1..3 {
        let last = reqs.iter().rposition(|e| e["step"] == n).unwrap();
        let first_next = reqs.iter().position(|e| e["step"] == n + 1).unwrap();
        assert!(
            last < first_next,
            "step {n} ran again after step {} began",
            n + 1
        );
    }
    assert_eq!(
        count(&reqs, 2),
        step2_requests,
        "step 2 ran again after it was done"
    );

    // The interrupted steps were resumed in the session: the resumed run saw the interrupted
    // conversation and was told about the rollback.
    for n in [1, 2] {
        let r = reqs
            .iter()
            .find(|e| e["step"] == n && e["attempt"] == 2)
            .unwrap();
        let conv = r["conversation"].as_str().unwrap();
        assert!(
            conv.contains(&format!("conveyor step {n} attempt 1")),
            "{conv}"
        );
        assert!(
            conv.contains("rolled back to the last checkpoint"),
            "{conv}"
        );
    }
    assert!(reqs.iter().all(|e| e["session"] == s.as_str()));
    d.kill9();
}

fn count(reqs: &[Value], step: i64) -> usize {
    reqs.iter().filter(|e| e["step"] == step).count()
}
