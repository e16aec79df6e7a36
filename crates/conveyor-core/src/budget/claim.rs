//! A step's claim on the pools: what a candidate is admitted at, what a running step is
//! counted for as it spends, and how the claims add up over time against the spending that
//! leaves a rolling pool ([`Policy::peak`], what admission checks).

use super::estimate::MIN_SAMPLES;
use super::policy::Policy;
use super::pool::Pool;
use super::quantile::quantile;
use super::snapshot::{Class, Reserve, Run, Snapshot, Tail};
use super::time::MINUTE_MS;

/// A running step's claim rests on the samples that cost at least its spend so far while
/// there are this many of them ([`Policy::running`]).
const LIVE_MIN_SAMPLES: usize = 3;
/// Past its history, a running step is claimed at this multiple of its spend.
const PAST_HISTORY_HIGH: f64 = 2.0;

impl Policy {
    /// The claim of a step of `class` in `project` (`step`: its id, when it exists).
    pub fn reserve_for(
        &self,
        runs: &[Run],
        class: impl Into<Class>,
        project: &str,
        step: Option<&str>,
    ) -> Reserve {
        let class = class.into();
        let floor = step.map_or(0.0, |s| self.retry_floor(runs, s));
        let est = self.estimate(runs, class, Some(project)).usd.max(floor);
        let mut r = self.reserve(runs, class, project, est);
        // An attempt after a miss costs at least what the miss spent.
        if let Some(t) = &mut r.tail {
            for p in &mut t.0 {
                *p = p.max(floor);
            }
        }
        r
    }

    /// The claim of a step with this estimate, spread at its kind's rate.
    pub fn reserve(
        &self,
        runs: &[Run],
        class: impl Into<Class>,
        project: &str,
        estimate_usd: f64,
    ) -> Reserve {
        let h = self.history(runs, class.into(), Some(project));
        Reserve {
            estimate_usd,
            live_usd: 0.0,
            rate_usd_min: self.rate(&h),
            started_ms: None,
            // The runs the estimate rests on, raised as it is by recent misses.
            tail: Tail::of(&h.samples, MIN_SAMPLES, self.raise(h.misses), 0.0),
        }
    }

    /// The claim of a running step admitted with `estimate_usd` that has spent `live_usd` so
    /// far: what steps of its kind that spent at least as much went on to cost.
    ///
    /// A step's cost is known only when it ends; while it runs, its spend so far says which
    /// part of its kind's history it belongs to. Of the samples its estimate rests on, those
    /// that cost at least `live_usd` are the steps that were still running at this point, and
    /// their `estimate_quantile` (× 1 + margin, × the misses' raise) is this step's claim: a
    /// step past the small mode of a bimodal kind is claimed as a large one, and one deep in a
    /// heavy tail is claimed at the tail's quantile, not at the estimate it has outrun. Beyond
    /// all but a few samples, history says nothing more, and a step that has run that long is
    /// not assumed to stop now: it is claimed at twice its spend. The claim never falls below
    /// the admitted one, nor below the spend itself.
    pub fn running(
        &self,
        runs: &[Run],
        class: impl Into<Class>,
        project: &str,
        estimate_usd: f64,
        live_usd: f64,
    ) -> Reserve {
        let class = class.into();
        let admitted = self.reserve(runs, class, project, estimate_usd);
        let live = live_usd.max(0.0);
        if live <= 0.0 {
            return admitted;
        }
        let h = self.history(runs, class, Some(project));
        let start = h.samples.partition_point(|s| *s < live);
        let above = &h.samples[start..];
        let high = if above.len() >= LIVE_MIN_SAMPLES {
            quantile(above, self.cfg.estimate_quantile)
                * (1.0 + self.cfg.margin)
                * self.raise(h.misses)
        } else {
            live * PAST_HISTORY_HIGH
        };
        Reserve {
            estimate_usd: admitted.estimate_usd.max(high).max(live),
            live_usd: live,
            // Its kind's costs, given that it has spent this much.
            tail: Tail::of(&h.samples, MIN_SAMPLES, self.raise(h.misses), live),
            ..admitted
        }
    }

