//! The budget policy's pure core: no database, no wall clock. Everything it looks at — the
//! finished runs, the estimates of the running steps, the server's last word, the account's
//! park, and "now" — comes in a [`Snapshot`], so the daemon (fed from SQLite) and the night
//! simulator (a virtual clock) run the very same code.
//!
//! The rule, per configured pool (rolling window, weekly cap, monthly credit): spent in the
//! pool + estimates of running steps + this step's estimate ≤ the pool's threshold (when the
//! server's utilisation is the pool's count, the estimates' margins over a typical step are
//! combined as a root sum of squares: [`Policy::need`]). Callers ask for candidates in
//! priority order and add each started step's claim to [`Snapshot::running`] before asking
//! about the next ([`Policy::admit`]): a best-priority step that does not fit waits, a shorter
//! one below it that fits starts (packing), and priority stays the main order.

use chrono::{Datelike, TimeZone, Utc};
use conveyor_api::{PoolKind, StepKind};

use crate::config::BudgetConfig;

pub const MINUTE_MS: i64 = 60_000;
pub const HOUR_MS: i64 = 60 * MINUTE_MS;
pub const DAY_MS: i64 = 24 * HOUR_MS;
const WEEK_MS: i64 = 7 * DAY_MS;
/// At most this many recent misses raise a kind's estimate (by `miss_factor` each).
const MISS_CAP: i32 = 3;
/// Below this many samples the cold-start value still bounds the estimate from below.
const MIN_SAMPLES: usize = 3;
/// When only the end of a running step can make room: look again after this long (the
/// scheduler is woken by the step's end anyway).
const RECHECK_MS: i64 = 5 * MINUTE_MS;
const EPS: f64 = 1e-9;

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

/// One finished run.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub kind: StepKind,
    pub project: String,
    /// The step it was an attempt of (`runs.step_id`).
    pub step_id: String,
    pub cost_usd: f64,
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

/// A running (or candidate) step's claim on the pools.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reserve {
    /// Its estimate: what it is admitted with and capped by.
    pub estimate_usd: f64,
    /// What a step like it typically costs: the median of the same history × (1 + margin),
    /// never above the estimate.
    pub typical_usd: f64,
}

impl Reserve {
    /// A claim known only by its estimate.
    pub fn fixed(usd: f64) -> Reserve {
        Reserve {
            estimate_usd: usd,
            typical_usd: usd,
        }
    }
}

/// Everything a decision looks at.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub now_ms: i64,
    /// Finished runs, oldest first: the spending of every pool and the history of estimates.
    pub runs: Vec<Run>,
    /// The steps running now (a started step's reserve is pushed here).
    pub running: Vec<Reserve>,
    pub server: Option<ServerView>,
    /// The account's usage limit: no step starts before this.
    pub park_until: Option<i64>,
}

impl Snapshot {
    pub fn running_usd(&self) -> f64 {
        // A fold from +0.0: an empty float `sum()` is -0.0, shown as "-0.0000".
        self.running.iter().fold(0.0, |a, r| a + r.estimate_usd)
    }
}

/// The answer for one step.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    Start {
        estimate_usd: f64,
    },
    /// Not now: wait at the checkpoint until `until_ms` (or sooner, when re-asked).
    Wait {
        until_ms: i64,
        reason: String,
    },
}

/// What history says a step of one kind costs.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// What the policy counts for the step (margin and misses included).
    pub usd: f64,
    /// Samples (finished runs) it rests on.
    pub count: u32,
    pub median: Option<f64>,
    /// The 0.9 quantile.
    pub high: Option<f64>,
    /// Recent misses that raised it.
    pub misses: u32,
    /// From the project's own history rather than the kind's across projects.
    pub per_project: bool,
}

/// One pool as it stands now.
#[derive(Debug, Clone, PartialEq)]
pub struct Pool {
    pub kind: PoolKind,
    pub span_ms: i64,
    pub threshold_usd: f64,
    pub spent_usd: f64,
    /// The server's utilisation that replaced our own count, when it did.
    pub utilization: Option<f64>,
    /// When each part of `spent_usd` leaves the pool, earliest first.
    pub leaves: Vec<(i64, f64)>,
}

impl Pool {
    /// When the pool next has room (its earliest spending leaves).
    pub fn resets_at_ms(&self) -> Option<i64> {
        self.leaves.first().map(|(t, _)| *t)
    }

    /// The earliest time at which `need` more fits, counting only what leaves the pool; `None`
    /// when it never will by that alone.
    pub fn fits_at(&self, need: f64) -> Option<i64> {
        if need > self.threshold_usd + EPS {
            return None;
        }
        let mut left = self.spent_usd;
        for (t, usd) in &self.leaves {
            left -= usd;
            if left + need <= self.threshold_usd + EPS {
                return Some(*t);
            }
        }
        None
    }

    fn name(&self) -> &'static str {
        match self.kind {
            PoolKind::Window => "the window",
            PoolKind::Weekly => "the week",
            PoolKind::Monthly => "the month",
        }
    }
}

/// The policy: the configuration, nothing else.
#[derive(Debug, Clone)]
pub struct Policy {
    pub cfg: BudgetConfig,
}

impl Policy {
    pub fn new(cfg: BudgetConfig) -> Policy {
        Policy { cfg }
    }

