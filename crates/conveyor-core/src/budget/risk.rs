//! Near the threshold, whether the steps in flight will overrun what is left is a chance, not a
//! yes or no; and a limit hit does not cost the step that overran alone: every running step is
//! cut, and what each has spent is thrown away (its worktree goes back to the checkpoint). The
//! claims rule (spent + running + estimate ≤ threshold, [`Policy::decide_for`]) keeps each
//! step at one quantile of its history, and a step whose claim fits can still be the one that,
//! beside a step deep in a heavy tail, makes the hit. This part weighs that chance.
//!
//! Just before each part of the pool's spending leaves it (on a block account, the block's
//! close), and once all of it has, the running steps have still to spend `S` and the candidate
//! `C`, each as its kind's runs say ([`Tail`]: a lognormal fitted to them, a running step's
//! given what it has spent) and at most at its rate by then; `R` is the room the pool has for
//! them. Starting the candidate raises the chance of a
//! hit from P(S > R) to P(S + C > R); a hit throws away what is in flight when it comes — the
//! running steps' spend so far and the whole room, which they will have filled. All of it: a
//! step resumed after a limit's reset keeps none of its cut spend, measured with the real CLI
//! (the resume writes the whole session to a cold cache again; `docs/benchmarks/budget.md`, "A
//! cut step: what is really lost, measured"). Waiting costs the work the candidate would have done
//! in that room without a hit, E[C; S + C ≤ R]: the room is this block's, and another step may
//! fill it or none may. The candidate waits when the first outweighs the second.
//!
//! Why this and not a lower quantile, a larger margin or a bound on P(C > room) alone: those
//! tried on the simulator's nights either let the same two heavy steps share a block or kept a
//! step beside any long one waiting all night (`docs/benchmarks/budget.md`, "Tail-aware
//! admission"); the loss of a hit grows with what is in flight, and the cost of waiting is not
//! zero, so both sides have to be weighed.

use super::policy::Policy;
use super::pool::Pool;
use super::snapshot::{Reserve, Snapshot, Tail};
use super::time::MINUTE_MS;

/// At most this many moments a pool's risk is looked at (before its spending leaves).
const CHECKS: usize = 8;
/// Bins the room is cut into when the steps' costs are added up.
const BINS: usize = 64;

/// Why a step that fits by its claim should still wait.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Risk {
    /// P(S > R): a hit without the candidate.
    pub without: f64,
    /// P(S + C > R): with it.
    pub with: f64,
    /// What a hit would throw away.
    pub loss_usd: f64,
    /// What the candidate would do in the room without a hit.
    pub gain_usd: f64,
}

impl Risk {
    /// The expected work thrown away by starting, against what waiting forgoes.
    pub fn outweighs(&self) -> bool {
        self.net() > 0.0
    }

    /// The expected work a start throws away less what it does.
    fn net(&self) -> f64 {
        (self.with - self.without) * self.loss_usd - self.gain_usd
    }
}

impl Policy {
    /// The chance that `cand`, started now beside the running steps, makes `pool` overrun, and
    /// what that would cost against what waiting would ([`Risk`]).
    pub fn risk(&self, pool: &Pool, snap: &Snapshot, cand: Reserve) -> Risk {
        // Just before each part of the spending leaves the pool (a block's close: all of it),
        // and once all of it has: the risk is that of the moment that weighs most.
        let mut at = Vec::with_capacity(CHECKS + 1);
        let mut held = pool.spent_usd;
        let every = pool.leaves.len().div_ceil(CHECKS).max(1);
        for (i, (t, usd)) in pool.leaves.iter().enumerate() {
            if *t > snap.now_ms && i % every == 0 {
                #[allow(clippy::cast_precision_loss)]
                at.push(((t - snap.now_ms) as f64 / MINUTE_MS as f64, held));
            }
            held -= usd;
        }
        at.push((f64::INFINITY, held.max(0.0)));
        let live: f64 = snap.counted_spending().map(|r| r.live_usd).sum();
        at.into_iter()
            .map(|(minutes, held)| {
                self.risk_by(snap, cand, pool.threshold_usd - held, minutes, live)
            })
            // The moment that argues most for waiting (the first of equals: the least room).
            .reduce(|a, b| if b.net() > a.net() { b } else { a })
            .expect("at least the last check")
    }