    /// What the running steps and a candidate claim from now on, all at once (the
    /// wait's reckoning; admission looks at [`Policy::peak`]): the sum of what is left of
    /// their claims. With the running steps' spend so far (live costs), the pool's count
    /// already holds what each has spent, so each claims only the rest of its estimate.
    ///
    /// The claims are summed, not pooled as deviations around their typical costs (the root
    /// sum of squares of their margins, as this rule was until 2026-12): step costs are
    /// heavy-tailed, and for a few running steps, all there are, the root sum of squares falls
    /// below the true quantile of their sum (three lognormal σ 1 steps: 8.3 × the median
    /// against a 0.9 quantile of 9.1). In the night simulator's daemon's case (the server's
    /// word, live costs, the planner's sizes), summing cut the limit hits on heavy-tailed
    /// nights by a fifth to a third and lifted the share of the bound done by 1.5 points on
    /// seeds 1–100, 0.7 on seeds 101–200 (`docs/benchmarks/budget.md`, "Why the claims are
    /// summed").
    pub fn need(&self, snap: &Snapshot, candidate: Reserve) -> f64 {
        self.level(snap, candidate, f64::INFINITY)
    }

    /// What the running steps and `candidate` claim by `minutes` from now, at most
    /// their rates ([`Policy::need`]).
    fn level(&self, snap: &Snapshot, candidate: Reserve, minutes: f64) -> f64 {
        snap.running
            .iter()
            .chain(std::iter::once(&candidate))
            .map(|r| r.by(minutes, snap.live))
            .sum()
    }

    /// The highest `pool` is expected to stand from now on if `candidate` starts beside the
    /// running steps: what is spent in it, plus what the steps have still to spend by each
    /// moment (at most their rates allow), less what has left the pool by then.
    ///
    /// Spending leaves a rolling pool as it ages past the span, while a step spends over its
    /// run, not at its start; counting every claim in full at once reserves room that older
    /// spending frees before the step can use it. The level is checked just before each part
    /// of the spending leaves and when every claim can have been spent; between those points
    /// it only rises. A claim without a known rate counts in full at once, as before.
    pub fn peak(&self, pool: &Pool, snap: &Snapshot, candidate: Reserve) -> f64 {
        let in_pool = snap.live;
        let horizon = snap
            .running
            .iter()
            .chain(std::iter::once(&candidate))
            .fold(0.0_f64, |a, r| a.max(r.spent_within(in_pool)));
        let mut left = 0.0;
        let mut peak = pool.spent_usd;
        for (t, usd) in &pool.leaves {
            #[allow(clippy::cast_precision_loss)]
            let at = (t - snap.now_ms) as f64 / MINUTE_MS as f64;
            if at > horizon {
                break;
            }
            if at > 0.0 {
                peak = peak.max(pool.spent_usd - left + self.level(snap, candidate, at));
            }
            left += usd;
        }
        peak.max(pool.spent_usd - left + self.level(snap, candidate, horizon))
    }
}

#[cfg(test)]
mod tests {
    use super::super::config::BudgetConfig;
    use super::super::policy::tests::{NOW, cfg, done, run, snap, wait};
    use super::super::{Decision, HOUR_MS, Outcome, ServerView, ServerWindow};
    use super::*;
    use conveyor_api::StepKind;

    #[test]
    fn the_claims_add_up_in_full_under_the_servers_word_too() {
        let p = Policy::new(cfg());
        // Our own count: 2 spent; two steps running, each estimated at 3.
        let mut s = snap(vec![done(2.0, 10 * MINUTE_MS)]);
        s.running = vec![Reserve::fixed(3.0), Reserve::fixed(3.0)];
        // The sum of the estimates: 2 + 3 + 3 + 3 > 10.
        let (_, reason) = wait(&p.decide_for(&s, StepKind::Executor, Reserve::fixed(3.0)));
        assert!(reason.contains("$6.0000 running"), "{reason}");
        // The server says 15%, the running steps' accrual included; the claims are still
        // summed, not pooled as deviations: 1.5 + 3 + 3 + 3 > 10.
        s.server = Some(ServerView {
            observed_ms: NOW,
            window: Some(ServerWindow {
                utilization: 0.15,
                resets_at_ms: None,
            }),
            ..ServerView::default()
        });
        assert!((p.need(&s, Reserve::fixed(3.0)) - 9.0).abs() < 1e-9);
        let (_, reason) = wait(&p.decide_for(&s, StepKind::Executor, Reserve::fixed(3.0)));
        assert!(reason.contains("spent $1.5000 in"), "{reason}");
        // A running step's spend so far, when the snapshot does not say the count holds it
        // (`live` false), does not shorten its claim: the server's word alone is not enough.
        let unknown = Snapshot {
            running: vec![
                Reserve {
                    live_usd: 1.0,
                    ..Reserve::fixed(3.0)
                };
                2
            ],
            ..s.clone()
        };
        assert!((p.need(&unknown, Reserve::fixed(3.0)) - 9.0).abs() < 1e-9);
        assert!(
            (p.need(
                &Snapshot {
                    live: true,
                    ..unknown
                },
                Reserve::fixed(3.0)
            ) - 7.0)
                .abs()
                < 1e-9
        );
        // `admit` pushes the started step's claim: one executor run of history, so the cold
        // start, 2 (1.5 + 3 + 3 + 2 ≤ 10).
        assert!(matches!(
            p.admit(&mut s, StepKind::Executor, "p", None),
            Decision::Start { .. }
        ));
        assert_eq!(s.running[2], Reserve::fixed(2.0));
        assert_eq!(s.running.len(), 3);
    }