    /// The estimate of a kind that has no history: `cold_start_usd.<kind>`, else a built-in
    /// multiple of `default_estimate_usd` (an executor does the most, a reviewer reads).
    pub fn cold_start(&self, kind: StepKind) -> f64 {
        if let Some(v) = self.cfg.cold_start_usd.get(kind.as_str()) {
            return *v;
        }
        let scale = match kind {
            StepKind::Executor => 2.0,
            StepKind::Planner | StepKind::Fixer | StepKind::Remarks => 1.0,
            StepKind::Reviewer | StepKind::Tester | StepKind::Skeptic => 0.5,
        };
        self.cfg.default_estimate_usd * scale
    }

    /// The estimate for a step of `kind` in `project`.
    ///
    /// The base is a high quantile (`estimate_quantile`, 0.9 by default) of the kind's last
    /// `history_runs` finished runs — the project's own when it has `project_min_runs` of
    /// them. A quantile, not a mean or an exponentially weighted mean: one runaway step (a
    /// subagent storm) moves a mean by its whole excess and keeps an EWMA high for many runs,
    /// while it moves a quantile by one rank; and a quantile above the median keeps most steps
    /// within their estimate without paying for the tail on every step. Then `× (1 + margin)`,
    /// and `× miss_factor` per recent miss (up to three): a cut step's cost is only a lower
    /// bound of what it needed. With fewer than three samples the cold-start value still
    /// bounds it from below.
    pub fn estimate(&self, runs: &[Run], kind: StepKind, project: Option<&str>) -> Estimate {
        let n = self.cfg.history_runs as usize;
        let recent = |p: Option<&str>| -> (Vec<f64>, u32) {
            let mut samples = Vec::new();
            let mut misses = 0u32;
            let mut seen = 0usize;
            for r in runs.iter().rev() {
                if r.kind != kind || p.is_some_and(|p| p != r.project) {
                    continue;
                }
                match r.outcome {
                    Outcome::Done => samples.push(r.cost_usd),
                    Outcome::Miss => misses += 1,
                    Outcome::Other => continue,
                }
                seen += 1;
                if seen >= n {
                    break;
                }
            }
            (samples, misses)
        };
        let mut per_project = false;
        let (mut samples, mut misses) = recent(None);
        if let Some(p) = project {
            let (own, own_misses) = recent(Some(p));
            if own.len() >= self.cfg.project_min_runs as usize {
                (samples, misses, per_project) = (own, own_misses, true);
            }
        }
        samples.sort_by(f64::total_cmp);
        let cold = self.cold_start(kind);
        let base = match samples.len() {
            0 => cold,
            k if k < MIN_SAMPLES => quantile(&samples, self.cfg.estimate_quantile).max(cold),
            _ => quantile(&samples, self.cfg.estimate_quantile),
        };
        let raise = self
            .cfg
            .miss_factor
            .powi(i32::try_from(misses).unwrap_or(MISS_CAP).min(MISS_CAP));
        Estimate {
            usd: base * (1.0 + self.cfg.margin) * raise,
            count: u32::try_from(samples.len()).unwrap_or(u32::MAX),
            median: (!samples.is_empty()).then(|| quantile(&samples, 0.5)),
            high: (!samples.is_empty()).then(|| quantile(&samples, 0.9)),
            misses,
            per_project,
        }
    }

    /// `--max-budget-usd` for a step with this estimate; `None` when no cap is configured.
    pub fn max_budget(&self, estimate_usd: f64) -> Option<f64> {
        (self.cfg.max_budget_factor > 0.0).then_some(estimate_usd * self.cfg.max_budget_factor)
    }

    /// Every configured pool as it stands at `snap.now_ms`, in the order window, weekly,
    /// monthly.
    pub fn pools(&self, snap: &Snapshot) -> Vec<Pool> {
        let now = snap.now_ms;
        let mut pools = Vec::new();
        let server = snap.server.as_ref();
        if self.cfg.window_secs > 0 {
            let span = i64::from(self.cfg.window_secs) * 1000;
            pools.push(self.rolling(
                snap,
                PoolKind::Window,
                span,
                self.cfg.threshold_usd,
                server.and_then(|s| s.window.map(|w| (s.observed_ms, w))),
            ));
        }
        if let Some(t) = self.cfg.weekly_threshold_usd {
            pools.push(self.rolling(
                snap,
                PoolKind::Weekly,
                WEEK_MS,
                t,
                server.and_then(|s| s.weekly.map(|w| (s.observed_ms, w))),
            ));
        }
        if let Some(t) = self.cfg.monthly_threshold_usd {
            let (start, next) = month_bounds(now, self.cfg.monthly_reset_day);
            let spent: f64 = snap
                .runs
                .iter()
                .filter(|r| r.finished_ms >= start && r.finished_ms <= now)
                .fold(0.0, |a, r| a + r.cost_usd);
            pools.push(Pool {
                kind: PoolKind::Monthly,
                span_ms: next - start,
                threshold_usd: t,
                spent_usd: spent,
                utilization: None,
                leaves: if spent > 0.0 {
                    vec![(next, spent)]
                } else {
                    Vec::new()
                },
            });
        }
        pools
    }

