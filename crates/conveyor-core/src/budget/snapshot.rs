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

/// The probabilities that cut a step's cost into [`TAIL_POINTS`] parts: fine at the top,
/// where the steps that make a limit hit are.
pub const TAIL_EDGES: [f64; TAIL_POINTS + 1] = [
    0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999, 1.0,
];
/// How many points a step's cost is kept in ([`Tail`]).
pub const TAIL_POINTS: usize = 15;

/// What a step may cost in all: the cost at the middle of each part of [`TAIL_EDGES`], as
/// likely as that part is wide. The claim is one quantile of a step's history; near the
/// threshold the policy also looks at the rest (`Policy::risk`): how likely the steps in flight
/// are to overrun what is left together, not only whether their claims fit.
///
/// The points come from a lognormal fitted to the runs' costs (the mean and the spread of their
/// logs), not from the runs themselves: a history of a few dozen runs has no point past its
/// largest one, while the steps that overrun a window are exactly the ones past it; and a step
/// that has already spent some amount is the same lognormal cut below that amount (its later
/// quantiles), however few runs went that far.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tail(pub [f64; TAIL_POINTS]);

impl Tail {
    /// From sorted costs (at least `min` of them, else `None`): the fitted lognormal given a
    /// cost of at least `floor`, times `scale`.
    pub fn of(sorted: &[f64], min: usize, scale: f64, floor: f64) -> Option<Tail> {
        let logs: Vec<f64> = sorted
            .iter()
            .filter(|c| **c > 0.0)
            .map(|c| c.ln())
            .collect();
        if logs.len() < min.max(2) {
            return None;
        }
        #[allow(clippy::cast_precision_loss)]
        let n = logs.len() as f64;
        let mu = logs.iter().sum::<f64>() / n;
        let sigma = (logs.iter().map(|l| (l - mu).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        // The share of steps that cost less than the floor, on the scale the costs are drawn.
        let below = if floor > 0.0 && sigma > 0.0 {
            normal_cdf(((floor / scale).ln() - mu) / sigma)
        } else {
            0.0
        };
        let mut points = [0.0; TAIL_POINTS];
        for (i, p) in points.iter_mut().enumerate() {
            let mid = (TAIL_EDGES[i] + TAIL_EDGES[i + 1]) / 2.0;
            let q = below + mid * (1.0 - below);
            *p = ((mu + sigma * normal_quantile(q)).exp() * scale).max(floor);
        }
        Some(Tail(points))
    }

    /// How likely point `i` is.
    pub fn weight(i: usize) -> f64 {
        TAIL_EDGES[i + 1] - TAIL_EDGES[i]
    }
}

/// Φ(x), the standard normal distribution (Abramowitz and Stegun 7.1.26, within 1.5e-7).
fn normal_cdf(x: f64) -> f64 {
    let z = x.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * z);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-z * z).exp();
    if x >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

/// Φ⁻¹(p) (Acklam's rational approximation, within 1.2e-9 relative).
fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let p = p.clamp(1e-12, 1.0 - 1e-12);
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.024_25 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.024_25 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
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
    /// What it may cost in all, when its history says more than the estimate (a running
    /// step's: of the runs that spent at least as much); `None`: the estimate is all there is.
    pub tail: Option<Tail>,
}

impl Reserve {
    /// A claim known only by its estimate.
    pub fn fixed(usd: f64) -> Reserve {
        Reserve {
            estimate_usd: usd,
            live_usd: 0.0,
            rate_usd_min: f64::INFINITY,
            started_ms: None,
            tail: None,
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
