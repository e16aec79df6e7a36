//! The loop: send, read the answer, run its requests, send the results, until the answer
//! asks for nothing, the steps run out, or the model repeats itself.
//!
//! The loop is synchronous and pushes [`Event`]s to a callback as it goes, so the CLI prints
//! them to stderr, the app forwards them to its window, and tests collect them, all the same
//! way.

use std::sync::{Mutex, MutexGuard, PoisonError};

use serde::{Deserialize, Serialize};

use crate::exec::Cancel;
use crate::index::Index;
use crate::prompt::Prompts;
use crate::protocol::{self, ProposedFile, Request, RequestKind};
use crate::sandbox::Sandbox;
use crate::tools::{self, Limits, RequestStat};
use crate::transport::{Transport, TransportError};

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum StopReason {
    /// The last answer asked for nothing: it is the answer.
    NoRequests,
    /// The steps ran out while the model still asked; the last answer is marked so.
    StepsExhausted,
    /// The answer repeated the previous answer's requests.
    Loop,
}

impl StopReason {
    /// The name used in JSON and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::NoRequests => "no_requests",
            StopReason::StepsExhausted => "steps_exhausted",
            StopReason::Loop => "loop",
        }
    }
}

/// One request of a step's answer and what running it gave. `hits` is `None` for requests
/// that were not run because the loop stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StepRequest {
    /// NEED, LIST or FIND.
    pub kind: RequestKind,
    /// As written.
    pub arg: String,
    /// Matches or files; `None` when not run.
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub hits: Option<usize>,
    /// Whether anything was cut.
    pub truncated: bool,
}

/// One step: what was sent and what came back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Step {
    /// 1-based.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub n: usize,
    /// Sent as a new message of the chat (`--new`), not as an edit of the first.
    pub new: bool,
    /// Characters sent.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub sent_chars: usize,
    /// Characters of the answer.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub answer_chars: usize,
    /// The answer's requests.
    pub requests: Vec<StepRequest>,
}

/// Something that happened during a run, as it happens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Event {
    /// A message is on its way.
    StepStarted {
        /// Step number.
        #[cfg_attr(feature = "ts", ts(type = "number"))]
        n: usize,
        /// Whether it goes as a new message of the chat.
        new: bool,
        /// Characters sent.
        #[cfg_attr(feature = "ts", ts(type = "number"))]
        sent_chars: usize,
    },
    /// An answer came back.
    AnswerReceived {
        /// Step number.
        #[cfg_attr(feature = "ts", ts(type = "number"))]
        n: usize,
        /// Characters.
        #[cfg_attr(feature = "ts", ts(type = "number"))]
        answer_chars: usize,
        /// How many requests it holds.
        #[cfg_attr(feature = "ts", ts(type = "number"))]
        requests: usize,
        /// How many files it proposes.
        #[cfg_attr(feature = "ts", ts(type = "number"))]
        files: usize,
    },
    /// A request of the answer was run.
    RequestExecuted {
        /// Step number of the answer.
        #[cfg_attr(feature = "ts", ts(type = "number"))]
        n: usize,
        /// What ran and what it gave.
        #[serde(flatten)]
        stat: RequestStat,
    },
    /// The run is over.
    Finished {
        /// Why.
        stop_reason: StopReason,
        /// Steps taken.
        #[cfg_attr(feature = "ts", ts(type = "number"))]
        steps: usize,
    },
}

/// What to ask.
#[derive(Debug, Clone, Default)]
pub struct Ask {
    /// The question.
    pub question: String,
    /// Files ticked by the user, relative to the project folder.
    pub files: Vec<String>,
    /// How many steps at most.
    pub steps: usize,
}

/// A finished run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Outcome {
    /// Why it ended.
    pub stop_reason: StopReason,
    /// Every step.
    pub steps: Vec<Step>,
    /// The final answer (marked when the steps ran out or the model looped).
    pub answer: String,
    /// Files the answers proposed; a later proposal of the same path replaces an earlier one.
    pub files: Vec<ProposedFile>,
}

/// Why a run did not finish.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The transport failed at a step.
    #[error("step {step}: {source}")]
    Transport {
        /// The step.
        step: usize,
        /// What failed.
        #[source]
        source: TransportError,
        /// The steps taken before it, with their requests.
        steps: Vec<Step>,
    },
    /// Stopped from outside.
    #[error("stopped at step {step}")]
    Cancelled {
        /// The step.
        step: usize,
        /// The steps taken before it, with their requests.
        steps: Vec<Step>,
    },
}

