//! The loop driven by scripted transports: what it sends, what it reports, when it stops, and
//! what it asks of the transport in between.

use std::collections::VecDeque;
use std::sync::Mutex;

use super::{Ask, Event, Loop, Outcome, RunError, StopReason};
use crate::exec::Cancel;
use crate::index::Index;
use crate::prompt::Prompts;
use crate::sandbox::Sandbox;
use crate::tools::Limits;
use crate::transport::{Transport, TransportError};

/// A transport that answers from a script and keeps what it was sent.
struct Script {
    answers: VecDeque<&'static str>,
    sent: Vec<String>,
}

impl Transport for Script {
    fn send(&mut self, _n: usize, message: &str, _c: &Cancel) -> Result<String, TransportError> {
        self.sent.push(message.to_owned());
        Ok(self.answers.pop_front().unwrap_or("no more").to_owned())
    }
}

fn setup() -> (tempfile::TempDir, Sandbox) {
    crate::sandbox::project(&[("ask.mjs", b"line1\nasync function waitForAnswer() {}\n")])
}

fn go(sb: &Sandbox, answers: &[&'static str], steps: usize) -> (Outcome, Script, Vec<Event>) {
    let prompts = Prompts::default();
    let lp = Loop {
        sandbox: sb,
        prompts: &prompts,
        limits: Limits::default(),
        index: None,
    };
    let mut t = Script {
        answers: answers.iter().copied().collect(),
        sent: vec![],
    };
    let mut events = vec![];
    let ask = Ask {
        question: "where?".into(),
        files: vec![],
        steps,
    };
    let out = lp
        .run(&ask, &mut t, &Cancel::new(), &mut |e| {
            events.push(e.clone())
        })
        .unwrap();
    (out, t, events)
}

#[test]
fn find_then_need_then_answer() {
    let (_d, sb) = setup();
    let (out, t, events) = go(
        &sb,
        &[
            "```\n=== FIND: waitForAnswer ===\n```",
            "=== NEED: ask.mjs ===",
            "It is waitForAnswer, line 2.",
        ],
        4,
    );
    assert_eq!(out.stop_reason, StopReason::NoRequests);
    assert_eq!(out.answer, "It is waitForAnswer, line 2.");
    assert_eq!(out.steps.len(), 3);
    assert!(t.sent[1].contains("ask.mjs:2: async function waitForAnswer() {}"));
    assert!(t.sent[2].contains("--- ask.mjs (40 characters) ---"));
    assert_eq!(out.steps[0].requests[0].hits, Some(1));
    assert!(matches!(
        events.last(),
        Some(Event::Finished {
            stop_reason: StopReason::NoRequests,
            steps: 3
        })
    ));
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| match e {
            Event::StepStarted { .. } => "start",
            Event::AnswerReceived { .. } => "answer",
            Event::RequestExecuted { .. } => "req",
            Event::Finished { .. } => "end",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "start", "answer", "req", "start", "answer", "req", "start", "answer", "end"
        ]
    );
}

#[test]
fn steps_run_out_and_the_answer_is_marked() {
    let (_d, sb) = setup();
    let (out, t, _) = go(&sb, &["Partial.\n=== NEED: ask.mjs ==="], 1);
    assert_eq!(out.stop_reason, StopReason::StepsExhausted);
    assert!(
        out.answer
            .contains("[deepwork: steps exhausted after 1 steps; still asked for: NEED ask.mjs]")
    );
    assert_eq!(t.sent.len(), 1);
    assert_eq!(out.steps[0].requests[0].hits, None);
}

#[test]
fn a_repeated_request_is_a_loop() {
    let (_d, sb) = setup();
    let (out, t, _) = go(
        &sb,
        &["=== NEED: ask.mjs ===", "=== NEED: ask.mjs ===", "never"],
        5,
    );
    assert_eq!(out.stop_reason, StopReason::Loop);
    assert_eq!(t.sent.len(), 2);
    assert!(out.answer.contains("repeated its previous requests"));
}

