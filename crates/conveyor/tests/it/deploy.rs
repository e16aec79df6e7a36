//! The deploy after the merge with the real `claude` against the mock, real git and SQLite, and
//! the project's own deploy, health-check and rollback commands writing a release marker: the
//! green path, a red health check rolled back with an `investigate` step in the line's session,
//! and deploys that never overlap, also across a `kill -9` in the middle of one.

use std::path::Path;

use conveyor_api::{DeployOutcome, LineState, StepKind};
use serde_json::json;

use crate::support::*;

/// A project whose deploy writes the deployed commit to `<releases>/current` (and logs
/// `start`/`end` with nanosecond times), whose health check reads `health.txt` of the deployed
/// commit, and whose rollback puts the previous commit back.
fn checklist(releases: &Path, deploy_sleep: u32) -> String {
    let r = releases.display();
    format!(
        r#"deploy = "echo \"start $CONVEYOR_COMMIT $(date +%s%N)\" >> {r}/log && echo $CONVEYOR_COMMIT > {r}/current && echo \"deploying $CONVEYOR_COMMIT\" && sleep {deploy_sleep} && echo \"end $CONVEYOR_COMMIT $(date +%s%N)\" >> {r}/log"
health_check = "grep -qx ok health.txt && test \"$(cat {r}/current)\" = \"$CONVEYOR_COMMIT\""
rollback = "echo \"rollback $CONVEYOR_PREVIOUS_COMMIT\" >> {r}/log && echo $CONVEYOR_PREVIOUS_COMMIT > {r}/current"
health_retries = 2
health_interval_secs = 0
health_deadline_secs = 30
"#
    )
}

fn plan() -> serde_json::Value {
    json!({"level": "light", "steps": [{"title": "change", "task": "change", "checks": [{"cmd": "true"}]}]})
}

