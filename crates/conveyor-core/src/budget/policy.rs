//! The budget policy's pure core: no database, no wall clock. Everything it looks at — the
//! finished runs, the estimates of the running steps, the server's last word, the account's
//! park, and "now" — comes in a [`Snapshot`], so the daemon (fed from SQLite) and the night
//! simulator (a virtual clock) run the very same code.
//!
//! The rule, per configured pool (rolling window, weekly cap, monthly credit): spent in the
//! pool + what the running steps' estimates have not spent yet (all of it when their spend is
//! not known) + this step's estimate ≤ the pool's threshold, the claims summed
//! ([`Policy::need`]). Callers ask for candidates in
//! priority order and add each started step's claim to [`Snapshot::running`] before asking
//! about the next ([`Policy::admit`]): a best-priority step that does not fit waits, a shorter
//! one below it that fits starts (packing), and priority stays the main order.

use conveyor_api::StepKind;

use super::config::{BudgetConfig, Threshold};

use super::snapshot::{Class, EPS, Reserve, Snapshot};
use super::time::MINUTE_MS;

/// When only the end of a running step can make room: look again after this long (the
/// scheduler is woken by the step's end anyway).
const RECHECK_MS: i64 = 5 * MINUTE_MS;
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

/// What a step is let through with: its claim's estimate (recorded on its run, the base of its
/// claim while it runs) and its `--max-budget-usd`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Admitted {
    pub estimate_usd: f64,
    pub cap_usd: Option<f64>,
}

impl Admitted {
    /// Not a step (a gate, a merge, a deploy): nothing claimed, no cap.
    pub const NOTHING: Admitted = Admitted {
        estimate_usd: 0.0,
        cap_usd: None,
    };
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

    /// The window's threshold: the configured one, or with `"auto"` the calibrated size
    /// within the floor and the ceiling (the floor until it rests on enough observations).
    pub fn window_threshold(&self, calibration: Option<&conveyor_api::Calibration>) -> f64 {
        match self.cfg.threshold_usd {
            Threshold::Usd(v) => v,
            Threshold::Auto => super::calibration::auto_threshold(
                calibration,
                self.cfg.threshold_floor_usd,
                self.cfg.threshold_ceiling_usd,
            ),
        }
    }

    /// May a step of `class` (its kind, and its size when the plan gave one) in `project`
    /// start now? `step`: the step's id when it exists
    /// (an attempt after a miss is estimated at least at what the miss spent). On `Start`,
    /// the caller pushes [`Policy::reserve_for`] onto `snap.running` before asking about the
    /// next candidate ([`Policy::admit`] does both).
    pub fn decide(
        &self,
        snap: &Snapshot,
        class: impl Into<Class>,
        project: &str,
        step: Option<&str>,
    ) -> Decision {
        let class = class.into();
        self.decide_for(
            snap,
            class.kind,
            self.reserve_for(&snap.runs, class, project, step),
        )
    }

    /// [`Policy::decide`], and on `Start` the step's reserve is pushed onto `snap.running`.
    pub fn admit(
        &self,
        snap: &mut Snapshot,
        class: impl Into<Class>,
        project: &str,
        step: Option<&str>,
    ) -> Decision {
        let class = class.into();
        let r = self.reserve_for(&snap.runs, class, project, step);
        let d = self.decide_for(snap, class.kind, r);
        if matches!(d, Decision::Start { .. }) {
            snap.running.push(r);
        }
        d
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
        let pools = self.pools(snap);
        for p in &pools {
            if self.peak(p, snap, cand) <= p.threshold_usd + EPS {
                continue;
            }
            let need = self.need(snap, cand);
            let running = need - est;
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
        if until.is_none() && self.cfg.weigh_tail {
            for p in &pools {
                let risk = self.risk(p, snap, cand);
                if risk.outweighs() {
                    until = Some(now + RECHECK_MS);
                    reasons.push(format!(
                        "this {} step would raise the chance that the steps in flight overrun {} from {:.0}% to {:.0}%; a hit would throw away ${:.2}, more than the ${:.2} it would do",
                        kind.as_str(),
                        p.name(),
                        100.0 * risk.without,
                        100.0 * risk.with,
                        risk.loss_usd,
                        risk.gain_usd
                    ));
                }
            }
        }
        match until {
            None => Decision::Start { estimate_usd: est },
            Some(u) => Decision::Wait {
                until_ms: u.max(now + 1000),
                reason: format!("budget: {}", reasons.join("; ")),
            },
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::*;
    use super::*;
    use chrono::{TimeZone, Utc};
    use conveyor_api::PoolKind;

    /// 2027-01-15 12:00 UTC: a virtual clock, nothing sleeps.
    pub(in crate::budget) const NOW: i64 = 1_799_928_000_000;

    pub(in crate::budget) fn cfg() -> BudgetConfig {
        BudgetConfig {
            window_secs: 3600,
            threshold_usd: Threshold::Usd(10.0),
            margin: 0.0,
            ..BudgetConfig::default()
        }
    }

    pub(in crate::budget) fn run(
        kind: StepKind,
        project: &str,
        cost: f64,
        ago_ms: i64,
        outcome: Outcome,
    ) -> Run {
        Run {
            kind,
            project: project.into(),
            step_id: "s".into(),
            size: None,
            cost_usd: cost,
            // Ten minutes long.
            started_ms: NOW - ago_ms - 10 * MINUTE_MS,
            finished_ms: NOW - ago_ms,
            outcome,
        }
    }

    pub(in crate::budget) fn done(cost: f64, ago_ms: i64) -> Run {
        run(StepKind::Executor, "p", cost, ago_ms, Outcome::Done)
    }

    pub(in crate::budget) fn snap(mut runs: Vec<Run>) -> Snapshot {
        runs.sort_by_key(|r| r.finished_ms);
        Snapshot {
            now_ms: NOW,
            runs,
            ..Snapshot::default()
        }
    }

    pub(in crate::budget) fn wait(d: &Decision) -> (i64, String) {
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
        // Two runs of a minute each (a longer run leaves the window piece by piece: `pool.rs`).
        let s = snap(
            [done(6.0, 50 * MINUTE_MS), done(4.0, 10 * MINUTE_MS)]
                .map(|mut r| {
                    r.started_ms = r.finished_ms - MINUTE_MS;
                    r
                })
                .to_vec(),
        );
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
    fn auto_takes_the_calibrated_size_within_floor_and_ceiling() {
        let p = Policy::new(BudgetConfig {
            threshold_usd: Threshold::Auto,
            threshold_floor_usd: 8.0,
            threshold_ceiling_usd: 40.0,
            ..cfg()
        });
        let mut s = snap(vec![]);
        assert_eq!(
            p.pools(&s)[0].threshold_usd,
            8.0,
            "the floor until the server says"
        );
        s.window_calibration = super::super::calibration::propose(&[30.0, 31.0, 29.0]);
        assert_eq!(p.pools(&s)[0].threshold_usd, 30.0);
        s.window_calibration = super::super::calibration::propose(&[90.0, 91.0, 89.0]);
        assert_eq!(p.pools(&s)[0].threshold_usd, 40.0);
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
}