#[test]
fn proposed_files_from_all_steps_later_wins() {
    let (_d, sb) = setup();
    let (out, _, _) = go(
        &sb,
        &[
            "=== FILE: a.txt ===\nold\n=== END FILE ===\n=== NEED: ask.mjs ===",
            "=== FILE: a.txt ===\nnew\n=== FILE: b.txt ===\nb\n",
        ],
        4,
    );
    let got: Vec<_> = out
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.content.as_str()))
        .collect();
    assert_eq!(got, [("a.txt", "new\n"), ("b.txt", "b\n")]);
}

/// A model that answers with LIST and FIND while someone edits the folder between the
/// steps: creates a file the next step must see, deletes one it must not.
struct EditsBetweenSteps<'a> {
    root: std::path::PathBuf,
    sent: Vec<String>,
    /// A watcher over the run's shared index (pult's), which absorbs each edit before the run
    /// looks.
    watcher: Option<&'a Mutex<Index>>,
}

impl Transport for EditsBetweenSteps<'_> {
    fn send(&mut self, n: usize, m: &str, _c: &Cancel) -> Result<String, TransportError> {
        self.sent.push(m.to_owned());
        let (created, deleted) = match n {
            1 => ("src/новый файл.rs", "ask.mjs"),
            2 => ("late #2.rs", "src/новый файл.rs"),
            _ => return Ok("Done.".into()),
        };
        std::fs::create_dir_all(self.root.join(created).parent().unwrap()).unwrap();
        std::fs::write(self.root.join(created), "fn waitForAnswer() {}\n").unwrap();
        std::fs::remove_file(self.root.join(deleted)).unwrap();
        if let Some(index) = self.watcher {
            index.lock().unwrap().refresh();
        }
        // The second answer asks a little differently: the same requests twice are a loop.
        let find = if n == 1 {
            "waitForAnswer"
        } else {
            "fn waitForAnswer"
        };
        Ok(format!("=== LIST: **/*.rs ===\n=== FIND: {find} ==="))
    }
}

#[test]
fn list_and_find_see_files_created_and_deleted_between_steps() {
    let (_d, sb) = setup();
    // Its own index; a shared one; a shared one a watcher refreshes before the run looks.
    for (shared, watched) in [(false, false), (true, false), (true, true)] {
        std::fs::write(
            sb.root().join("ask.mjs"),
            "async function waitForAnswer() {}\n",
        )
        .unwrap();
        let _ = std::fs::remove_file(sb.root().join("late #2.rs"));
        let live = shared.then(|| Mutex::new(Index::walk(&sb)));
        let prompts = Prompts::default();
        let lp = Loop {
            sandbox: &sb,
            prompts: &prompts,
            limits: Limits::default(),
            index: live.as_ref(),
        };
        let mut t = EditsBetweenSteps {
            root: sb.root().to_path_buf(),
            sent: vec![],
            watcher: live.as_ref().filter(|_| watched),
        };
        let ask = Ask {
            question: "q".into(),
            files: vec![],
            steps: 4,
        };
        lp.run(&ask, &mut t, &Cancel::new(), &mut |_| {}).unwrap();
        assert!(t.sent[0].contains("ask.mjs"), "{}", t.sent[0]);
        let step2 = &t.sent[1];
        assert!(
            step2.contains("[LIST **/*.rs]\nsrc/новый файл.rs\n"),
            "{step2}"
        );
        assert!(
            step2.contains("src/новый файл.rs:1: fn waitForAnswer"),
            "{step2}"
        );
        // The deleted file is named once, as removed, and found no more.
        assert!(
            step2.contains(
                "[files changed on disk since step 1]\nadded: src/новый файл.rs\nremoved: ask.mjs\n"
            ),
            "{step2}"
        );
        assert!(!step2.contains("ask.mjs:"), "{step2}");
        let step3 = &t.sent[2];
        assert!(step3.contains("[LIST **/*.rs]\nlate #2.rs\n"), "{step3}");
        assert!(step3.contains("late #2.rs:1: fn waitForAnswer"), "{step3}");
        assert!(
            step3.contains(
                "[files changed on disk since step 2]\nadded: late #2.rs\nremoved: src/новый файл.rs\n"
            ),
            "{step3}"
        );
        assert!(!step3.contains("новый файл.rs:"), "{step3}");
        assert!(!step3.contains("ask.mjs"), "{step3}");
        if let Some(live) = live {
            let stats = live.into_inner().unwrap().stats();
            assert_eq!(
                stats.walks, 1,
                "the run walked a folder it was given: {stats:?}"
            );
            assert_eq!(stats.checks, if watched { 5 } else { 3 }, "{stats:?}");
        }
    }
}