    #[test]
    fn a_claim_is_its_kinds_quantile_and_never_below_what_it_missed_at() {
        let p = Policy::new(BudgetConfig {
            margin: 0.1,
            ..cfg()
        });
        let runs: Vec<Run> = [1.0, 1.0, 1.0, 1.0, 5.0]
            .iter()
            .enumerate()
            .map(|(i, c)| done(*c, HOUR_MS + i64::try_from(i).unwrap()))
            .collect();
        // p90 of the five: 3.4, × 1.1.
        let r = p.reserve_for(&runs, StepKind::Executor, "p", None);
        assert!((r.estimate_usd - 3.4 * 1.1).abs() < 1e-9, "{r:?}");
        // A miss of 6 raises the kind by the miss factor (3.4 × 1.1 × 1.5 = 5.61), and the step
        // that missed is claimed at no less than what it spent: 6 × 1.1.
        let mut runs = runs;
        runs.push(Run {
            step_id: "x".into(),
            ..run(StepKind::Executor, "p", 6.0, HOUR_MS - 1, Outcome::Miss)
        });
        let r = p.reserve_for(&runs, StepKind::Executor, "p", None);
        assert!((r.estimate_usd - 3.4 * 1.1 * 1.5).abs() < 1e-9, "{r:?}");
        let r = p.reserve_for(&runs, StepKind::Executor, "p", Some("x"));
        assert!((r.estimate_usd - 6.6).abs() < 1e-9, "{r:?}");
        // No history: the cold start (× 1.1).
        let r = p.reserve_for(&[], StepKind::Executor, "p", None);
        assert_eq!(r, Reserve::fixed(2.0 * 1.1));
    }

    /// Five steps of the kind cost 1 and five cost 4 (a bimodal kind), each over `minutes`.
    fn bimodal(minutes: i64) -> Vec<Run> {
        (0..10)
            .map(|i| {
                let mut r = done(if i % 2 == 0 { 1.0 } else { 4.0 }, HOUR_MS + i * MINUTE_MS);
                r.started_ms = r.finished_ms - minutes * MINUTE_MS;
                r
            })
            .collect()
    }

    #[test]
    fn a_running_step_is_claimed_as_the_steps_that_spent_as_much_went_on_to_cost() {
        let p = Policy::new(cfg());
        let runs = snap(bimodal(10)).runs;
        let admitted = p.reserve_for(&runs, StepKind::Executor, "p", None);
        // p90 of 1,1,1,1,1,4,4,4,4,4 is 4.
        assert_eq!(admitted.estimate_usd, 4.0);
        // Nothing spent yet: the admitted claim.
        assert_eq!(
            p.running(&runs, StepKind::Executor, "p", 4.0, 0.0),
            admitted
        );
        // Below the small mode: either kind, claimed at the p90 of all ten.
        let r = p.running(&runs, StepKind::Executor, "p", 4.0, 0.5);
        assert_eq!((r.estimate_usd, r.live_usd), (4.0, 0.5));
        // Past the small mode it is a large one: the p90 of the five fours.
        let r = p.running(&runs, StepKind::Executor, "p", 3.0, 1.5);
        assert_eq!(r.estimate_usd, 4.0);
        // Past everything history knows, it is not assumed to stop now: twice its spend.
        let r = p.running(&runs, StepKind::Executor, "p", 4.0, 5.0);
        assert_eq!(r.estimate_usd, 10.0);
        // Never below the estimate it was admitted at.
        let r = p.running(&runs, StepKind::Executor, "p", 6.0, 1.5);
        assert_eq!(r.estimate_usd, 6.0);
    }

