//! The pools a step must fit in — the rolling window, the weekly cap, the monthly credit — as
//! they stand at a snapshot's time: what was spent in each (or the server's word for it), and
//! when that spending leaves.

use conveyor_api::PoolKind;

use super::policy::Policy;
use super::snapshot::{EPS, ServerWindow, Snapshot};
use super::time::{WEEK_MS, month_bounds};

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

    pub(super) fn name(&self) -> &'static str {
        match self.kind {
            PoolKind::Window => "the window",
            PoolKind::Weekly => "the week",
            PoolKind::Monthly => "the month",
        }
    }
}

impl Policy {
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
                self.window_threshold(snap.window_calibration.as_ref()),
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
                .fold(0.0, |a, r| a + r.cost_usd)
                + snap.live_usd();
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
        // Within the span: a fresh report is never older than it.
        let from = fresh.map_or(now - span, |(at, _)| at);
        let mut leaves: Vec<(i64, f64)> = Vec::new();
        for r in &snap.runs {
            if r.finished_ms > from && r.finished_ms <= now {
                spread(
                    r.started_ms,
                    r.finished_ms,
                    r.cost_usd,
                    from,
                    span,
                    &mut leaves,
                );
            }
        }
        // What the running steps have spent so far, spent since each started (or now, when
        // that is not known); the server's utilisation holds what they spent before its event.
        for r in snap.counted_spending() {
            let start = r.started_ms.map_or(now, |s| s.min(now));
            spread(start, now, r.live_usd, from, span, &mut leaves);
        }
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
}

/// Pieces a run's spending is cut into as it leaves a rolling pool (at most).
const PIECES: i64 = 8;
/// A piece is at least 1/`PIECE_OF_SPAN` of the pool's span: a shorter run leaves at once.
const PIECE_OF_SPAN: i64 = 20;