impl RunError {
    /// The steps that finished before the run stopped, so a caller can keep them.
    pub fn steps(&self) -> &[Step] {
        match self {
            RunError::Transport { steps, .. } | RunError::Cancelled { steps, .. } => steps,
        }
    }
}

/// Everything a run needs besides the question and the transport.
#[derive(Debug, Clone)]
pub struct Loop<'a> {
    /// The project folder.
    pub sandbox: &'a Sandbox,
    /// The texts around the question.
    pub prompts: &'a Prompts,
    /// The tools' limits.
    pub limits: Limits,
    /// A live index of the folder that the caller keeps (pult's, behind its tree view): the
    /// run checks it for changes before each step instead of walking the folder. `None`: the
    /// run walks the folder once, for its first message, and keeps that index fresh itself.
    pub index: Option<&'a Mutex<Index>>,
}

impl Loop<'_> {
    /// Runs the loop to its end. Each step is announced to the transport as soon as it is
    /// certain to be sent ([`Transport::prepare`]: step 1 at once, step n + 1 when answer n
    /// asks for something, before its requests run), and withdrawn if the run ends first
    /// ([`Transport::discard`]), so that the bridge can start up while deepwork works.
    ///
    /// # Errors
    /// [`RunError`] when the transport fails or the run is cancelled; every event up to
    /// that point has been delivered.
    pub fn run(
        &self,
        ask: &Ask,
        transport: &mut dyn Transport,
        cancel: &Cancel,
        on_event: &mut dyn FnMut(&Event),
    ) -> Result<Outcome, RunError> {
        // The first message will be sent whatever the folder holds: the transport may get
        // ready for it (the bridge starts Node) while the folder is walked.
        if !cancel.is_cancelled() {
            transport.prepare(1);
        }
        let result = self.first_and_steps(ask, transport, cancel, on_event);
        if result.is_err() {
            // A step prepared and never sent (cancelled before it went out): stop its bridge.
            transport.discard();
        }
        result
    }

    /// The run: the first message, then the steps.
    fn first_and_steps(
        &self,
        ask: &Ask,
        transport: &mut dyn Transport,
        cancel: &Cancel,
        on_event: &mut dyn FnMut(&Event),
    ) -> Result<Outcome, RunError> {
        let first = |index: &Index| {
            self.prompts
                .first_message(self.sandbox, index, &ask.files, &ask.question, &self.limits)
        };
        let Some(shared) = self.index else {
            // The first message needs only the paths: it goes out after the walk, and the
            // files' sizes and times are read on another thread while the model thinks (the
            // next step's lock waits for them).
            let own = Mutex::new(Index::walk(self.sandbox));
            let message = first(&lock(&own));
            return std::thread::scope(|s| {
                s.spawn(|| lock(&own).stat());
                self.steps(ask, &own, message, transport, cancel, on_event)
            });
        };
        let message = {
            let mut index = lock(shared);
            index.refresh();
            first(&index)
        };
        self.steps(ask, shared, message, transport, cancel, on_event)
    }

    /// The steps of a run whose first message is ready.
    fn steps(
        &self,
        ask: &Ask,
        index: &Mutex<Index>,
        mut message: String,
        transport: &mut dyn Transport,
        cancel: &Cancel,
        on_event: &mut dyn FnMut(&Event),
    ) -> Result<Outcome, RunError> {
        let steps_max = ask.steps.max(1);
        let mut steps: Vec<Step> = Vec::new();
        let mut files: Vec<ProposedFile> = Vec::new();
        let mut previous: Option<Vec<Request>> = None;
        for n in 1..=steps_max {
            if cancel.is_cancelled() {
                return Err(RunError::Cancelled { step: n, steps });
            }
            let sent_chars = message.chars().count();
            on_event(&Event::StepStarted {
                n,
                new: n > 1,
                sent_chars,
            });
            let answer = match transport.send(n, &message, cancel) {
                Ok(a) => a,
                Err(TransportError::Cancelled) => {
                    return Err(RunError::Cancelled { step: n, steps });
                }
                Err(source) => {
                    return Err(RunError::Transport {
                        step: n,
                        source,
                        steps,
                    });
                }
            };
            let parsed = protocol::parse(&answer);
            on_event(&Event::AnswerReceived {
                n,
                answer_chars: answer.chars().count(),
                requests: parsed.requests.len(),
                files: parsed.files.len(),
            });
            for f in parsed.files {
                files.retain(|old| old.path != f.path);
                files.push(f);
            }
            let mut step = Step {
                n,
                new: n > 1,
                sent_chars,
                answer_chars: answer.chars().count(),
                requests: parsed
                    .requests
                    .iter()
                    .map(|r| StepRequest {
                        kind: r.kind,
                        arg: r.arg.clone(),
                        hits: None,
                        truncated: false,
                    })
                    .collect(),
            };
            let stop = if parsed.requests.is_empty() {
                Some((StopReason::NoRequests, answer))
            } else if previous.as_ref() == Some(&parsed.requests) {
                Some((
                    StopReason::Loop,
                    mark(
                        &answer,
                        "the model repeated its previous requests",
                        &parsed.requests,
                    ),
                ))
            } else if n == steps_max {
                let why = format!("steps exhausted after {n} steps");
                Some((
                    StopReason::StepsExhausted,
                    mark(&answer, &why, &parsed.requests),
                ))
            } else {
                None
            };
            if let Some((stop_reason, answer)) = stop {
                steps.push(step);
                on_event(&Event::Finished {
                    stop_reason,
                    steps: steps.len(),
                });
                return Ok(Outcome {
                    stop_reason,
                    steps,
                    answer,
                    files,
                });
            }
            // Step n + 1 will be sent: the transport may get ready while the tools run.
            if !cancel.is_cancelled() {
                transport.prepare(n + 1);
            }
            let executed = {
                let mut index = lock(index);
                // Files may have come and gone while the model thought: LIST and FIND must see
                // the folder as it is now. NEED reads the disk itself and needs no check.
                if parsed.requests.iter().any(|r| r.kind != RequestKind::Need) {
                    index.refresh();
                }
                tools::execute(self.sandbox, &index, &parsed.requests, &self.limits)
            };
            for (req, stat) in step.requests.iter_mut().zip(&executed.stats) {
                req.hits = Some(stat.hits);
                req.truncated = stat.truncated;
                on_event(&Event::RequestExecuted {
                    n,
                    stat: stat.clone(),
                });
            }
            steps.push(step);
            message = self.prompts.next_message(&executed.text, &self.limits);
            previous = Some(parsed.requests);
        }
        unreachable!("the last step always stops the loop")
    }
}