fn main_head(repo: &Path) -> String {
    git(repo, &["rev-parse", "main"]).trim().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_red_health_check_rolls_back_and_the_line_investigates_in_its_session() {
    let releases = tempfile::tempdir().unwrap();
    let toml = checklist(releases.path(), 0);
    let d = Daemon::builder()
        .files(&[("health.txt", "ok\n"), (".conveyor.toml", &toml)])
        .mock()
        .start()
        .await;
    let (c, mock) = (d.client(), d.mock());

    // A first line deploys green.
    let good = d.line("good", "a harmless change").await;
    mock.script(
        &good.session_id,
        json!({"1": [write_plan(&plan()), text("planned")], "2": [write("a.txt", "a\n"), text("done")]}),
    )
    .await;
    let done = wait_state(c, &good.id, LineState::AwaitingAcceptance, 240).await;
    let first = main_head(d.repo());
    assert_eq!(done.line.deploys.len(), 1);
    let dep = &done.line.deploys[0];
    assert_eq!(
        (dep.outcome, dep.commit.as_str()),
        (DeployOutcome::Green, first.as_str())
    );
    assert_eq!(dep.health.len(), 1);
    assert!(dep.health[0].ok);
    assert!(dep.output_tail.contains("$ echo"), "{}", dep.output_tail);
    let current = || std::fs::read_to_string(releases.path().join("current")).unwrap();
    assert_eq!(current().trim(), first);
    c.accept(&good.id).await.unwrap();

    // A second line breaks the health check: rolled back to the first, then it investigates
    // in its own session and deploys again, green.
    let bad = d.line("bad", "a change that breaks health").await;
    mock.script(
        &bad.session_id,
        json!({
            "1": [write_plan(&plan()), text("planned")],
            "2": [bash("echo broken > health.txt"), text("done")],
            // Step 3 is the tester; 4 the investigation after the rollback.
            "4": [bash("echo ok > health.txt"), text("health restored another way")],
        }),
    )
    .await;
    let done = wait_state(c, &bad.id, LineState::AwaitingAcceptance, 240).await;
    let kinds: Vec<StepKind> = done.line.steps.iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds,
        [
            StepKind::Planner,
            StepKind::Executor,
            StepKind::Tester,
            StepKind::Investigate,
            StepKind::Tester
        ]
    );
    let [red, green] = &done.line.deploys[..] else {
        panic!("{:#?}", done.line.deploys)
    };
    assert_eq!(red.outcome, DeployOutcome::RolledBack);
    assert_eq!(
        red.previous_commit, first,
        "rolled back to the last green deploy"
    );
    assert_eq!(red.health.len(), 2, "health_retries = 2: {red:#?}");
    assert!(red.health.iter().all(|h| !h.ok));
    assert!(
        red.output_tail.contains("$ echo \"rollback"),
        "{}",
        red.output_tail
    );
    assert_eq!(green.outcome, DeployOutcome::Green);
    assert_eq!(green.previous_commit, first);
    assert_eq!(current().trim(), main_head(d.repo()));
    let log = std::fs::read_to_string(releases.path().join("log")).unwrap();
    assert!(log.contains(&format!("rollback {first}")), "{log}");
    // The investigation ran in the line's session, told what happened and to try another way.
    let investigate = mock
        .requests(&bad.session_id)
        .await
        .into_iter()
        .find(|e| e["step"] == 4)
        .unwrap();
    let said = investigate["conversation"].as_str().unwrap();
    assert!(
        said.contains("conveyor step 2 attempt 1"),
        "the same session"
    );
    assert!(
        said.contains("was rolled back") && said.contains("another approach"),
        "{said}"
    );
    assert_eq!(done.line.rounds, 0, "rounds reset once the line is done");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deploys_never_overlap_and_one_cut_by_kill_9_is_settled_by_its_health_check() {
    let releases = tempfile::tempdir().unwrap();
    let toml = checklist(releases.path(), 3);
    let mut d = Daemon::builder()
        .files(&[("health.txt", "ok\n"), (".conveyor.toml", &toml)])
        .mock()
        .spawn()
        .await;
    let a = d.line("a", "change a").await;
    let b = d.line("b", "change b").await;
    for (l, f) in [(&a, "a.txt"), (&b, "b.txt")] {
        d.mock()
            .script(
                &l.session_id,
                json!({"1": [write_plan(&plan()), text("planned")], "2": [write(f, "x\n"), text("done")]}),
            )
            .await;
    }
    // Kill the daemon while the first deploy sleeps.
    let log = releases.path().join("log");
    wait_for(240, "the first deploy to start", || async {
        std::fs::read_to_string(&log)
            .ok()
            .filter(|t| t.contains("start"))
            .map(drop)
    })
    .await;
    d.kill9();
    d.restart().await;
    let c = d.client();
    let mut done = Vec::new();
    for l in [&a, &b] {
        done.push(wait_state(c, &l.id, LineState::AwaitingAcceptance, 240).await);
        // Accepted, as Anton would; the next line of the project started already when this one
        // began to await acceptance.
        c.accept(&l.id).await.unwrap();
    }
    let text = std::fs::read_to_string(&log).unwrap();
    let starts: Vec<&str> = text.lines().filter(|l| l.starts_with("start")).collect();
    // The cut deploy was not run again: its health check said it took.
    assert_eq!(starts.len(), 2, "{text}");
    let cut = done
        .iter()
        .flat_map(|l| &l.line.deploys)
        .find(|dep| {
            dep.output_tail
                .contains("the daemon stopped during this deploy")
        })
        .expect("one deploy was settled after the restart");
    assert_eq!(cut.outcome, DeployOutcome::Green);
    // What it printed before the kill is kept: its output went to its file as it came.
    assert!(
        cut.output_tail
            .contains(&format!("deploying {}", cut.commit)),
        "{}",
        cut.output_tail
    );
    // Never two at once: each deploy starts after the one before it ended (the cut one ended
    // when the daemon died, before the next could start).
    let times: Vec<(String, String, u128)> = text
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            Some((
                w.next()?.to_string(),
                w.next()?.to_string(),
                w.next()?.parse().ok()?,
            ))
        })
        .collect();
    // The first deploy is read from the log, not assumed to be `a`'s: CI once saw `b` go first
    // (two lines made in one millisecond were then ordered by their random ids).
    let mut started = times.iter().filter(|t| t.0 == "start");
    let first = started.next().unwrap();
    let second_start = started.next().unwrap().2;
    assert_eq!(
        cut.commit, first.1,
        "the cut deploy is the first one: {text}"
    );
    let ends_before_second: Vec<_> = times
        .iter()
        .filter(|t| t.0 == "end" && t.2 > second_start && t.1 == first.1)
        .collect();
    assert!(
        ends_before_second.is_empty(),
        "the first deploy ended after the second began: {text}"
    );
    d.kill9();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_rolled_back_line_reverts_its_merge_on_main() {
    let releases = tempfile::tempdir().unwrap();
    let toml = checklist(releases.path(), 0);
    let d = Daemon::builder()
        .files(&[("health.txt", "ok\n"), (".conveyor.toml", &toml)])
        .mock()
        .start()
        .await;
    let (c, mock) = (d.client(), d.mock());
    let before = main_head(d.repo());
    let bad = d.line("bad", "a change that breaks health").await;
    mock.script(
        &bad.session_id,
        json!({
            "1": [write_plan(&plan()), text("planned")],
            "2": [bash("echo broken > health.txt && echo new > new.txt"), text("done")],
            // The investigation is still thinking when Anton cancels.
            "4": [{"text": "looking", "hold": true}],
        }),
    )
    .await;
    let rolled = wait_state(c, &bad.id, LineState::RolledBack, 240).await;
    assert_eq!(
        rolled.line.reason_code,
        Some(conveyor_api::ReasonCode::RolledBack)
    );
    let merged = main_head(d.repo());
    assert_ne!(merged, before);
    assert!(
        d.repo().join("new.txt").exists(),
        "merged into main's checkout"
    );
    let cancelled = c.cancel(&bad.id).await.unwrap();
    assert_eq!(cancelled.state, LineState::Cancelled);
    assert!(
        cancelled
            .reason
            .as_deref()
            .unwrap()
            .contains("its merge was reverted on main"),
        "{:?}",
        cancelled.reason
    );
    // A revert commit on top of the merge: history kept, the change gone from main.
    let head = main_head(d.repo());
    assert_eq!(git(d.repo(), &["rev-parse", "main^"]).trim(), merged);
    assert!(git(d.repo(), &["log", "-1", "--format=%s", &head]).starts_with("Revert line/"));
    assert!(
        !d.repo().join("new.txt").exists(),
        "the checkout was brought along"
    );
    assert_eq!(git(d.repo(), &["show", "main:health.txt"]), "ok\n");
}