    /// A rolling pool: the runs that ended within `span`; or, when the server reported this
    /// window's utilisation within the span and before its reset, `utilization × threshold`
    /// (the server's word on what is used, which also sees spending we do not: the same
    /// account used interactively) plus what ended after the report.
    fn rolling(
        &self,
        snap: &Snapshot,
        kind: PoolKind,
        span: i64,
        threshold: f64,
        server: Option<(i64, ServerWindow)>,
    ) -> Pool {
        let now = snap.now_ms;
        let fresh = server.filter(|(at, w)| {
            *at > now - span && *at <= now && w.resets_at_ms.is_none_or(|r| r > now)
        });
        let from = fresh.map_or(now - span, |(at, _)| at);
        let mut leaves: Vec<(i64, f64)> = snap
            .runs
            .iter()
            .filter(|r| r.finished_ms > from && r.finished_ms > now - span && r.finished_ms <= now)
            .map(|r| (r.finished_ms + span, r.cost_usd))
            .collect();
        let mut utilization = None;
        if let Some((at, w)) = fresh {
            let used = w.utilization.clamp(0.0, 1.0) * threshold;
            leaves.push((w.resets_at_ms.unwrap_or(at + span), used));
            utilization = Some(w.utilization);
        }
        leaves.sort_by_key(|(t, _)| *t);
        Pool {
            kind,
            span_ms: span,
            threshold_usd: threshold,
            spent_usd: leaves.iter().fold(0.0, |a, (_, c)| a + c),
            utilization,
            leaves,
        }
    }

    /// May a step of `kind` in `project` start now? `step`: the step's id when it exists
    /// (an attempt after a miss is estimated at least at what the miss spent). On `Start`,
    /// the caller pushes [`Policy::reserve_for`] onto `snap.running` before asking about the
    /// next candidate ([`Policy::admit`] does both).
    pub fn decide(
        &self,
        snap: &Snapshot,
        kind: StepKind,
        project: &str,
        step: Option<&str>,
    ) -> Decision {
        self.decide_for(
            snap,
            kind,
            self.reserve_for(&snap.runs, kind, project, step),
        )
    }

    /// [`Policy::decide`], and on `Start` the step's reserve is pushed onto `snap.running`.
    pub fn admit(
        &self,
        snap: &mut Snapshot,
        kind: StepKind,
        project: &str,
        step: Option<&str>,
    ) -> Decision {
        let r = self.reserve_for(&snap.runs, kind, project, step);
        let d = self.decide_for(snap, kind, r);
        if matches!(d, Decision::Start { .. }) {
            snap.running.push(r);
        }
        d
    }

    /// The claim of a step of `kind` in `project` (`step`: its id, when it exists).
    pub fn reserve_for(
        &self,
        runs: &[Run],
        kind: StepKind,
        project: &str,
        step: Option<&str>,
    ) -> Reserve {
        let floor = step.map_or(0.0, |s| self.retry_floor(runs, s));
        let est = self.estimate(runs, kind, Some(project)).usd.max(floor);
        self.reserve(runs, kind, project, est, floor)
    }

    /// The claim of a step with this estimate: its typical cost is the median of the history
    /// its estimate rests on × (1 + margin) (at least `floor`, at most the estimate).
    pub fn reserve(
        &self,
        runs: &[Run],
        kind: StepKind,
        project: &str,
        estimate_usd: f64,
        floor: f64,
    ) -> Reserve {
        let e = self.estimate(runs, kind, Some(project));
        let typical = e
            .median
            .map_or(estimate_usd, |m| (m * (1.0 + self.cfg.margin)).max(floor));
        Reserve {
            estimate_usd,
            typical_usd: typical.min(estimate_usd),
        }
    }

    /// What the running steps and a candidate claim of `pool`. Counted by our own runs, the
    /// sum of their estimates: a running step's spending so far is in no count. When the
    /// server's utilisation is the pool's count, it already holds what the running steps have
    /// accrued, so each estimate's margin over a typical step need not be reserved in full
    /// for every step at once: the typical costs plus the root of the sum of the squared
    /// margins (the margins of independent steps add up like deviations, and a step running
    /// over its typical cost shows in the next utilisation, still counted in full there).
    pub fn need(&self, pool: &Pool, running: &[Reserve], candidate: Reserve) -> f64 {
        let all = running.iter().chain(std::iter::once(&candidate));
        if pool.utilization.is_none() {
            return all.fold(0.0, |a, r| a + r.estimate_usd);
        }
        let (typical, square) = all.fold((0.0, 0.0), |(t, q), r| {
            let over = (r.estimate_usd - r.typical_usd).max(0.0);
            (t + r.typical_usd, q + over * over)
        });
        typical + f64::sqrt(square)
    }

    /// The least a step's next attempt is estimated at: the most one of its earlier attempts
    /// spent before a usage limit or its cap cut it (× `1 + margin`), 0 when none was cut.
    /// Raising the kind's estimate by `miss_factor` is not enough for the step that missed:
    /// cut at a cap of 4 × its estimate, it needs more than 4 × that estimate, and a cap of
    /// 4 × 1.5 × the estimate cuts it again.
    pub fn retry_floor(&self, runs: &[Run], step: &str) -> f64 {
        runs.iter()
            .filter(|r| r.outcome == Outcome::Miss && r.step_id == step)
            .fold(0.0, |a: f64, r| a.max(r.cost_usd))
            * (1.0 + self.cfg.margin)
    }

