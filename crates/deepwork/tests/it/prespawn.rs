//! The bridge started before its message is ready (Linux): the same command line and input as
//! a bridge started when the message is ready, started early enough to overlap deepwork's own
//! work, and never left behind — cancelled, failed, or deepwork killed with `kill -9`.
//!
//! The bridge's `node` is a shell script (`Node` below) that logs each start — its pid (which
//! node keeps, the script `exec`s it), whether its `--file` is a named pipe, whether it got
//! `--new` — and then becomes node running the fake bridge.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use deepwork::{Ask, BridgeConfig, Cancel, Event, Limits, Loop, Prompts, RunError, Sandbox};
use serde_json::json;
use tempfile::TempDir;

use crate::support::*;

/// How long a test waits for something that takes milliseconds.
const LIMIT: Duration = Duration::from_secs(30);

/// What the `node` script does besides logging.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Becomes node at once.
    Plain,
    /// A `--new` start waits until the gate file exists (a slow Node start-up whose pace the
    /// test controls).
    GateNew,
    /// Exits 1 when its `--file` is a named pipe: a bridge that reads only regular files.
    RefusePipe,
}

/// One logged start of the bridge.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Start {
    pid: u32,
    /// `pipe` or `file`.
    kind: String,
    /// `--new` given.
    new: bool,
}

#[derive(Debug)]
struct Node {
    dir: TempDir,
    path: PathBuf,
}

impl Node {
    /// The script also sets the fake bridge's scenario and log to `b`'s (the runs in this
    /// process cannot set the environment the bridge inherits).
    fn new(mode: Mode, b: &Bridge) -> Node {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::Builder::new()
            .prefix("dw-node")
            .tempdir()
            .unwrap();
        let starts = dir.path().join("starts.txt");
        let gate = dir.path().join("gate");
        let mut script = format!(
            r#"#!/bin/sh
export FAKE_BRIDGE_SCENARIO='{scenario}' FAKE_BRIDGE_LOG='{log}'
file=; prev=; new=old
for a in "$@"; do
  [ "$prev" = --file ] && file=$a
  [ "$a" = --new ] && new=new
  prev=$a
done
kind=file; [ -p "$file" ] && kind=pipe
echo "$$ $kind $new" >> '{starts}'
"#,
            starts = starts.display(),
            scenario = b.scenario.display(),
            log = b.log.display(),
        );
        match mode {
            Mode::Plain => {}
            Mode::GateNew => script.push_str(&format!(
                "if [ $new = new ]; then while [ ! -e '{}' ]; do sleep 0.02; done; fi\n",
                gate.display()
            )),
            Mode::RefusePipe => script.push_str(
                "if [ $kind = pipe ]; then echo \"REFUSED: $file is not a regular file\" >&2; exit 1; fi\n",
            ),
        }
        script.push_str("exec node \"$@\"\n");
        let path = write(dir.path(), "node", script);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        Node { dir, path }
    }

    fn starts(&self) -> Vec<Start> {
        let text = std::fs::read_to_string(self.dir.path().join("starts.txt")).unwrap_or_default();
        text.lines()
            .map(|l| {
                let f: Vec<&str> = l.split(' ').collect();
                Start {
                    pid: f[0].parse().unwrap(),
                    kind: f[1].to_owned(),
                    new: f[2] == "new",
                }
            })
            .collect()
    }

    fn kinds(&self) -> Vec<String> {
        self.starts()
            .iter()
            .map(|s| format!("{} {}", s.kind, if s.new { "new" } else { "first" }))
            .collect()
    }

    /// Fails unless every logged start has ended.
    #[track_caller]
    fn assert_all_gone(&self) {
        for s in self.starts() {
            let gone = wait_pid_gone(s.pid, LIMIT);
            if !gone {
                let _ = Command::new("kill")
                    .arg("-9")
                    .arg(s.pid.to_string())
                    .status();
            }
            assert!(gone, "bridge process {} outlived the run: {s:?}", s.pid);
        }
    }
}

fn project() -> Project {
    let p = Project::named("проект #2");
    p.write("src/lib.rs", "pub fn needle() {}\n")
        .write("src/main.rs", "fn main() { needle(); }\n")
        .write("README.md", "# needle\n");
    p
}

/// Answer 1 asks for a FIND and a LIST, answer 2 for nothing: the benchmark's whole run.
fn two_steps() -> Bridge {
    Bridge::answers(&["=== FIND: needle ===\n=== LIST: **/*.rs ===\n", "Done."])
}

/// A call's argv with the bridge's temporary folder replaced by `<tmp>`.
fn argv_without_tmp(b: &Bridge, call: usize) -> Vec<String> {
    let c = &b.calls()[call];
    let tmp = Path::new(c["file"].as_str().unwrap())
        .parent()
        .unwrap()
        .display()
        .to_string();
    b.argv(call)
        .into_iter()
        .map(|a| a.replace(&tmp, "<tmp>"))
        .collect()
}