/// A run's spending as it leaves a rolling pool of `span`: the run spent `usd` over
/// `[start, end]`, and each part leaves `span` after it was spent. The parts spent at or before
/// `from` are out of the count (they left, or the server's figure holds them).
///
/// When within its run each dollar was spent is not kept, so it is assumed: a session's calls
/// grow dearer as its context grows (each re-reads the whole conversation), so its rate rises
/// through the run. The share spent by a fraction `f` of the run is taken as `f²` (a rate rising
/// from zero), which no rate rising from above zero spends later than, so the spending is
/// assumed to leave no earlier than it does. Each piece leaves at its end.
fn spread(start: i64, end: i64, usd: f64, from: i64, span: i64, out: &mut Vec<(i64, f64)>) {
    let dur = end - start;
    if dur <= 0 {
        out.push((end + span, usd));
        return;
    }
    let n = ((dur * PIECE_OF_SPAN + span - 1) / span).clamp(1, PIECES);
    #[allow(clippy::cast_precision_loss)]
    let share = |t: i64| {
        let f = (t - start) as f64 / dur as f64;
        f.clamp(0.0, 1.0).powi(2)
    };
    for i in 0..n {
        let a = start + dur * i / n;
        let b = start + dur * (i + 1) / n;
        if b <= from {
            continue;
        }
        let part = usd * (share(b) - share(a.max(from)));
        if part > 0.0 {
            out.push((b + span, part));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Reserve;
    use super::super::policy::tests::{NOW, cfg, done, snap, wait};
    use super::super::{Decision, HOUR_MS as HOUR, MINUTE_MS, ServerView, ServerWindow};
    use super::*;
    use conveyor_api::StepKind;

    /// $8 spent evenly over the hour from 80 to 20 minutes ago, in the tests' hour-long window
    /// with its $10 threshold.
    fn long_run() -> Vec<super::super::Run> {
        let mut r = done(8.0, 20 * MINUTE_MS);
        r.started_ms = NOW - 80 * MINUTE_MS;
        vec![r]
    }

    #[test]
    fn a_long_run_leaves_the_window_as_it_was_spent_never_earlier() {
        let p = Policy::new(cfg());
        let s = snap(long_run());
        let pool = &p.pools(&s)[0];
        // The third of the run before the window began is out: 8 × (1 − (1/3)²) is left.
        assert!(
            (pool.spent_usd - 8.0 * (1.0 - 1.0 / 9.0)).abs() < 1e-9,
            "{pool:?}"
        );
        // Piece by piece, the first 2.5 minutes from now, the last when the run's end ages out
        // in 40, each larger than the one before (the rate rising through the run).
        let (first, last) = (pool.leaves[0], pool.leaves[pool.leaves.len() - 1]);
        assert_eq!(first.0, NOW + 5 * MINUTE_MS / 2);
        assert_eq!(last.0, NOW + 40 * MINUTE_MS);
        assert!(
            pool.leaves
                .windows(2)
                .all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1)
        );
        // Never earlier than it was spent: once each piece has left, what the pool still holds
        // is at least what the real window holds of an even spend then.
        let mut held = pool.spent_usd;
        for (t, usd) in &pool.leaves {
            held -= usd;
            #[allow(clippy::cast_precision_loss)]
            let even_left = 8.0 * ((NOW - 20 * MINUTE_MS) - (t - HOUR)) as f64 / HOUR as f64;
            assert!(
                held + 1e-9 >= even_left.clamp(0.0, 8.0),
                "{t}: {held} < {even_left}"
            );
        }
        assert!(held.abs() < 1e-9);
        // Counted whole until its end aged out, a $3 step would wait 40 minutes; now it starts
        // when the first piece leaves.
        let (until, _) = wait(&p.decide_for(&s, StepKind::Executor, Reserve::fixed(3.0)));
        assert_eq!(until, NOW + 5 * MINUTE_MS / 2);
        assert_eq!(
            p.decide_for(&s, StepKind::Executor, Reserve::fixed(2.5)),
            Decision::Start { estimate_usd: 2.5 }
        );
    }

    #[test]
    fn a_running_steps_spend_so_far_leaves_from_its_start() {
        let p = Policy::new(cfg());
        let running = |started_ms| Reserve {
            live_usd: 6.0,
            started_ms,
            ..Reserve::fixed(9.0)
        };
        // Started 90 minutes ago: what it spent in its first half hour has left the window.
        let mut s = snap(vec![]);
        s.live = true;
        s.running = vec![running(Some(NOW - 90 * MINUTE_MS))];
        let pool = &p.pools(&s)[0];
        assert!((pool.spent_usd - 6.0 * (1.0 - 1.0 / 9.0)).abs() < 1e-9);
        assert!(pool.leaves[0].0 < NOW + HOUR);
        // When it started is not known: all of it counts as spent now.
        s.running = vec![running(None)];
        assert_eq!(p.pools(&s)[0].leaves, [(NOW + HOUR, 6.0)]);
        // A snapshot that does not say the spend is known counts none of it: the step's
        // claim then counts whole, and the spend would count twice.
        s.live = false;
        assert_eq!(p.pools(&s)[0].spent_usd, 0.0);
    }

    #[test]
    fn a_run_the_servers_figure_saw_half_of_counts_for_the_rest() {
        let p = Policy::new(cfg());
        // Ten minutes long, ended now; the server reported 30% five minutes ago.
        let mut s = snap(vec![done(4.0, 0)]);
        s.server = Some(ServerView {
            observed_ms: NOW - 5 * MINUTE_MS,
            window: Some(ServerWindow {
                utilization: 0.3,
                resets_at_ms: None,
            }),
            ..ServerView::default()
        });
        // $3 by the server, and of the run what it spent after the report: 4 × (1 − ½²).
        let pool = &p.pools(&s)[0];
        assert!((pool.spent_usd - 6.0).abs() < 1e-9, "{pool:?}");
    }
}
