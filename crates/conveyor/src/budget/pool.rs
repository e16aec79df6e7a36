//! The pools a step must fit in — the rolling window, the weekly cap, the monthly credit — as
//! they stand at a snapshot's time: what was spent in each (or the server's word for it), and
//! when that spending leaves.

use chrono::{Datelike, TimeZone, Utc};
use conveyor_api::PoolKind;

use super::policy::{EPS, Policy, ServerWindow, Snapshot, WEEK_MS};

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
        let from = fresh.map_or(now - span, |(at, _)| at);
        let mut leaves: Vec<(i64, f64)> = snap
            .runs
            .iter()
            .filter(|r| r.finished_ms > from && r.finished_ms > now - span && r.finished_ms <= now)
            .map(|r| (r.finished_ms + span, r.cost_usd))
            .collect();
        // What the running steps have spent so far is in the pool by our count; the server's
        // utilisation has it already.
        if fresh.is_none() && snap.live_usd() > 0.0 {
            leaves.push((now + span, snap.live_usd()));
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