#[test]
fn a_prespawned_bridge_gets_the_same_argv_and_input_as_one_started_late() {
    let p = project();
    let mut runs = Vec::new();
    for prespawn in [true, false] {
        let b = two_steps();
        let node = Node::new(Mode::Plain, &b);
        let out = deepwork()
            .config(json!({ "node": node.path, "prespawn": prespawn }))
            .dir(&p)
            .bridge(&b)
            .args(["--json", "where is the needle?"])
            .run();
        out.expect_code(0);
        assert_eq!(out.json()["stop_reason"], "no_requests", "{}", out.dump());
        let kind = if prespawn { "pipe" } else { "file" };
        assert_eq!(
            node.kinds(),
            [format!("{kind} first"), format!("{kind} new")],
            "{}",
            out.dump()
        );
        // The process that was started early is the one that read the message.
        let pids: Vec<u32> = node.starts().iter().map(|s| s.pid).collect();
        let logged: Vec<u32> = b
            .calls()
            .iter()
            .map(|c| c["pid"].as_u64().unwrap() as u32)
            .collect();
        assert_eq!(pids, logged);
        node.assert_all_gone();
        runs.push((b.inputs(), argv_without_tmp(&b, 0), argv_without_tmp(&b, 1)));
    }
    let (on, off) = (&runs[0], &runs[1]);
    assert_eq!(on.0.len(), 2);
    assert_eq!(on.0, off.0, "the messages differ byte for byte");
    assert_contains(&on.0[1], "src/lib.rs:1: pub fn needle() {}");
    assert_eq!(
        on.1,
        [
            "ask",
            "--chat",
            "think",
            "--file",
            "<tmp>/step1.txt",
            "--out",
            "<tmp>/ans1.txt",
            "--quiet"
        ]
    );
    assert_eq!((&on.1, &on.2), (&off.1, &off.2));
    assert_eq!(on.2[3], "--new");
}

/// Runs the loop in this process with the real bridge transport on the fake bridge (its
/// scenario and log are `node`'s).
/// `on_tools_done` is called when step 1's requests have run, before step 2's message is
/// built.
fn run_lib(
    p: &Project,
    node: &Node,
    prespawn: bool,
    cancel: &Cancel,
    mut on_tools_done: impl FnMut(),
) -> Result<deepwork::Outcome, RunError> {
    let sandbox = Sandbox::new(&p.root).unwrap();
    let prompts = Prompts::default();
    let lp = Loop {
        sandbox: &sandbox,
        prompts: &prompts,
        limits: Limits::default(),
        index: None,
    };
    let mut transport = deepwork::Bridge::new(BridgeConfig {
        node: node.path.clone(),
        bridge: fake_bridge_path(),
        chat: "think".into(),
        timeout: LIMIT,
        debug_port: 9333,
        chat_url: "x".into(),
        prespawn,
    })
    .unwrap();
    let ask = Ask {
        question: "where is the needle?".into(),
        files: vec![],
        steps: 4,
    };
    let mut called = false;
    lp.run(&ask, &mut transport, cancel, &mut |e| {
        if let Event::RequestExecuted { n: 1, .. } = e
            && !called
        {
            called = true;
            on_tools_done();
        }
    })
}

#[test]
fn step_2s_bridge_is_running_before_its_message_is_ready() {
    let p = project();
    let b = two_steps();
    let node = Node::new(Mode::Plain, &b);
    let mut seen = Vec::new();
    let out = run_lib(&p, &node, true, &Cancel::new(), || {
        // Step 1's FIND and LIST have run; step 2's message is not built yet. Its bridge has
        // been started already (before the tools, see the loop's own tests): wait for it to
        // show up — it never would if it were started only when its message is ready.
        wait_until(LIMIT, "step 2's bridge to start", || {
            node.starts().len() == 2
        });
        seen = node.kinds();
    })
    .unwrap();
    assert_eq!(seen, ["pipe first", "pipe new"]);
    // ...and it had not read anything yet: the fake bridge logs a call once it has its input.
    assert_eq!(out.steps.len(), 2);
    assert_eq!(b.calls().len(), 2);
    assert_contains(&b.inputs()[1], "src/main.rs:1: fn main() { needle(); }");
    node.assert_all_gone();
}

#[test]
fn with_prespawn_off_step_2s_bridge_starts_only_when_its_message_is_ready() {
    let p = project();
    let b = two_steps();
    let node = Node::new(Mode::Plain, &b);
    let mut seen = Vec::new();
    run_lib(&p, &node, false, &Cancel::new(), || seen = node.kinds()).unwrap();
    assert_eq!(seen, ["file first"]);
    assert_eq!(node.kinds(), ["file first", "file new"]);
    node.assert_all_gone();
}