    /// [`Policy::risk`] of the spending by `minutes` from now, in a `room`.
    fn risk_by(&self, snap: &Snapshot, cand: Reserve, room: f64, minutes: f64, live: f64) -> Risk {
        let in_pool = snap.live;
        let loss_usd = live + room.max(0.0);
        if room <= 0.0 {
            return Risk {
                without: 1.0,
                with: 1.0,
                loss_usd,
                gain_usd: 0.0,
            };
        }
        #[allow(clippy::cast_precision_loss)]
        let width = room / BINS as f64;
        // The running steps' spend by then, added up over bins of the room; the last bin
        // holds everything past it.
        let mut sum = vec![0.0; BINS + 2];
        sum[0] = 1.0;
        for r in &snap.running {
            sum = add(&sum, &points(r, minutes, in_pool), width);
        }
        let over = |d: &[f64]| d[BINS + 1];
        let without = over(&sum);
        let cand_points = points(&cand, minutes, in_pool);
        let with = over(&add(&sum, &cand_points, width));
        // E[C; S + C ≤ R]: each of the candidate's points, as likely as the running steps
        // leave room for it.
        let gain_usd = cand_points
            .iter()
            .map(|(c, share)| {
                #[allow(clippy::cast_precision_loss)]
                let fits = sum
                    .iter()
                    .enumerate()
                    .take(BINS + 1)
                    .filter(|(i, _)| (*i as f64) * width + c <= room + 1e-9)
                    .map(|(_, p)| p)
                    .sum::<f64>();
                share * c * fits
            })
            .sum();
        Risk {
            without,
            with,
            loss_usd,
            gain_usd,
        }
    }
}

/// A step's spend from now to `minutes` from now, as points with their chances: its tail's,
/// less what it has spent (when the pool holds that), at most its rate allows; without a
/// tail, its claim's rest, for certain.
fn points(r: &Reserve, minutes: f64, in_pool: bool) -> Vec<(f64, f64)> {
    let Some(tail) = r.tail else {
        return vec![(r.by(minutes, in_pool), 1.0)];
    };
    let spent = if in_pool { r.live_usd } else { 0.0 };
    tail.0
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let rest = (c - spent).max(0.0);
            let by = if r.rate_known() {
                rest.min(r.rate_usd_min * minutes)
            } else {
                rest
            };
            (by, Tail::weight(i))
        })
        .collect()
}