/// Answers from a script, then fails like a dead bridge.
struct DiesAt(usize);

impl Transport for DiesAt {
    fn send(&mut self, n: usize, _m: &str, _c: &Cancel) -> Result<String, TransportError> {
        if n == self.0 {
            return Err(TransportError::Failed {
                status: "exit status: 3".into(),
                stderr: "gone".into(),
            });
        }
        Ok("=== NEED: ask.mjs ===".into())
    }
}

#[test]
fn a_failed_run_hands_back_the_steps_it_finished() {
    let (_d, sb) = setup();
    let prompts = Prompts::default();
    let lp = Loop {
        sandbox: &sb,
        prompts: &prompts,
        limits: Limits::default(),
        index: None,
    };
    let ask = Ask {
        question: "q".into(),
        files: vec![],
        steps: 4,
    };
    let e = lp
        .run(&ask, &mut DiesAt(2), &Cancel::new(), &mut |_| {})
        .unwrap_err();
    assert!(matches!(e, RunError::Transport { step: 2, .. }), "{e}");
    assert_eq!(e.steps().len(), 1);
    assert_eq!(e.steps()[0].requests[0].hits, Some(1));
}

/// Records what the loop asks of the transport, and the events, in one order.
struct Journal {
    answers: VecDeque<&'static str>,
    seen: std::sync::Arc<Mutex<Vec<String>>>,
    cancel_after_prepare: Option<(usize, Cancel)>,
}

impl Transport for Journal {
    fn send(&mut self, n: usize, _m: &str, _c: &Cancel) -> Result<String, TransportError> {
        self.seen.lock().unwrap().push(format!("send {n}"));
        Ok(self.answers.pop_front().unwrap_or("Done.").to_owned())
    }
    fn prepare(&mut self, n: usize) {
        self.seen.lock().unwrap().push(format!("prepare {n}"));
        if let Some((at, cancel)) = &self.cancel_after_prepare
            && *at == n
        {
            cancel.cancel();
        }
    }
    fn discard(&mut self) {
        self.seen.lock().unwrap().push("discard".into());
    }
}