    #[test]
    fn the_pool_holds_what_running_steps_have_spent_and_they_claim_the_rest() {
        let p = Policy::new(cfg());
        let mut s = snap(vec![done(2.0, 10 * MINUTE_MS)]);
        s.live = true;
        s.running = vec![Reserve {
            live_usd: 1.5,
            started_ms: Some(NOW - 10 * MINUTE_MS),
            ..Reserve::fixed(3.0)
        }];
        let pool = &p.pools(&s)[0];
        assert!((pool.spent_usd - 3.5).abs() < 1e-9, "{pool:?}");
        // What the step still claims is what its claim has not spent yet: 3.5 + 1.5 + 5 ≤ 10.
        assert!((p.need(&s, Reserve::fixed(5.0)) - 6.5).abs() < 1e-9);
        assert_eq!(
            p.decide_for(&s, StepKind::Executor, Reserve::fixed(5.0)),
            Decision::Start { estimate_usd: 5.0 }
        );
        // The server's word already holds it: not counted twice.
        let server = |ago| ServerView {
            observed_ms: NOW - ago,
            window: Some(ServerWindow {
                utilization: 0.35,
                resets_at_ms: None,
            }),
            ..ServerView::default()
        };
        s.server = Some(server(0));
        assert!((p.pools(&s)[0].spent_usd - 3.5).abs() < 1e-9);
        // Its event five minutes old: the server holds what the step spent in its first half,
        // and the pool adds the rest (1.5 × (1 − ½²), the rate taken as rising); the step
        // still claims only what it has not spent, 1.5: a $3.50 step fits (4.625 + 1.5 + 3.5 ≤
        // 10), a $4 one does not.
        s.server = Some(server(5 * MINUTE_MS));
        let pool = &p.pools(&s)[0];
        assert!((pool.spent_usd - (3.5 + 1.125)).abs() < 1e-9, "{pool:?}");
        assert!((p.need(&s, Reserve::fixed(5.0)) - 6.5).abs() < 1e-9);
        assert_eq!(
            p.decide_for(&s, StepKind::Executor, Reserve::fixed(3.5)),
            Decision::Start { estimate_usd: 3.5 }
        );
        assert!(matches!(
            p.decide_for(&s, StepKind::Executor, Reserve::fixed(4.0)),
            Decision::Wait { .. }
        ));
    }

    #[test]
    fn spending_that_leaves_while_a_step_runs_makes_room_for_it() {
        let p = Policy::new(cfg());
        // Three executors of $5 over 20 minutes: a rate of $0.25 a minute.
        let mut runs: Vec<Run> = (0..3)
            .map(|i| {
                let mut r = done(5.0, 2 * HOUR_MS + i * MINUTE_MS);
                r.started_ms = r.finished_ms - 20 * MINUTE_MS;
                r
            })
            .collect();
        // $8 of a one-minute planner that ended 55 minutes ago: it leaves the hour's window in
        // 5, all at once (a run is cut into pieces only when it is long against the window).
        let mut planner = run(StepKind::Planner, "p", 8.0, 55 * MINUTE_MS, Outcome::Done);
        planner.started_ms = planner.finished_ms - MINUTE_MS;
        runs.push(planner);
        let s = snap(runs);
        let c = p.reserve_for(&s.runs, StepKind::Executor, "p", None);
        assert_eq!(c.estimate_usd, 5.0);
        assert!((c.rate_usd_min - 0.25).abs() < 1e-9, "{c:?}");
        // All at once it is 8 + 5 > 10; at its rate it has spent $1.25 when the $8 leaves.
        let pool = &p.pools(&s)[0];
        assert!((p.peak(pool, &s, c) - 9.25).abs() < 1e-9);
        assert_eq!(
            p.decide_for(&s, StepKind::Executor, c),
            Decision::Start { estimate_usd: 5.0 }
        );
        // Twice as fast, it would reach 10.5 first: it waits.
        let fast = Reserve {
            rate_usd_min: 0.5,
            ..c
        };
        assert!((p.peak(pool, &s, fast) - 10.5).abs() < 1e-9);
        assert!(matches!(
            p.decide_for(&s, StepKind::Executor, fast),
            Decision::Wait { .. }
        ));
        // A rate nobody knows counts in full at once; so does a rate of zero (runs that cost
        // nothing), which would otherwise hide the claim.
        assert!((p.peak(pool, &s, Reserve::fixed(5.0)) - 13.0).abs() < 1e-9);
        let still = Reserve {
            rate_usd_min: 0.0,
            ..c
        };
        assert!((p.peak(pool, &s, still) - 13.0).abs() < 1e-9);
        let mut free: Vec<Run> = (0..3)
            .map(|i| {
                let mut r = run(StepKind::Fixer, "p", 0.0, HOUR_MS + i, Outcome::Done);
                r.started_ms = r.finished_ms - 20 * MINUTE_MS;
                r
            })
            .collect();
        free.push(run(StepKind::Fixer, "p", 1.0, HOUR_MS, Outcome::Miss));
        assert!(
            p.rate(&p.history(&free, StepKind::Fixer, None))
                .is_infinite()
        );
    }
}