    /// [`Policy::decide`] for a step whose claim is given (the simulator's oracle, which
    /// knows every step's true cost, asks with [`Reserve::fixed`]).
    pub fn decide_for(&self, snap: &Snapshot, kind: StepKind, cand: Reserve) -> Decision {
        let est = cand.estimate_usd;
        let now = snap.now_ms;
        if let Some(until) = snap.park_until.filter(|t| *t > now) {
            return Decision::Wait {
                until_ms: until,
                reason: "the account's usage limit: no step starts before its reset".into(),
            };
        }
        if let Some(s) = &snap.server
            && s.rejected
            && let Some(until) = s.resets_at_ms.filter(|t| *t > now)
        {
            return Decision::Wait {
                until_ms: until,
                reason: "the server rejected the last request: no step starts before its reset"
                    .into(),
            };
        }
        let mut until: Option<i64> = None;
        let mut reasons = Vec::new();
        for p in self.pools(snap) {
            let need = self.need(&p, &snap.running, cand);
            let running = need - est;
            if p.spent_usd + need <= p.threshold_usd + EPS {
                continue;
            }
            if est > p.threshold_usd + EPS {
                // It will never fit: say so (the line waits, visibly, for a finer cut or a
                // larger threshold; it is asked again now and then, as its estimate may fall).
                until = Some(until.map_or(now + RECHECK_MS, |u: i64| u.max(now + RECHECK_MS)));
                reasons.push(format!(
                    "this {} step's estimate ${est:.4} is larger than {}'s whole threshold ${:.2}: cut it finer or raise the threshold",
                    kind.as_str(),
                    p.name(),
                    p.threshold_usd
                ));
                continue;
            }
            let at = p
                .fits_at(need)
                // Once running steps end.
                .or_else(|| p.fits_at(est).map(|t| t.max(now + RECHECK_MS)))
                .unwrap_or(now + RECHECK_MS);
            until = Some(until.map_or(at, |u: i64| u.max(at)));
            reasons.push(format!(
                "spent ${:.4} in {} + ${running:.4} running + ${est:.4} for this {} step > ${:.2}",
                p.spent_usd,
                p.name(),
                kind.as_str(),
                p.threshold_usd
            ));
        }
        match until {
            None => Decision::Start { estimate_usd: est },
            Some(u) => Decision::Wait {
                until_ms: u.max(now + 1000),
                reason: format!("budget: {}", reasons.join("; ")),
            },
        }
    }

    /// Misses: (all, in the last 24 hours, advice when the latter reaches
    /// `miss_advice_count`).
    pub fn misses(&self, runs: &[Run], now_ms: i64) -> (u32, u32, Option<String>) {
        let total = runs.iter().filter(|r| r.outcome == Outcome::Miss).count();
        let recent = runs
            .iter()
            .filter(|r| r.outcome == Outcome::Miss && r.finished_ms > now_ms - DAY_MS)
            .count();
        let recent = u32::try_from(recent).unwrap_or(u32::MAX);
        let advice = (self.cfg.miss_advice_count > 0 && recent >= self.cfg.miss_advice_count)
            .then(|| {
                format!(
                "steps too large: cut them finer ({recent} steps cut by a usage limit or their budget cap in 24 hours)"
            )
            });
        (u32::try_from(total).unwrap_or(u32::MAX), recent, advice)
    }
}

/// The `q` quantile of sorted values, linearly interpolated.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => 0.0,
        1 => sorted[0],
        n => {
            #[allow(clippy::cast_precision_loss)]
            let pos = q.clamp(0.0, 1.0) * (n - 1) as f64;
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let lo = pos.floor() as usize;
            let hi = (lo + 1).min(n - 1);
            #[allow(clippy::cast_precision_loss)]
            let frac = pos - lo as f64;
            sorted[lo] + (sorted[hi] - sorted[lo]) * frac
        }
    }
}

