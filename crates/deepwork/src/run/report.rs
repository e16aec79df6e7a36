//! What a run tells its caller: an [`Event`] as each thing happens, each [`Step`] with its
//! requests, and at the end the [`Outcome`] or the [`RunError`] (which keeps the steps taken).
//! The app sends these to its window as they are, so they derive the TypeScript types too.

use serde::{Deserialize, Serialize};

use crate::protocol::{ProposedFile, RequestKind};
use crate::tools::RequestStat;
use crate::transport::TransportError;

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
    /// NEED: files answered "unchanged since step k" instead of being sent again (runs saved
    /// before this count existed read 0).
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub unchanged: usize,
    /// NEED: files sent again, marked "changed on disk since step k".
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub changed: usize,
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
