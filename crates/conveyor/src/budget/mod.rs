//! The budget: the single place where the daemon asks "may this step start now?".
//!
//! The policy itself is [`policy`], pure (history, pools and the clock passed in) so the night
//! simulator runs it with a virtual clock; this module only loads its figures from SQLite:
//! the finished runs (spending and history), the estimates of the running steps, the server's
//! last `rate_limit_event` and the account's park.

mod estimate;
pub mod policy;
mod pool;
mod report;

use std::collections::HashMap;

pub use estimate::{Estimate, quantile};
pub use policy::{
    Decision, Outcome, Policy, Pool, Reserve, Run, ServerView, ServerWindow, Snapshot,
};
pub use report::render;

use crate::Result;
use crate::config::BudgetConfig;
use crate::store::{self, Store};

/// Runs kept for history beyond the pools' spans (every kind's last `history_runs` is well
/// inside this).
const HISTORY_ROWS: i64 = 5000;

/// The daemon's budget: the policy plus its loader.
#[derive(Debug, Clone)]
pub struct Budget {
    pub policy: Policy,
}

impl Budget {
    pub fn new(cfg: BudgetConfig) -> Budget {
        Budget {
            policy: Policy::new(cfg),
        }
    }

    /// The rolling window's threshold, when the window pool is on.
    pub fn window_threshold(&self) -> Option<f64> {
        (self.policy.cfg.window_secs > 0).then_some(self.policy.cfg.threshold_usd)
    }

    /// Everything the policy looks at, as the database has it at `now_ms`. `admitted`: the
    /// estimates of lines let through whose run may not be recorded yet (by line id); they
    /// replace those lines' running runs, if any.
    ///
    /// # Errors
    /// Database errors.
    pub async fn snapshot(
        &self,
        db: &Store,
        now_ms: i64,
        admitted: &HashMap<String, f64>,
    ) -> Result<Snapshot> {
        // The longest pool: the monthly credit (at most 31 days) or the week.
        let since = now_ms - 32 * policy::DAY_MS;
        let runs: Vec<Run> = store::runs::history(&mut *db.conn().await?, since, HISTORY_ROWS)
            .await?
            .into_iter()
            .map(|r| Run {
                kind: r.kind,
                project: r.project_id,
                step_id: r.step_id,
                cost_usd: r.cost_usd,
                finished_ms: r.finished_ms,
                outcome: Outcome::of(r.outcome.as_str()),
            })
            .collect();
        let mut running: Vec<Reserve> = store::runs::claims(&mut *db.conn().await?)
            .await?
            .into_iter()
            .filter(|c| !admitted.contains_key(&c.line_id))
            .map(|c| {
                self.policy
                    .reserve(&runs, c.kind, &c.project_id, c.estimate_usd, 0.0)
            })
            .collect();
        // Admitted lines whose run is not recorded yet: by their estimate alone.
        running.extend(admitted.values().map(|e| Reserve::fixed(*e)));
        let server = store::rate_limits::last(&mut *db.conn().await?)
            .await?
            .map(server_view);
        Ok(Snapshot {
            now_ms,
            runs,
            running,
            server,
            park_until: store::account::park_until(&mut *db.conn().await?).await?,
        })
    }
}