fn journal(answers: &[&'static str], steps: usize, cancel_at: Option<usize>) -> Vec<String> {
    let (_d, sb) = setup();
    let prompts = Prompts::default();
    let lp = Loop {
        sandbox: &sb,
        prompts: &prompts,
        limits: Limits::default(),
        index: None,
    };
    let seen = std::sync::Arc::new(Mutex::new(Vec::new()));
    let cancel = Cancel::new();
    let mut t = Journal {
        answers: answers.iter().copied().collect(),
        seen: seen.clone(),
        cancel_after_prepare: cancel_at.map(|n| (n, cancel.clone())),
    };
    let ask = Ask {
        question: "q".into(),
        files: vec![],
        steps,
    };
    let _ = lp.run(&ask, &mut t, &cancel, &mut |e| {
        if let Event::RequestExecuted { n, .. } = e {
            seen.lock().unwrap().push(format!("executed {n}"));
        }
    });
    seen.lock().unwrap().clone()
}

#[test]
fn a_step_is_prepared_once_it_is_certain_and_before_the_tools_run() {
    // Step 1 at the start; step 2 as soon as answer 1 asks for something, before its
    // requests run; no step 3 after an answer without requests.
    let seen = journal(&["=== FIND: waitForAnswer ===", "Done."], 4, None);
    assert_eq!(
        seen,
        ["prepare 1", "send 1", "prepare 2", "executed 1", "send 2"]
    );
    // No next step when the steps run out or the model repeats itself.
    let seen = journal(&["=== NEED: ask.mjs ==="], 1, None);
    assert_eq!(seen, ["prepare 1", "send 1"]);
    let seen = journal(&["=== NEED: ask.mjs ===", "=== NEED: ask.mjs ==="], 5, None);
    assert_eq!(
        seen,
        ["prepare 1", "send 1", "prepare 2", "executed 1", "send 2"]
    );
}

#[test]
fn a_prepared_step_that_is_not_sent_is_discarded() {
    let seen = journal(&["=== FIND: waitForAnswer ===", "Done."], 4, Some(2));
    assert_eq!(
        seen,
        ["prepare 1", "send 1", "prepare 2", "executed 1", "discard"]
    );
    let seen = journal(&["Done."], 4, Some(1));
    assert_eq!(seen, ["prepare 1", "discard"]);
}

#[test]
fn cancel_before_a_step_stops_the_run() {
    let (_d, sb) = setup();
    let prompts = Prompts::default();
    let lp = Loop {
        sandbox: &sb,
        prompts: &prompts,
        limits: Limits::default(),
        index: None,
    };
    let mut t = Script {
        answers: VecDeque::new(),
        sent: vec![],
    };
    let cancel = Cancel::new();
    cancel.cancel();
    let ask = Ask {
        question: "q".into(),
        files: vec![],
        steps: 3,
    };
    let e = lp.run(&ask, &mut t, &cancel, &mut |_| {}).unwrap_err();
    assert!(matches!(e, RunError::Cancelled { step: 1, ref steps } if steps.is_empty()));
    assert!(t.sent.is_empty());
}

/// Edits files in place while the model thinks: no folder's time changes, so the check lists
/// nothing again, and the index (paths alone) has no size or content that could be stale.
struct EditsInPlace {
    root: std::path::PathBuf,
    sent: Vec<String>,
}

impl Transport for EditsInPlace {
    fn send(&mut self, n: usize, m: &str, _c: &Cancel) -> Result<String, TransportError> {
        self.sent.push(m.to_owned());
        if n > 1 {
            return Ok("Done.".into());
        }
        // Grown: the text sits past the file's length at the walk. Shrunk: what the file held
        // at the walk (and a longer file read before it on the same thread) must not be found.
        let grown = format!("{}\n// late marker here\n", "x".repeat(5000));
        std::fs::write(self.root.join("ask.mjs"), grown).unwrap();
        std::fs::write(self.root.join("b.txt"), "short\n").unwrap();
        Ok("=== FIND: late marker ===\n=== NEED: ask.mjs ===\n=== NEED: b.txt ===".into())
    }
}

#[test]
fn files_grown_or_shrunk_after_the_walk_are_searched_and_sent_as_they_are_now() {
    let (_d, sb) = crate::sandbox::project(&[
        ("ask.mjs", b"short\n"),
        (
            "b.txt",
            format!("{}late marker\n", "y".repeat(3000)).as_bytes(),
        ),
    ]);
    for shared in [false, true] {
        std::fs::write(sb.root().join("ask.mjs"), "short\n").unwrap();
        std::fs::write(
            sb.root().join("b.txt"),
            format!("{}late marker\n", "y".repeat(3000)),
        )
        .unwrap();
        let live = shared.then(|| Mutex::new(Index::walk(&sb)));
        let prompts = Prompts::default();
        let lp = Loop {
            sandbox: &sb,
            prompts: &prompts,
            limits: Limits {
                need_chars: 5100,
                ..Limits::default()
            },
            index: live.as_ref(),
        };
        let mut t = EditsInPlace {
            root: sb.root().to_path_buf(),
            sent: vec![],
        };
        let ask = Ask {
            question: "q".into(),
            files: vec![],
            steps: 3,
        };
        let out = lp.run(&ask, &mut t, &Cancel::new(), &mut |_| {}).unwrap();
        let step2 = &t.sent[1];
        assert!(
            step2.contains("ask.mjs:2: // late marker here\n"),
            "{step2}"
        );
        assert!(
            !step2.contains("b.txt:"),
            "a stale b.txt was searched: {step2}"
        );
        assert_eq!(out.steps[0].requests[0].hits, Some(1));
        // The budget counts the files as read now: 5021 + 6 characters fit in 5100.
        assert!(
            step2.contains("--- ask.mjs (5021 characters) ---"),
            "{step2}"
        );
        assert!(
            step2.contains("--- b.txt (6 characters) ---\nshort\n"),
            "{step2}"
        );
        assert!(!step2.contains("[truncated"), "{step2}");
    }
}
