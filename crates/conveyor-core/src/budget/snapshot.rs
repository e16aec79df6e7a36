//! What a budget decision looks at ([`Snapshot`]): the finished runs, the running steps'
//! claims, the server's last word and the account's park, and "now".

use conveyor_api::{StepKind, StepSize};

/// Slack for comparing sums of floats with a threshold.
pub const EPS: f64 = 1e-9;

/// How a finished run counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The run went to its end (green or red): its cost is a sample of what the kind costs.
    /// A run the CLI ended with an error or a timeout is not: it stopped early, and would pull
    /// the estimate down.
    Done,
    /// A usage limit or its `--max-budget-usd` cap cut it: the cost is only a lower bound, and
    /// the kind's estimate goes up.
    Miss,
    /// Interrupted, cancelled, refused: spent, but says nothing about the kind.
    Other,
}

impl Outcome {
    /// The `runs.outcome` column's meaning.
    pub fn of(outcome: &str) -> Outcome {
        match outcome {
            "ok" | "red" | "finished" => Outcome::Done,
            "usage_limit" | "max_budget" => Outcome::Miss,
            _ => Outcome::Other,
        }
    }
}

/// What a step's cost is learned from: its kind, and the planner's size of it when the plan
/// gave one. A kind alone converts into a class without a size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Class {
    pub kind: StepKind,
    pub size: Option<StepSize>,
}

impl From<StepKind> for Class {
    fn from(kind: StepKind) -> Class {
        Class { kind, size: None }
    }
}

/// One finished run.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub kind: StepKind,
    pub project: String,
    /// The step it was an attempt of (`runs.step_id`).
    pub step_id: String,
    /// The planner's size of its step, when it gave one.
    pub size: Option<StepSize>,
    pub cost_usd: f64,
    /// When it started, unix ms (with its end, how fast a step of its kind spends).
    pub started_ms: i64,
    /// When it ended (its cost is counted from then), unix ms.
    pub finished_ms: i64,
    pub outcome: Outcome,
}

/// One window as the server reported it (`rate_limit_event.unifiedWindows.<window>`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServerWindow {
    /// 0..1 of the account's real limit.
    pub utilization: f64,
    pub resets_at_ms: Option<i64>,
}

/// The server's last `rate_limit_event`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ServerView {
    pub observed_ms: i64,
    /// `status: "rejected"`: no step starts before `resets_at_ms`.
    pub rejected: bool,
    pub resets_at_ms: Option<i64>,
    /// `five_hour`: overrides the rolling window's spent.
    pub window: Option<ServerWindow>,
    /// `seven_day`: overrides the weekly pool's spent.
    pub weekly: Option<ServerWindow>,
}

/// Everything a decision looks at.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub now_ms: i64,
    /// Finished runs, oldest first: the spending of every pool and the history of estimates.
    pub runs: Vec<Run>,
    /// The steps running now (a started step's reserve is pushed here).
    pub running: Vec<Reserve>,
    /// Their spend so far is known (`Reserve::live_usd`, the daemon's live cost of a run):
    /// our own count of a pool then holds it, and each claim counts only what it has not
    /// spent yet.
    pub live: bool,
    /// What the server's utilisation says of the window's size (`threshold_usd = "auto"`).
    pub window_calibration: Option<conveyor_api::Calibration>,
    pub server: Option<ServerView>,
    /// The account's usage limit: no step starts before this.
    pub park_until: Option<i64>,
}

impl Snapshot {
    /// The running steps whose spend so far the pools count: those that have spent, and only
    /// when the snapshot says it is known (`live`). Otherwise their claims count whole
    /// ([`Policy::need`]), and counting their spend too would count it twice.
    pub fn counted_spending(&self) -> impl Iterator<Item = &Reserve> {
        self.running
            .iter()
            .filter(|r| self.live && r.live_usd > 0.0)
    }

    /// What the running steps have spent so far, as the pools count it.
    pub fn live_usd(&self) -> f64 {
        self.counted_spending().fold(0.0, |a, r| a + r.live_usd)
    }

    pub fn running_usd(&self) -> f64 {
        // A fold from +0.0: an empty float `sum()` is -0.0, shown as "-0.0000".
        self.running.iter().fold(0.0, |a, r| a + r.estimate_usd)
    }
}

/// A running (or candidate) step's claim on the pools.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reserve {
    /// Its estimate: what it is admitted with and capped by.
    pub estimate_usd: f64,
    /// What it has spent so far (a running step's live cost; 0 for a candidate). The estimate
    /// is the whole step's and never below it.
    pub live_usd: f64,
    /// The fastest it is expected to spend, USD a minute (infinite when unknown: then its
    /// whole claim counts at once).
    pub rate_usd_min: f64,
    /// When a running step started, unix ms: its spend so far was spent since then and leaves
    /// a rolling pool accordingly ([`Policy::pools`]). `None` for a candidate, or when not
    /// known: then its spend so far counts as spent now.
    pub started_ms: Option<i64>,
}

impl Reserve {
    /// A claim known only by its estimate.
    pub fn fixed(usd: f64) -> Reserve {
        Reserve {
            estimate_usd: usd,
            live_usd: 0.0,
            rate_usd_min: f64::INFINITY,
            started_ms: None,
        }
    }

    /// What is still to come of the claim by `minutes` from now, at most its rate; `in_pool`:
    /// the pool's count holds the step's spend so far (with live costs: the server's
    /// utilisation what it spent before the event, the pool the rest), so only the rest is
    /// claimed.
    pub(super) fn by(&self, minutes: f64, in_pool: bool) -> f64 {
        let spent = if in_pool { self.live_usd } else { 0.0 };
        let rest = (self.estimate_usd - spent).max(0.0);
        if self.rate_known() {
            rest.min(self.rate_usd_min * minutes)
        } else {
            rest
        }
    }

    /// A rate to spread the claim over: finite and above zero (a kind whose runs all cost
    /// nothing must not make its claims invisible).
    pub(super) fn rate_known(&self) -> bool {
        self.rate_usd_min.is_finite() && self.rate_usd_min > 0.0
    }

    /// Minutes until the whole claim can have been spent at its rate.
    pub(super) fn spent_within(&self, in_pool: bool) -> f64 {
        if self.rate_known() {
            self.by(f64::INFINITY, in_pool) / self.rate_usd_min
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_that_are_samples_misses_or_neither() {
        for o in ["ok", "red", "finished"] {
            assert_eq!(Outcome::of(o), Outcome::Done, "{o}");
        }
        for o in ["usage_limit", "max_budget"] {
            assert_eq!(Outcome::of(o), Outcome::Miss, "{o}");
        }
        for o in [
            "failed",
            "fatal",
            "interrupted",
            "cancelled",
            "session_in_use",
            "no_conversation",
        ] {
            assert_eq!(Outcome::of(o), Outcome::Other, "{o}");
        }
    }
}
