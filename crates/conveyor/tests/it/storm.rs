//! A `kill -9` storm: the real `conveyord` killed at seeded random moments while lines of a
//! planner and three executor steps run with the real `claude` against the scripted mock —
//! mid-run, between a run's `system/init` and its first reply, inside the Stop hook (its
//! checks sleep), during checkpoint commits, during the merge (its regression sleeps), during
//! a deploy and its health check, during a judge run — and restarted after each kill. At the
//! end every line has finished (a daemon crash is never a reason to wake Anton), no finished
//! step got a new request, no step's work is doubled, and no agent is left running.
//!
//! `KILLS` (default 20), `STORM_SEED` (default 21) and `STORM_STEPS` (executor steps per line,
//! default 3) set the storm; `docs/conveyor.md` has the long run by hand.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use conveyor_api::{LineState, StepState};
use serde_json::{Value, json};

use crate::support::*;

/// A small deterministic generator (xorshift64*): the storm is the same for a seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Milliseconds in `lo..hi`.
    fn ms(&mut self, lo: u64, hi: u64) -> Duration {
        Duration::from_millis(lo + self.next() % (hi - lo))
    }
}

fn env_or(key: &str, default: u64) -> u64 {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Executor steps per line.
fn steps() -> i64 {
    i64::try_from(env_or("STORM_STEPS", 3)).unwrap_or(3)
}

/// The plan: the executor steps, each appending its number to `steps.txt`; their Stop-hook checks
/// sleep, so kills land inside the hook too.
fn plan() -> Value {
    let steps: Vec<Value> = (2..2 + steps())
        .map(|n| {
            json!({"title": format!("step {n}"), "task": format!("append {n}"),
                "checks": [{"cmd": format!("sleep 0.3 && grep -qx {n} steps.txt")}]})
        })
        .collect();
    json!({"level": "light", "steps": steps})
}

/// The project's checklist: the regression sleeps (kills land in the gate and the merge); with
/// `deploy`, a deploy and a health check that sleep too.
fn checklist(deploy_dir: Option<&std::path::Path>) -> String {
    let mut t = "regression = \"sleep 0.3 && test -f a.txt\"\n".to_string();
    if let Some(dir) = deploy_dir {
        let d = dir.display();
        t.push_str(&format!(
            "deploy = \"sleep 0.5 && echo $CONVEYOR_COMMIT > {d}/current\"\nhealth_check = \"sleep 0.2 && test \\\"$(cat {d}/current)\\\" = \\\"$CONVEYOR_COMMIT\\\"\"\nrollback = \"echo $CONVEYOR_PREVIOUS_COMMIT > {d}/current\"\nhealth_retries = 3\nhealth_interval_secs = 0\n"
        ));
    }
    t
}

// The figures go to stderr, for docs/benchmarks/conveyor.md.
#[allow(clippy::print_stderr)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_9_storm_finishes_every_line_and_reruns_no_finished_step() {
    let kills = env_or("KILLS", 20);
    let mut rng = Rng(env_or("STORM_SEED", 21) | 1);
    let deploys = tempfile::tempdir().unwrap();
    let plain = checklist(None);
    let mut d = Daemon::builder()
        .files(&[("a.txt", "a\n"), (".conveyor.toml", &plain)])
        .mock()
        .config("slots = 3")
        .spawn()
        .await;
    let p = d.project().await.to_string();
    let q = d
        .add_project("q", &[("a.txt", "a\n"), (".conveyor.toml", &plain)])
        .await;
    let with_deploy = checklist(Some(deploys.path()));
    let r = d
        .add_project("r", &[("a.txt", "a\n"), (".conveyor.toml", &with_deploy)])
        .await;

    // Three lines, one per project; the one in `q` writes a fork its judge decides (a judge run
    // to kill), the one in `r` deploys.
    let mut lines = Vec::new();
    for (project, title) in [(&p, "plain"), (&q, "judged"), (&r, "deployed")] {
        let l = d.line_in(project, title, title, 0).await;
        let mut script = json!({"1": [write_plan(&plan()), text("planned")]});
        for n in 2..2 + steps() {
            let mut cmd = format!("echo {n} >> steps.txt");
            if title == "judged" && n == 3 {
                let fork = json!({"kind": "fork", "text": "Keep the cache in memory or on disk",
                    "options": ["memory", "disk"], "default": "memory", "why": "scripted",
                    "reversible": true, "expensive": false});
                cmd.push_str(&format!(" && echo '{fork}' >> \"$CONVEYOR_JOURNAL\""));
            }
            script[n.to_string()] = json!([bash(&cmd), text(&format!("step {n} done"))]);
        }
        d.mock().script(&l.session_id, script).await;
        d.mock()
            .script_line(
                &l.id,
                "judge",
                json!({"*": [judge_verdict(&[("cache in memory", "decided", None)]), text("judged")]}),
            )
            .await;
        lines.push(l);
    }

    // When each step was first seen done: a request for it after that is a rerun.
    let mut done_at: HashMap<(String, i64), u64> = HashMap::new();
    let started = Instant::now();
    let now_ms = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64
    };
    let mut killed = 0;
    let mut finished = false;
    while killed < kills && !finished {
        let until = Instant::now() + rng.ms(200, 2500);
        while Instant::now() < until {
            finished = true;
            for l in &lines {
                let Ok(detail) = d.client().line(&l.id).await else {
                    finished = false;
                    continue;
                };
                for s in &detail.line.steps {
                    if s.state == StepState::Done {
                        done_at
                            .entry((l.id.clone(), i64::from(s.n)))
                            .or_insert_with(now_ms);
                    }
                }
                assert!(
                    !matches!(
                        detail.line.state,
                        LineState::NeedsHuman | LineState::Blocked
                    ),
                    "after {killed} kills, line {} stopped in {:?}: {:?} ({:?})\nsteps: {:#?}",
                    l.title,
                    detail.line.state,
                    detail.line.reason,
                    detail.line.reason_code,
                    detail.line.steps
                );
                finished &= detail.line.state == LineState::AwaitingAcceptance;
            }
            if finished {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if !finished {
            d.kill9();
            killed += 1;
            d.restart().await;
        }
    }
    let mut states = Vec::new();
    for l in &lines {
        let done = wait_state(d.client(), &l.id, LineState::AwaitingAcceptance, 240).await;
        for s in &done.line.steps {
            done_at
                .entry((l.id.clone(), i64::from(s.n)))
                .or_insert_with(now_ms);
        }
        states.push(done);
    }

    // No finished step got a new request: in each line's session, no request for a step after
    // it was seen done, and every step's requests before the next step's.
    let log = d.mock().log().await;
    let mut reruns = 0;
    for l in &lines {
        let reqs: Vec<&Value> = log
            .iter()
            .filter(|e| {
                e["kind"] == "messages"
                    && e["session"] == l.session_id.as_str()
                    && e["side"] != true
            })
            .collect();
        for e in &reqs {
            let n = e["step"].as_i64().unwrap_or(0);
            if let Some(at) = done_at.get(&(l.id.clone(), n))
                && e["at"].as_u64().unwrap_or(0) > *at
            {
                reruns += 1;
                eprintln!(
                    "rerun: line {} step {n} at {} (done seen {at})",
                    l.title, e["at"]
                );
            }
        }
        for n in 1..1 + steps() {
            let last = reqs.iter().rposition(|e| e["step"] == n);
            let first_next = reqs.iter().position(|e| e["step"] == n + 1);
            if let (Some(last), Some(next)) = (last, first_next) {
                assert!(
                    last < next,
                    "line {}: step {n} ran again after step {} began",
                    l.title,
                    n + 1
                );
            }
        }
    }
    // No step's work doubled: each line's steps appended once each, on main.
    for (l, repo) in lines.iter().zip(["repo", "q", "r"]) {
        let dir = d.repo().parent().unwrap().join(repo);
        let text = git(&dir, &["show", "main:steps.txt"]);
        let want: String = (2..2 + steps()).map(|n| format!("{n}\n")).collect();
        assert_eq!(text, want, "line {}", l.title);
    }
    // The deploy ran once per merge that reached it and was green (one cut by a kill is
    // settled by its health check, not run again); production runs main.
    let deployed = &states[2];
    assert!(
        deployed
            .line
            .deploys
            .iter()
            .all(|d| d.outcome == conveyor_api::DeployOutcome::Green),
        "{:#?}",
        deployed.line.deploys
    );
    assert_eq!(
        deployed.line.deploys.len(),
        1,
        "{:#?}",
        deployed.line.deploys
    );
    let production = std::fs::read_to_string(deploys.path().join("current")).unwrap();
    let r_main = git(
        &d.repo().parent().unwrap().join("r"),
        &["rev-parse", "main"],
    );
    assert_eq!(production.trim(), r_main.trim());
    // The judged fork is decided once: one question (a step run again after a cut attempt
    // writes it again: that repeat is its duplicate), judged by one judge step that is done.
    let judged = &states[1];
    let own: Vec<_> = judged
        .questions
        .iter()
        .filter(|q| q.status != conveyor_api::QuestionStatus::Duplicate)
        .collect();
    assert_eq!(own.len(), 1, "{:#?}", judged.questions);
    assert_eq!(own[0].status, conveyor_api::QuestionStatus::Decided);
    assert!(
        judged
            .questions
            .iter()
            .all(|q| q.duplicate_of.is_none()
                || q.duplicate_of.as_deref() == Some(own[0].id.as_str())),
        "{:#?}",
        judged.questions
    );
    let judges: Vec<_> = judged
        .line
        .steps
        .iter()
        .filter(|s| s.kind == conveyor_api::StepKind::Judge)
        .collect();
    assert_eq!(judges.len(), 1, "{judges:#?}");
    assert_eq!(judges[0].state, StepState::Done);
    // No agent left running.
    let mut leftovers = 0;
    for s in states.iter().flat_map(|l| l.line.steps.iter()) {
        leftovers += conveyor::exec::groups_with_env("CONVEYOR_STEP", &s.id).len();
    }
    eprintln!(
        "storm: {killed} kills over {:.0?}, {} lines, {} finished, {reruns} reruns of finished steps, {leftovers} agents left",
        started.elapsed(),
        lines.len(),
        states
            .iter()
            .filter(|l| l.line.state == LineState::AwaitingAcceptance)
            .count()
    );
    assert_eq!(reruns, 0);
    assert_eq!(leftovers, 0);
    assert!(
        killed > 0,
        "the lines finished before the first kill: nothing was tested"
    );
    d.kill9();
}