#[test]
fn a_cancelled_run_kills_the_waiting_bridge_without_giving_it_a_message() {
    let p = project();
    let b = two_steps();
    let node = Node::new(Mode::Plain, &b);
    let cancel = Cancel::new();
    let e = run_lib(&p, &node, true, &cancel, || {
        wait_until(LIMIT, "step 2's bridge to start", || {
            node.starts().len() == 2
        });
        // pult's Stop button, while step 2's bridge waits for its message.
        cancel.cancel();
    })
    .unwrap_err();
    assert!(matches!(e, RunError::Cancelled { step: 2, .. }), "{e}");
    node.assert_all_gone();
    // Step 2's bridge never got a message: not even an empty one.
    assert_eq!(b.calls().len(), 1);
}

#[test]
fn a_run_that_fails_while_a_bridge_waits_leaves_no_bridge() {
    // A failure between starting step 2's bridge and sending its message can only be a
    // panic (the step's own work does not fail): the transport's drop ends the bridge.
    let p = project();
    let b = two_steps();
    let node = Node::new(Mode::Plain, &b);
    let r = std::panic::catch_unwind(|| {
        run_lib(&p, &node, true, &Cancel::new(), || {
            wait_until(LIMIT, "step 2's bridge to start", || {
                node.starts().len() == 2
            });
            panic!("the step failed");
        })
    });
    assert!(r.is_err());
    assert_eq!(node.starts().len(), 2);
    node.assert_all_gone();
    assert_eq!(b.calls().len(), 1);
}

#[test]
fn a_bridge_that_dies_at_start_gives_its_stderr_not_a_hang() {
    let p = project();
    let b = two_steps();
    // The fake bridge exits 2 before it reads its --file.
    std::fs::write(&b.scenario, "{ broken").unwrap();
    let node = Node::new(Mode::Plain, &b);
    let out = deepwork()
        .config(json!({ "node": node.path }))
        .dir(&p)
        .bridge(&b)
        .arg("q")
        .run();
    out.expect_code(3);
    assert_contains(&out.stderr, "bridge failed with exit status: 2");
    assert_contains(&out.stderr, "fake-bridge: cannot read scenario");
    // It died without reading the pipe; the step was tried once more from a regular file
    // (which gives today's error), and the run did not wait for its timeout.
    assert_eq!(node.kinds(), ["pipe first", "file first"]);
    assert!(out.elapsed < Duration::from_secs(20), "{:?}", out.elapsed);
    assert!(b.calls().is_empty());
    node.assert_all_gone();
}

#[test]
fn a_bridge_that_will_not_read_a_pipe_gets_regular_files() {
    let p = project();
    let b = two_steps();
    let node = Node::new(Mode::RefusePipe, &b);
    let out = deepwork()
        .config(json!({ "node": node.path }))
        .dir(&p)
        .bridge(&b)
        .args(["--json", "q"])
        .run();
    out.expect_code(0);
    // Refused once, then the rest of the run starts bridges when their message is ready.
    assert_eq!(node.kinds(), ["pipe first", "file first", "file new"]);
    assert_eq!(b.calls().len(), 2);
    assert_contains(&out.stderr, "\"prespawn\": false");
    node.assert_all_gone();
}

#[test]
fn kill_9_of_deepwork_kills_the_bridge_waiting_for_its_message() {
    let p = project();
    let b = two_steps();
    // Step 2's Node start-up does not end until the gate opens: its bridge is waiting for its
    // message (deepwork tries to open the pipe) when deepwork is killed.
    let node = Node::new(Mode::GateNew, &b);
    let (dw, _home) = deepwork()
        .config(json!({ "node": node.path }))
        .dir(&p)
        .bridge(&b)
        .arg("q")
        .spawn();
    let mut run = KillOnDrop { dw, node: &node };
    wait_until(LIMIT, "step 2's bridge to start", || {
        node.starts().len() == 2
    });
    assert_eq!(node.kinds(), ["pipe first", "pipe new"]);
    run.dw.kill().unwrap(); // SIGKILL
    run.dw.wait().unwrap();
    let waiting = node.starts()[1].pid;
    assert!(
        wait_pid_gone(waiting, LIMIT),
        "bridge {waiting} outlived deepwork killed with kill -9"
    );
    assert_eq!(b.calls().len(), 1);
}

/// Whatever the test saw, nothing it started lives on: deepwork is killed, then whatever
/// bridge survived it.
struct KillOnDrop<'a> {
    dw: std::process::Child,
    node: &'a Node,
}

impl Drop for KillOnDrop<'_> {
    fn drop(&mut self) {
        let _ = self.dw.kill();
        let _ = self.dw.wait();
        for s in self.node.starts() {
            if pid_alive(s.pid) {
                let _ = Command::new("kill")
                    .arg("-9")
                    .arg(s.pid.to_string())
                    .status();
            }
        }
    }
}