/// The start of the current credit month and of the next one (unix ms), the month turning on
/// `day` at 00:00 UTC.
pub fn month_bounds(now_ms: i64, day: u32) -> (i64, i64) {
    let now = Utc
        .timestamp_millis_opt(now_ms)
        .single()
        .unwrap_or_else(Utc::now);
    let at = |y: i32, m: u32| {
        Utc.with_ymd_and_hms(y, m, day, 0, 0, 0)
            .single()
            .map_or(0, |t| t.timestamp_millis())
    };
    let (y, m) = (now.year(), now.month());
    let prev = |y: i32, m: u32| if m == 1 { (y - 1, 12) } else { (y, m - 1) };
    let next = |y: i32, m: u32| if m == 12 { (y + 1, 1) } else { (y, m + 1) };
    let this = at(y, m);
    if this <= now_ms {
        let (ny, nm) = next(y, m);
        (this, at(ny, nm))
    } else {
        let (py, pm) = prev(y, m);
        (at(py, pm), this)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2027-01-15 12:00 UTC: a virtual clock, nothing sleeps.
    const NOW: i64 = 1_799_928_000_000;

    fn cfg() -> BudgetConfig {
        BudgetConfig {
            window_secs: 3600,
            threshold_usd: 10.0,
            margin: 0.0,
            ..BudgetConfig::default()
        }
    }

    fn run(kind: StepKind, project: &str, cost: f64, ago_ms: i64, outcome: Outcome) -> Run {
        Run {
            kind,
            project: project.into(),
            step_id: "s".into(),
            cost_usd: cost,
            finished_ms: NOW - ago_ms,
            outcome,
        }
    }

    fn done(cost: f64, ago_ms: i64) -> Run {
        run(StepKind::Executor, "p", cost, ago_ms, Outcome::Done)
    }

    fn snap(mut runs: Vec<Run>) -> Snapshot {
        runs.sort_by_key(|r| r.finished_ms);
        Snapshot {
            now_ms: NOW,
            runs,
            ..Snapshot::default()
        }
    }

    fn wait(d: &Decision) -> (i64, String) {
        match d {
            Decision::Wait { until_ms, reason } => (*until_ms, reason.clone()),
            Decision::Start { .. } => panic!("expected a wait, got {d:?}"),
        }
    }

    #[test]
    fn starts_while_spent_plus_running_plus_estimate_stays_at_or_below_the_threshold() {
        let p = Policy::new(cfg());
        // The planner's cold start: 1.0. 9 spent + 1 = 10: exactly the threshold.
        let mut s = snap(vec![done(9.0, 10 * MINUTE_MS)]);
        assert_eq!(
            p.decide(&s, StepKind::Planner, "p", None),
            Decision::Start { estimate_usd: 1.0 }
        );
        // A running step's estimate counts.
        s.running.push(Reserve::fixed(0.5));
        let (_, reason) = wait(&p.decide(&s, StepKind::Planner, "p", None));
        assert!(reason.contains("the window"), "{reason}");
        // Spending older than the window does not count.
        let s = snap(vec![done(100.0, 2 * HOUR_MS), done(4.0, MINUTE_MS)]);
        assert!(matches!(
            p.decide(&s, StepKind::Planner, "p", None),
            Decision::Start { .. }
        ));
    }

    #[test]
    fn over_the_threshold_waits_until_enough_spending_ages_out() {
        let p = Policy::new(cfg());
        let s = snap(vec![done(6.0, 50 * MINUTE_MS), done(4.0, 10 * MINUTE_MS)]);
        // The 6 spent 50 minutes ago leaves the hour-long window in 10 minutes; then 4 + 1 fits.
        let (until, _) = wait(&p.decide(&s, StepKind::Planner, "p", None));
        assert_eq!(until, NOW + 10 * MINUTE_MS);
        // Only the end of a running step can make room: look again in a few minutes.
        let mut s = snap(vec![]);
        s.running.push(Reserve::fixed(9.5));
        let (until, _) = wait(&p.decide(&s, StepKind::Planner, "p", None));
        assert_eq!(until, NOW + RECHECK_MS);
    }

    #[test]
    fn a_step_larger_than_the_pool_never_starts_and_says_why() {
        let p = Policy::new(BudgetConfig {
            cold_start_usd: [("executor".to_string(), 25.0)].into(),
            ..cfg()
        });
        let (until, reason) = wait(&p.decide(&snap(vec![]), StepKind::Executor, "p", None));
        assert_eq!(until, NOW + RECHECK_MS);
        assert!(
            reason.contains("larger than the window's whole threshold"),
            "{reason}"
        );
        assert!(reason.contains("cut it finer"), "{reason}");
    }

    #[test]
    fn the_weekly_cap_holds_back_what_the_window_allows() {
        let s = snap(vec![done(11.5, 2 * DAY_MS), done(0.2, 8 * DAY_MS)]);
        assert!(matches!(
            Policy::new(cfg()).decide(&s, StepKind::Planner, "p", None),
            Decision::Start { .. }
        ));
        let p = Policy::new(BudgetConfig {
            weekly_threshold_usd: Some(12.0),
            ..cfg()
        });
        let (until, reason) = wait(&p.decide(&s, StepKind::Planner, "p", None));
        assert!(reason.contains("the week"), "{reason}");
        // When the 11.5 is seven days old.
        assert_eq!(until, NOW - 2 * DAY_MS + 7 * DAY_MS);
    }

    #[test]
    fn the_monthly_credit_waits_for_the_month_to_turn() {
        let p = Policy::new(BudgetConfig {
            monthly_threshold_usd: Some(100.0),
            window_secs: 0,
            ..cfg()
        });
        // 99.5 spent since 2027-01-01; a December run does not count.
        let s = snap(vec![done(99.5, 10 * DAY_MS), done(50.0, 20 * DAY_MS)]);
        let pools = p.pools(&s);
        assert_eq!(pools.len(), 1, "the window is off");
        assert_eq!(pools[0].kind, PoolKind::Monthly);
        assert_eq!(pools[0].spent_usd, 99.5);
        let (until, reason) = wait(&p.decide(&s, StepKind::Planner, "p", None));
        assert!(reason.contains("the month"), "{reason}");
        let feb = Utc
            .with_ymd_and_hms(2027, 2, 1, 0, 0, 0)
            .unwrap()
            .timestamp_millis();
        assert_eq!(until, feb);
        // The credit renewing on the 20th: the January 5 run is in the month from December 20.
        let (start, next) = month_bounds(NOW, 20);
        assert_eq!(
            start,
            Utc.with_ymd_and_hms(2026, 12, 20, 0, 0, 0)
                .unwrap()
                .timestamp_millis()
        );
        assert_eq!(
            next,
            Utc.with_ymd_and_hms(2027, 1, 20, 0, 0, 0)
                .unwrap()
                .timestamp_millis()
        );
    }

    #[test]
    fn the_estimate_is_a_high_quantile_robust_to_an_outlier() {
        let p = Policy::new(BudgetConfig {
            margin: 0.2,
            estimate_quantile: 0.75,
            ..cfg()
        });
        // Nine steps around 1 and one runaway at 40.
        let mut runs: Vec<Run> = (0..9)
            .map(|i| done(0.8 + 0.05 * f64::from(i), HOUR_MS + i64::from(i)))
            .collect();
        runs.push(done(40.0, HOUR_MS - 1));
        let e = p.estimate(&snap(runs.clone()).runs, StepKind::Executor, None);
        assert_eq!(e.count, 10);
        // p75 of 0.8..1.2 plus 40 is 1.1375; a mean would be 4.9.
        let q = 1.1375 * 1.2;
        assert!((e.usd - q).abs() < 1e-9, "{e:?}");
        assert!((e.median.unwrap() - 1.025).abs() < 1e-9, "{e:?}");
        assert!(e.high.unwrap() > 4.0, "p90 sees the tail: {e:?}");
        // Only the last `history_runs` count.
        let p = Policy::new(BudgetConfig {
            history_runs: 3,
            ..cfg()
        });
        let e = p.estimate(&snap(runs).runs, StepKind::Executor, None);
        assert_eq!(e.count, 3);
    }

    #[test]
    fn cold_start_values_per_kind_bound_a_thin_history() {
        let p = Policy::new(BudgetConfig {
            cold_start_usd: [("reviewer".to_string(), 0.3)].into(),
            ..cfg()
        });
        let none = snap(vec![]);
        assert_eq!(p.estimate(&none.runs, StepKind::Executor, None).usd, 2.0);
        assert_eq!(p.estimate(&none.runs, StepKind::Planner, None).usd, 1.0);
        assert_eq!(p.estimate(&none.runs, StepKind::Tester, None).usd, 0.5);
        assert_eq!(p.estimate(&none.runs, StepKind::Reviewer, None).usd, 0.3);
        // Two cheap runs do not pull the estimate below the cold start yet; three do.
        let mut runs = vec![done(0.1, 3 * HOUR_MS), done(0.1, 2 * HOUR_MS)];
        assert_eq!(
            p.estimate(&snap(runs.clone()).runs, StepKind::Executor, None)
                .usd,
            2.0
        );
        runs.push(done(0.1, HOUR_MS));
        let e = p.estimate(&snap(runs).runs, StepKind::Executor, None);
        assert!((e.usd - 0.1).abs() < 1e-9, "{e:?}");
    }

    #[test]
    fn a_project_with_enough_history_gets_its_own_estimate() {
        let p = Policy::new(BudgetConfig {
            project_min_runs: 3,
            estimate_quantile: 0.75,
            ..cfg()
        });
        let mut runs: Vec<Run> = (0..5)
            .map(|i| run(StepKind::Executor, "big", 6.0, HOUR_MS + i, Outcome::Done))
            .collect();
        runs.extend((0..20).map(|i| {
            run(
                StepKind::Executor,
                "small",
                1.0,
                HOUR_MS + 10 + i,
                Outcome::Done,
            )
        }));
        let s = snap(runs);
        let big = p.estimate(&s.runs, StepKind::Executor, Some("big"));
        assert!(big.per_project && (big.usd - 6.0).abs() < 1e-9, "{big:?}");
        // A project without enough runs gets the kind's estimate across projects (p75 of
        // twenty 1s and five 6s).
        let new = p.estimate(&s.runs, StepKind::Executor, Some("new"));
        assert!(!new.per_project && (new.usd - 1.0).abs() < 1e-9, "{new:?}");
    }

    #[test]
    fn a_miss_raises_the_estimate_of_its_kind() {
        let p = Policy::new(cfg());
        let mut runs = vec![
            done(2.0, 50 * MINUTE_MS),
            done(2.0, 40 * MINUTE_MS),
            done(2.0, 30 * MINUTE_MS),
        ];
        assert_eq!(
            p.estimate(&snap(runs.clone()).runs, StepKind::Executor, None)
                .usd,
            2.0
        );
        runs.push(run(
            StepKind::Executor,
            "p",
            0.4,
            20 * MINUTE_MS,
            Outcome::Miss,
        ));
        let e = p.estimate(&snap(runs.clone()).runs, StepKind::Executor, None);
        assert_eq!((e.usd, e.misses, e.count), (3.0, 1, 3));
        // Other kinds are not affected.
        assert_eq!(
            p.estimate(&snap(runs.clone()).runs, StepKind::Planner, None)
                .usd,
            1.0
        );
        // At most three misses count.
        for i in 0..5 {
            runs.push(run(
                StepKind::Executor,
                "p",
                0.4,
                10 * MINUTE_MS - i,
                Outcome::Miss,
            ));
        }
        let e = p.estimate(&snap(runs).runs, StepKind::Executor, None);
        assert!((e.usd - 2.0 * 1.5f64.powi(3)).abs() < 1e-9, "{e:?}");
    }

    #[test]
    fn a_step_cut_short_is_estimated_at_least_at_what_it_spent() {
        let p = Policy::new(BudgetConfig {
            margin: 0.1,
            ..cfg()
        });
        let mut runs = vec![
            done(2.0, 50 * MINUTE_MS),
            done(2.0, 40 * MINUTE_MS),
            done(2.0, 30 * MINUTE_MS),
        ];
        // Step "big" ran into its cap (4 × 2.2 = 8.8) once; the limit cut it at 3 another time.
        for (cost, ago) in [(8.8, 20 * MINUTE_MS), (3.0, 10 * MINUTE_MS)] {
            runs.push(Run {
                step_id: "big".into(),
                ..run(StepKind::Executor, "p", cost, ago, Outcome::Miss)
            });
        }
        // Two hours later: the hour-long window is empty again.
        let mut s = snap(runs);
        s.now_ms = NOW + 2 * HOUR_MS;
        // The kind's estimate: 2 × 1.1, raised twice by the misses.
        let kind = 2.0 * 1.1 * 1.5 * 1.5;
        let other = p.decide(&s, StepKind::Executor, "p", Some("other"));
        assert_eq!(other, Decision::Start { estimate_usd: kind });
        assert_eq!(p.decide(&s, StepKind::Executor, "p", None), other);
        // The step that missed: at least its largest miss × (1 + margin).
        assert!((p.retry_floor(&s.runs, "big") - 8.8 * 1.1).abs() < 1e-9);
        let Decision::Start { estimate_usd } = p.decide(&s, StepKind::Executor, "p", Some("big"))
        else {
            panic!("an empty window has room for 9.68");
        };
        assert!((estimate_usd - 8.8 * 1.1).abs() < 1e-9, "{estimate_usd}");
        assert_eq!(p.retry_floor(&s.runs, "other"), 0.0);
    }

    #[test]
    fn with_the_servers_count_the_running_margins_add_up_as_deviations() {
        let p = Policy::new(cfg());
        let claim = Reserve {
            estimate_usd: 3.0,
            typical_usd: 1.0,
        };
        // Our own count: 2 spent; two steps running, each estimated at 3 (typically 1).
        let mut s = snap(vec![done(2.0, 10 * MINUTE_MS)]);
        s.running = vec![claim, claim];
        // By our count, the sum of the estimates: 2 + 3 + 3 + 3 > 10.
        let (_, reason) = wait(&p.decide_for(&s, StepKind::Executor, claim));
        assert!(reason.contains("$6.0000 running"), "{reason}");
        // The server says 20% (the running steps' accrual included): 2 + 3 × 1 + √(3 × 2²)
        // = 8.46 ≤ 10.
        s.server = Some(ServerView {
            observed_ms: NOW,
            window: Some(ServerWindow {
                utilization: 0.2,
                resets_at_ms: None,
            }),
            ..ServerView::default()
        });
        let pool = &p.pools(&s)[0];
        let need = p.need(pool, &s.running, claim);
        assert!((need - (3.0 + 12f64.sqrt())).abs() < 1e-9, "{need}");
        assert_eq!(
            p.decide_for(&s, StepKind::Executor, claim),
            Decision::Start { estimate_usd: 3.0 }
        );
        // Claims known only by their estimate are summed either way.
        let fixed = [Reserve::fixed(3.0), Reserve::fixed(3.0)];
        assert!((p.need(pool, &fixed, Reserve::fixed(3.0)) - 9.0).abs() < 1e-9);
        // `admit` pushes the started step's claim: one executor run of history, so the cold
        // start, 2, typically too (2 + 1 + 1 + 2 + √8 ≤ 10).
        assert!(matches!(
            p.admit(&mut s, StepKind::Executor, "p", None),
            Decision::Start { .. }
        ));
        assert_eq!(s.running[2], Reserve::fixed(2.0));
        assert_eq!(s.running.len(), 3);
    }

    #[test]
    fn a_claims_typical_cost_is_the_median_with_the_margin_below_the_estimate() {
        let p = Policy::new(BudgetConfig {
            margin: 0.1,
            ..cfg()
        });
        let runs: Vec<Run> = [1.0, 1.0, 1.0, 1.0, 5.0]
            .iter()
            .enumerate()
            .map(|(i, c)| done(*c, HOUR_MS + i64::try_from(i).unwrap()))
            .collect();
        let r = p.reserve_for(&runs, StepKind::Executor, "p", None);
        // p90 of the five: 3.4; the median: 1.
        assert!((r.estimate_usd - 3.4 * 1.1).abs() < 1e-9, "{r:?}");
        assert!((r.typical_usd - 1.1).abs() < 1e-9, "{r:?}");
        // After a miss of 4, the step's claim is at least 4 × 1.1, typically too.
        let mut runs = runs;
        runs.push(Run {
            step_id: "x".into(),
            ..run(StepKind::Executor, "p", 4.0, HOUR_MS - 1, Outcome::Miss)
        });
        let r = p.reserve_for(&runs, StepKind::Executor, "p", Some("x"));
        assert!((r.typical_usd - 4.4).abs() < 1e-9, "{r:?}");
        assert!(r.estimate_usd >= r.typical_usd);
        // No history: the cold start (× 1.1), typically too.
        let r = p.reserve_for(&[], StepKind::Executor, "p", None);
        assert_eq!(r, Reserve::fixed(2.0 * 1.1));
    }

    #[test]
    fn the_cap_is_the_estimate_times_a_generous_factor() {
        assert_eq!(Policy::new(cfg()).max_budget(2.0), Some(8.0));
        let off = Policy::new(BudgetConfig {
            max_budget_factor: 0.0,
            ..cfg()
        });
        assert_eq!(off.max_budget(2.0), None);
    }

    #[test]
    fn packing_starts_a_shorter_step_below_the_one_that_does_not_fit() {
        let p = Policy::new(cfg());
        // 7 spent: room for 3. Asked in priority order: an executor (2 × 1.0 cold start = 2)…
        let mut s = snap(vec![done(7.0, 30 * MINUTE_MS)]);
        let p = Policy::new(BudgetConfig {
            cold_start_usd: [("executor".to_string(), 4.0)].into(),
            ..p.cfg
        });
        let asks = [
            (StepKind::Executor, "a"),
            (StepKind::Planner, "b"),
            (StepKind::Reviewer, "c"),
            (StepKind::Planner, "d"),
            (StepKind::Executor, "e"),
        ];
        let mut started = Vec::new();
        for (kind, project) in asks {
            if let Decision::Start { estimate_usd } = p.decide(&s, kind, project, None) {
                s.running.push(Reserve::fixed(estimate_usd));
                started.push(project);
            }
        }
        // The best line's executor (4) waits; the planner (1), the reviewer (0.5) and the
        // next planner (1) fill the room of 3 in priority order; the last executor waits.
        assert_eq!(started, ["b", "c", "d"]);
        assert!((s.running_usd() - 2.5).abs() < 1e-9);
        // With room again, priority decides first: the executor goes before anyone below.
        let mut s = snap(vec![]);
        let first = p.decide(&s, StepKind::Executor, "a", None);
        assert_eq!(first, Decision::Start { estimate_usd: 4.0 });
        s.running.push(Reserve::fixed(4.0));
        assert!(matches!(
            p.decide(&s, StepKind::Planner, "b", None),
            Decision::Start { .. }
        ));
    }

    #[test]
    fn the_servers_utilisation_overrides_our_count_of_the_window() {
        let p = Policy::new(BudgetConfig {
            weekly_threshold_usd: Some(100.0),
            ..cfg()
        });
        let w = |u: f64, resets: i64| ServerWindow {
            utilization: u,
            resets_at_ms: Some(resets),
        };
        // Our own count says 2 spent; the server, 20 minutes ago, says 85% of the window is
        // used (the account is also used elsewhere), and 0.5 ended since.
        let mut s = snap(vec![done(2.0, 30 * MINUTE_MS), done(0.5, 5 * MINUTE_MS)]);
        s.server = Some(ServerView {
            observed_ms: NOW - 20 * MINUTE_MS,
            rejected: false,
            resets_at_ms: Some(NOW + 40 * MINUTE_MS),
            window: Some(w(0.85, NOW + 40 * MINUTE_MS)),
            weekly: Some(w(0.5, NOW + 3 * DAY_MS)),
        });
        let pools = p.pools(&s);
        assert!((pools[0].spent_usd - 9.0).abs() < 1e-9, "{pools:?}");
        assert_eq!(pools[0].utilization, Some(0.85));
        assert_eq!(pools[0].resets_at_ms(), Some(NOW + 40 * MINUTE_MS));
        assert!((pools[1].spent_usd - 50.5).abs() < 1e-9, "{pools:?}");
        assert_eq!(
            p.decide(&s, StepKind::Planner, "p", None),
            Decision::Start { estimate_usd: 1.0 }
        );
        let (until, _) = wait(&p.decide(&s, StepKind::Executor, "p", None));
        assert_eq!(until, NOW + 40 * MINUTE_MS, "the server's reset");
        // It overrides downwards too: 10% used while we counted 9.5.
        let mut low = snap(vec![done(9.5, 30 * MINUTE_MS)]);
        low.server = Some(ServerView {
            observed_ms: NOW - MINUTE_MS,
            window: Some(w(0.1, NOW + 10 * MINUTE_MS)),
            ..ServerView::default()
        });
        assert!(matches!(
            p.decide(&low, StepKind::Planner, "p", None),
            Decision::Start { .. }
        ));
        // A report from before its window's reset is stale: our own count again.
        low.now_ms = NOW + 11 * MINUTE_MS;
        assert!((p.pools(&low)[0].spent_usd - 9.5).abs() < 1e-9);
    }

    #[test]
    fn rejected_and_the_accounts_park_hold_every_step_until_the_reset() {
        let p = Policy::new(cfg());
        let mut s = snap(vec![]);
        s.server = Some(ServerView {
            observed_ms: NOW - MINUTE_MS,
            rejected: true,
            resets_at_ms: Some(NOW + 30 * MINUTE_MS),
            ..ServerView::default()
        });
        for kind in [StepKind::Planner, StepKind::Reviewer] {
            let (until, reason) = wait(&p.decide(&s, kind, "p", None));
            assert_eq!(until, NOW + 30 * MINUTE_MS);
            assert!(reason.contains("rejected"), "{reason}");
        }
        s.now_ms = NOW + 30 * MINUTE_MS;
        assert!(matches!(
            p.decide(&s, StepKind::Planner, "p", None),
            Decision::Start { .. }
        ));
        s.park_until = Some(NOW + 45 * MINUTE_MS);
        let (until, _) = wait(&p.decide(&s, StepKind::Planner, "p", None));
        assert_eq!(until, NOW + 45 * MINUTE_MS);
    }

    #[test]
    fn frequent_misses_say_cut_the_steps_finer() {
        let p = Policy::new(cfg());
        let miss = |ago| run(StepKind::Executor, "p", 0.1, ago, Outcome::Miss);
        let mut runs = vec![miss(2 * DAY_MS), miss(HOUR_MS), miss(2 * HOUR_MS)];
        assert_eq!(p.misses(&runs, NOW), (3, 2, None));
        runs.push(miss(MINUTE_MS));
        let (total, recent, advice) = p.misses(&runs, NOW);
        assert_eq!((total, recent), (4, 3));
        assert!(advice.unwrap().contains("cut them finer"));
    }

    #[test]
    fn nothing_spent_is_plus_zero() {
        let p = Policy::new(BudgetConfig {
            weekly_threshold_usd: Some(1.0),
            monthly_threshold_usd: Some(1.0),
            ..cfg()
        });
        let s = snap(vec![]);
        for pool in p.pools(&s) {
            assert!(pool.spent_usd.is_sign_positive(), "{pool:?}");
        }
        assert!(s.running_usd().is_sign_positive());
    }

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

    #[test]
    fn quantiles_interpolate() {
        assert_eq!(quantile(&[], 0.5), 0.0);
        assert_eq!(quantile(&[3.0], 0.9), 3.0);
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.75), 4.0);
        assert!((quantile(&[1.0, 2.0], 0.9) - 1.9).abs() < 1e-12);
    }
}
