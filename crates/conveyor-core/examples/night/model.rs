//! The night as the simulator models it: lines of steps, each with its true cost and
//! duration, the history of earlier nights, and the account's defaults.

use conveyor_api::StepKind;
use conveyor_core::budget::{Reserve, Run};

pub(super) const MIN_MS: i64 = 60_000;
pub(super) const SLOTS: usize = 3;
pub(super) const LINES: usize = 14;
pub(super) const THRESHOLD: f64 = 50.0;
pub(super) const WINDOW_MIN: i64 = 300;

#[derive(Debug, Clone)]
pub(super) struct Step {
    pub(super) kind: StepKind,
    /// The planner's size of it (`--sizes`).
    pub(super) size: Option<conveyor_api::StepSize>,
    pub(super) cost: f64,
    pub(super) minutes: i64,
}

#[derive(Debug, Clone)]
pub(super) struct Line {
    pub(super) project: String,
    pub(super) priority: u32,
    pub(super) steps: Vec<Step>,
    pub(super) next: usize,
    pub(super) cap_misses: u32,
    pub(super) abandoned: bool,
    pub(super) running: Option<Running>,
    /// What the next step's cut attempts spent that its resumed session keeps (`--resume-keeps`):
    /// its next attempt needs that much less.
    pub(super) kept: f64,
}

#[derive(Debug, Clone)]
pub(super) struct Running {
    pub(super) started: i64,
    pub(super) reserve: Reserve,
    pub(super) cap: Option<f64>,
    pub(super) charged: f64,
}

/// One night's trace: the lines and the history of earlier nights.
#[derive(Debug, Clone)]
pub(super) struct Trace {
    /// The night's seed (`--first-seed` counts these); none for a trace file.
    pub(super) seed: Option<u64>,
    pub(super) lines: Vec<Line>,
    pub(super) history: Vec<Run>,
    pub(super) demand: f64,
    pub(super) max_rate: f64,
}

impl Trace {
    /// A night of `lines` (its demand their steps' cost), after `history` (sorted by when
    /// each run finished).
    pub(super) fn new(
        seed: Option<u64>,
        lines: Vec<Line>,
        mut history: Vec<Run>,
        max_rate: f64,
    ) -> Trace {
        history.sort_by_key(|r| r.finished_ms);
        let demand = lines
            .iter()
            .flat_map(|l| l.steps.iter().map(|s| s.cost))
            .sum();
        Trace {
            seed,
            lines,
            history,
            demand,
            max_rate,
        }
    }
}