/// The server's view from its last `rate_limit_event`, with both windows' utilisation read
/// from the raw JSON.
fn server_view(row: store::rate_limits::RateLimitRow) -> ServerView {
    let store::rate_limits::RateLimitRow {
        observed_at: at,
        status,
        resets_at: resets,
        limit_type,
        utilization: util,
        raw,
    } = row;
    let v: serde_json::Value = serde_json::from_str(&raw).unwrap_or_default();
    let info = v.get("rate_limit_info").unwrap_or(&v);
    let windows = info.get("unifiedWindows");
    let window = |key: &str| -> Option<ServerWindow> {
        let from_raw = windows.and_then(|w| w.get(key)).and_then(|w| {
            Some(ServerWindow {
                utilization: w.get("utilization")?.as_f64()?,
                resets_at_ms: w
                    .get("resetsAt")
                    .and_then(serde_json::Value::as_i64)
                    .map(|s| s * 1000),
            })
        });
        from_raw.or_else(|| {
            (limit_type.as_deref() == Some(key))
                .then_some(())
                .and(util)
                .map(|u| ServerWindow {
                    utilization: u,
                    resets_at_ms: resets.map(|s| s * 1000),
                })
        })
    };
    ServerView {
        observed_ms: at,
        rejected: status == "rejected",
        resets_at_ms: resets.map(|s| s * 1000),
        window: window("five_hour"),
        weekly: window("seven_day"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing;
    use conveyor_api::StepKind;

    const MIN: i64 = 60_000;
    const NOW: i64 = 1_800_000_000_000;

    /// A run of `kind` in project `p` that ended at `at` having cost `cost`; its step's id.
    async fn run(
        store: &Store,
        p: &str,
        kind: StepKind,
        cost: f64,
        at: i64,
        outcome: &str,
    ) -> String {
        let line = testing::line(store, p, &uuid::Uuid::new_v4().to_string(), 0, "running").await;
        let step = crate::store::testing::step(store, &line, kind).await;
        let run = testing::run(store, &step.id, &line).await;
        testing::end_run(store, run, kind.as_str(), outcome, cost, at).await;
        testing::exec(
            store,
            &format!("UPDATE runs SET estimate_usd = 2.0 WHERE id = {run}"),
        )
        .await;
        step.id
    }

    #[tokio::test]
    async fn the_snapshot_carries_spending_history_running_server_and_park() {
        let (_d, store) = testing::store().await;
        run(&store, "p", StepKind::Executor, 3.0, NOW - 10 * MIN, "ok").await;
        let missed = run(
            &store,
            "q",
            StepKind::Planner,
            0.5,
            NOW - 5 * MIN,
            "usage_limit",
        )
        .await;
        // One still running, with its estimate.
        let line = testing::line(&store, "r", "busy", 0, "running").await;
        let step = crate::store::testing::step(&store, &line, StepKind::Fixer).await;
        let r = testing::run(&store, &step.id, &line).await;
        testing::exec(
            &store,
            &format!("UPDATE runs SET estimate_usd = 1.25 WHERE id = {r}"),
        )
        .await;
        let raw = r#"{"type":"rate_limit_event","rate_limit_info":{"status":"allowed","resetsAt":1800003600,"rateLimitType":"five_hour","unifiedWindows":{"five_hour":{"utilization":0.31,"resetsAt":1800003600},"seven_day":{"utilization":0.12,"resetsAt":1800300000}}}}"#;
        testing::exec(
            &store,
            &format!(
                "INSERT INTO rate_limits (run_id, observed_at, status, resets_at, limit_type, utilization, raw)
                 VALUES (NULL, {}, 'allowed', 1800003600, 'five_hour', 0.31, '{raw}')",
                NOW - MIN
            ),
        )
        .await;
        store::account::set_park_until(&mut store.conn().await.unwrap(), NOW + 7 * MIN)
            .await
            .unwrap();

        let b = Budget::new(BudgetConfig::default());
        let s = b.snapshot(&store, NOW, &HashMap::new()).await.unwrap();
        assert_eq!(s.runs.len(), 2);
        assert_eq!(s.runs[0].kind, StepKind::Executor);
        assert_eq!(s.runs[0].project, "p");
        assert_eq!(s.runs[1].outcome, Outcome::Miss);
        assert_eq!(s.runs[1].kind, StepKind::Planner);
        // The miss is the step's: its next attempt is estimated at least at what it spent.
        assert_eq!(s.runs[1].step_id, missed);
        let p = &b.policy;
        assert!((p.retry_floor(&s.runs, &missed) - 0.5 * (1.0 + p.cfg.margin)).abs() < 1e-9);
        // No fixer history: its typical cost is its estimate.
        assert_eq!(s.running, [Reserve::fixed(1.25)]);
        let v = s.server.unwrap();
        assert!(!v.rejected);
        assert_eq!(
            v.window,
            Some(ServerWindow {
                utilization: 0.31,
                resets_at_ms: Some(1_800_003_600_000)
            })
        );
        assert_eq!(v.weekly.unwrap().utilization, 0.12);
        assert_eq!(s.park_until, Some(NOW + 7 * MIN));
        // A line admitted but not yet recorded counts with its admitted estimate; an admitted
        // line's recorded run is not counted twice.
        let admitted = HashMap::from([(line.clone(), 2.0), ("new".to_string(), 0.5)]);
        let s = b.snapshot(&store, NOW, &admitted).await.unwrap();
        let mut r: Vec<f64> = s.running.iter().map(|r| r.estimate_usd).collect();
        r.sort_by(f64::total_cmp);
        assert_eq!(r, [0.5, 2.0]);
    }
}