/// The index, whoever else holds it: a panic on another thread leaves it usable (a refresh
/// is applied whole or not at all).
fn lock(index: &Mutex<Index>) -> MutexGuard<'_, Index> {
    index.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Marks an answer the loop could not finish, naming what was still asked.
fn mark(answer: &str, why: &str, requests: &[Request]) -> String {
    let asked: Vec<String> = requests.iter().map(Request::to_string).collect();
    let mut out = answer.trim_end().to_owned();
    out.push_str(&format!(
        "\n\n[deepwork: {why}; still asked for: {}]\n",
        asked.join("; ")
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// A transport that answers from a script and keeps what it was sent.
    struct Script {
        answers: VecDeque<&'static str>,
        sent: Vec<String>,
    }

    impl Transport for Script {
        fn send(
            &mut self,
            _n: usize,
            message: &str,
            _c: &Cancel,
        ) -> Result<String, TransportError> {
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
            out.answer.contains(
                "[deepwork: steps exhausted after 1 steps; still asked for: NEED ask.mjs]"
            )
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
    struct EditsBetweenSteps {
        root: std::path::PathBuf,
        sent: Vec<String>,
    }

    impl Transport for EditsBetweenSteps {
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
        for shared in [false, true] {
            std::fs::write(
                sb.root().join("ask.mjs"),
                "async function waitForAnswer() {}\n",
            )
            .unwrap();
            let _ = std::fs::remove_file(sb.root().join("late #2.rs"));
            let live = shared.then(|| Mutex::new(Index::build(&sb)));
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
            assert!(!step2.contains("ask.mjs"), "{step2}");
            let step3 = &t.sent[2];
            assert!(step3.contains("[LIST **/*.rs]\nlate #2.rs\n"), "{step3}");
            assert!(step3.contains("late #2.rs:1: fn waitForAnswer"), "{step3}");
            assert!(!step3.contains("новый"), "{step3}");
            if let Some(live) = live {
                let stats = live.into_inner().unwrap().stats();
                assert_eq!(
                    stats.walks, 1,
                    "the run walked a folder it was given: {stats:?}"
                );
                assert_eq!(stats.checks, 3, "{stats:?}");
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
}