/// The distribution `d` (over bins of `width`, the last one everything past the room) with a
/// step of `points` added.
fn add(d: &[f64], points: &[(f64, f64)], width: f64) -> Vec<f64> {
    let last = d.len() - 1;
    let mut out = vec![0.0; d.len()];
    for (i, p) in d.iter().enumerate() {
        if *p == 0.0 {
            continue;
        }
        for (c, share) in points {
            // To the nearest bin: no bias either way on a sum of several.
            let j = if i == last {
                last
            } else {
                (i + (c / width).round().min(last as f64) as usize).min(last)
            };
            out[j] += p * share;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::policy::tests::{NOW, cfg, done, snap, wait};
    use super::super::{
        BudgetConfig, Decision, MINUTE_MS, ServerView, ServerWindow, TAIL_EDGES, TAIL_POINTS,
    };
    use super::*;
    use conveyor_api::StepKind;

    /// A tail that costs `low` below the `split` probability and `high` above it.
    fn two_costs(low: f64, split: f64, high: f64) -> Tail {
        let mut t = [low; TAIL_POINTS];
        for (i, p) in t.iter_mut().enumerate() {
            if TAIL_EDGES[i] >= split - 1e-12 {
                *p = high;
            }
        }
        Tail(t)
    }

    /// $2 spent in the tests' hour-long $10 window; one step running that has spent $3 and is
    /// claimed at $4, whose kind's runs that spent as much cost `running`; the candidate is
    /// claimed at $2 and costs $1.50, or $6 one time in ten. The claims fit: 2 + 3 + 1 + 2 ≤ 10.
    fn night(running: Tail) -> (Snapshot, Reserve) {
        let mut s = snap(vec![done(2.0, 10 * MINUTE_MS)]);
        s.live = true;
        s.running = vec![Reserve {
            live_usd: 3.0,
            started_ms: Some(NOW - 20 * MINUTE_MS),
            tail: Some(running),
            ..Reserve::fixed(4.0)
        }];
        let cand = Reserve {
            tail: Some(two_costs(1.5, 0.9, 6.0)),
            ..Reserve::fixed(2.0)
        };
        (s, cand)
    }

    #[test]
    fn a_step_that_fits_by_its_claim_waits_beside_one_likely_to_outgrow_its_own() {
        let p = Policy::new(cfg());
        // The running step costs $8 in all four times in ten: $5 more in a room of $5.
        let (s, cand) = night(two_costs(3.5, 0.6, 8.0));
        let pool = &p.pools(&s)[0];
        assert!(
            p.peak(pool, &s, cand) <= pool.threshold_usd,
            "the claims fit"
        );
        let risk = p.risk(pool, &s, cand);
        // Alone it fills the room exactly; with the candidate: 0.4 × 0.9 + 0.6 × 0.1 + 0.04.
        assert!(risk.without.abs() < 1e-9, "{risk:?}");
        assert!((risk.with - 0.46).abs() < 1e-9, "{risk:?}");
        // A hit throws away both steps' spend: the $3 so far and at least the $5 room (more
        // once the window's older spending has left); the candidate would do $1.50 without
        // one, 0.6 × 0.9 of the time.
        assert!(risk.loss_usd >= 8.0 - 1e-9, "{risk:?}");
        assert!((risk.gain_usd - 1.5 * 0.6 * 0.9).abs() < 1e-9);
        assert!(risk.outweighs());
        let (until, reason) = wait(&p.decide_for(&s, StepKind::Executor, cand));
        assert_eq!(until, NOW + 5 * MINUTE_MS);
        assert!(reason.contains("from 0% to 46%"), "{reason}");
        // The claims rule alone lets it through.
        let claims_only = Policy::new(BudgetConfig {
            weigh_tail: false,
            ..cfg()
        });
        assert_eq!(
            claims_only.decide_for(&s, StepKind::Executor, cand),
            Decision::Start { estimate_usd: 2.0 }
        );
    }

    #[test]
    fn beside_a_step_that_will_end_within_its_claim_the_same_step_starts() {
        let p = Policy::new(cfg());
        let (s, cand) = night(two_costs(3.5, 1.0, 3.5));
        let risk = p.risk(&p.pools(&s)[0], &s, cand);
        // Only the candidate's own $6 can overrun: 10% of the time, for $8, against $1.35.
        assert!((risk.with - 0.1).abs() < 1e-9, "{risk:?}");
        assert!(!risk.outweighs());
        assert_eq!(
            p.decide_for(&s, StepKind::Executor, cand),
            Decision::Start { estimate_usd: 2.0 }
        );
    }

    #[test]
    fn a_block_about_to_close_leaves_no_time_to_overrun_it() {
        let p = Policy::new(cfg());
        let (mut s, mut cand) = night(two_costs(3.5, 0.6, 8.0));
        // A block account: the server holds the window's $5 until it closes in ten minutes,
        // and both steps spend at most $0.10 a minute; the running one started before the
        // server's word, which holds what it spent.
        s.runs.clear();
        s.server = Some(ServerView {
            observed_ms: NOW,
            window: Some(ServerWindow {
                utilization: 0.5,
                resets_at_ms: Some(NOW + 10 * MINUTE_MS),
            }),
            ..ServerView::default()
        });
        s.running[0].rate_usd_min = 0.1;
        cand.rate_usd_min = 0.1;
        // By the close they can spend $2 of the $5 left: no hit then. After it the whole $10
        // is theirs, and the step's $5 more with the candidate's $6 overrun it one time in
        // twenty-five: less than the candidate does. The close weighs most, and says start.
        let risk = p.risk(&p.pools(&s)[0], &s, cand);
        assert!(risk.with.abs() < 1e-9, "{risk:?}");
        assert!((risk.loss_usd - 8.0).abs() < 1e-9, "{risk:?}");
        assert!(!risk.outweighs(), "{risk:?}");
        assert!(matches!(
            p.decide_for(&s, StepKind::Executor, cand),
            Decision::Start { .. }
        ));
    }

    #[test]
    fn a_fitted_tail_reaches_past_the_largest_run_and_a_running_step_is_cut_below_its_spend() {
        let runs = [0.5, 0.8, 1.0, 1.2, 1.5, 2.0, 3.0];
        let t = Tail::of(&runs, 3, 1.0, 0.0).expect("enough runs");
        assert!(t.0.windows(2).all(|w| w[0] <= w[1]));
        // The top point stands for the most expensive 0.1%: past every run seen.
        assert!(t.0[TAIL_POINTS - 1] > 3.0, "{t:?}");
        let w: f64 = (0..TAIL_POINTS).map(Tail::weight).sum();
        assert!((w - 1.0).abs() < 1e-12);
        // A step that has spent $2.50 costs at least that, and more than a fresh one.
        let given = Tail::of(&runs, 3, 1.0, 2.5).expect("enough runs");
        assert!(given.0[0] >= 2.5);
        assert!(given.0.iter().zip(t.0).all(|(g, f)| *g >= f));
        // Misses raise it as they raise the estimate; too few runs say nothing.
        let raised = Tail::of(&runs, 3, 1.5, 0.0).expect("enough runs");
        assert!((raised.0[5] - 1.5 * t.0[5]).abs() < 1e-9);
        assert_eq!(Tail::of(&runs[..2], 3, 1.0, 0.0), None);
    }
}
