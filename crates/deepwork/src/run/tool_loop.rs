//! The loop itself: the first message, then a step per answer until one stops it, with the
//! transport told of each step as soon as it is certain, so that the bridge starts up while
//! deepwork works.

use std::sync::{Mutex, MutexGuard, PoisonError};

use super::report::{Event, Outcome, RunError, Step, StepRequest, StopReason};
use crate::exec::Cancel;
use crate::index::{Index, PathChanges};
use crate::prompt::Prompts;
use crate::protocol::{self, ProposedFile, Request};
use crate::sandbox::Sandbox;
use crate::tools::{self, Limits, Sent};
use crate::transport::{Transport, TransportError};

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
            let own = Mutex::new(Index::walk(self.sandbox));
            let (message, mark) = {
                let index = lock(&own);
                (first(&index), index.generation())
            };
            return self.steps(ask, &own, (message, mark), transport, cancel, on_event);
        };
        let (message, mark) = {
            let mut index = lock(shared);
            index.refresh();
            (first(&index), index.generation())
        };
        self.steps(ask, shared, (message, mark), transport, cancel, on_event)
    }

    /// The steps of a run whose first message is ready, and the index's mark when it was made.
    fn steps(
        &self,
        ask: &Ask,
        index: &Mutex<Index>,
        (mut message, mut tree_mark): (String, u64),
        transport: &mut dyn Transport,
        cancel: &Cancel,
        on_event: &mut dyn FnMut(&Event),
    ) -> Result<Outcome, RunError> {
        let steps_max = ask.steps.max(1);
        let mut steps: Vec<Step> = Vec::new();
        let mut files: Vec<ProposedFile> = Vec::new();
        let mut previous: Option<Vec<Request>> = None;
        // What NEED has sent whole, so a file asked for again costs a line unless it changed.
        let mut sent = Sent::default();
        // The step whose message last told the model the folder's files (the tree, step 1),
        // and what changed since, for the next message.
        let mut tree_step = 1;
        let mut tree_news = String::new();
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
                        unchanged: 0,
                        changed: 0,
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
            let mut executed = {
                let mut index = lock(index);
                // Files may have come and gone while the model thought: LIST and FIND must see
                // the folder as it is now, and the model is told what its tree no longer
                // shows (every step, NEED-only ones too: a check of the folders' times). A
                // shared index that its owner refreshed meanwhile (pult's watcher) has what
                // it saw in its journal: named all the same.
                index.refresh();
                let news = index.changes_since(tree_mark);
                if news.as_ref().is_none_or(PathChanges::changed) {
                    tree_news = match news {
                        Some(changes) => tree_changes(&changes, tree_step, self.limits.list_paths),
                        None => format!(
                            "[files changed on disk since step {tree_step}: more than can be \
                             named; use LIST]\n\n"
                        ),
                    };
                    tree_step = n + 1;
                    tree_mark = index.generation();
                }
                tools::execute(
                    self.sandbox,
                    &index,
                    &parsed.requests,
                    &self.limits,
                    &mut sent,
                    n + 1,
                )
            };
            for (req, stat) in step.requests.iter_mut().zip(&executed.stats) {
                req.hits = Some(stat.hits);
                req.truncated = stat.truncated;
                req.unchanged = stat.unchanged;
                req.changed = stat.changed;
                on_event(&Event::RequestExecuted {
                    n,
                    stat: stat.clone(),
                });
            }
            steps.push(step);
            if !tree_news.is_empty() {
                executed.text.insert_str(0, &std::mem::take(&mut tree_news));
            }
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

/// The lines that name files added to or removed from the folder since step `since` told
/// the model its files, at most `limit` of them (the rest counted).
fn tree_changes(changes: &PathChanges, since: usize, limit: usize) -> String {
    let mut out = format!("[files changed on disk since step {since}]\n");
    let lines = changes
        .added
        .iter()
        .map(|p| ("added", p))
        .chain(changes.removed.iter().map(|p| ("removed", p)));
    let total = changes.added.len() + changes.removed.len();
    for (what, path) in lines.take(limit) {
        out.push_str(&format!("{what}: {path}\n"));
    }
    if total > limit {
        out.push_str(&format!(
            "[truncated: {} more changes not named; use LIST]\n",
            total - limit
        ));
    }
    out.push('\n');
    out
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
