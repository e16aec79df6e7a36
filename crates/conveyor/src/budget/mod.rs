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

use conveyor_api::StepKind;
use sqlx::SqlitePool;

pub use estimate::{Estimate, quantile};
pub use policy::{
    Decision, Outcome, Policy, Pool, Reserve, Run, ServerView, ServerWindow, Snapshot,
};
pub use report::render;

use crate::Result;
use crate::config::BudgetConfig;

/// Runs kept for history beyond the pools' spans (every kind's last `history_runs` is well
/// inside this).
const HISTORY_ROWS: i64 = 5000;

/// The daemon's budget: the policy plus its loader.
#[derive(Debug, Clone)]
pub struct Budget {
    pub policy: Policy,
}

/// kind, project, step, cost, finished_at, outcome.
type RunRow = (String, String, String, f64, i64, String);

impl Budget {
    pub fn new(cfg: BudgetConfig) -> Budget {
        Budget {
            policy: Policy::new(cfg),
        }
    }

    /// Everything the policy looks at, as the database has it at `now_ms`. `admitted`: the
    /// estimates of lines let through whose run may not be recorded yet (by line id); they
    /// replace those lines' running runs, if any.
    ///
    /// # Errors
    /// Database errors.
    pub async fn snapshot(
        &self,
        pool: &SqlitePool,
        now_ms: i64,
        admitted: &HashMap<String, f64>,
    ) -> Result<Snapshot> {
        // The longest pool: the monthly credit (at most 31 days) or the week.
        let since = now_ms - 32 * policy::DAY_MS;
        let rows: Vec<RunRow> = sqlx::query_as(
            "SELECT r.kind, l.project_id, r.step_id, r.cost_usd, r.finished_at, r.outcome
             FROM runs r JOIN lines l ON l.id = r.line_id
             WHERE r.finished_at IS NOT NULL AND r.outcome != 'running'
               AND (r.finished_at >= ?1 OR r.id > (SELECT COALESCE(MAX(id), 0) FROM runs) - ?2)
             ORDER BY r.finished_at, r.id",
        )
        .bind(since)
        .bind(HISTORY_ROWS)
        .fetch_all(pool)
        .await?;
        let runs: Vec<Run> = rows
            .into_iter()
            .filter_map(|(kind, project, step_id, cost, at, outcome)| {
                Some(Run {
                    kind: StepKind::parse(&kind)?,
                    project,
                    step_id,
                    cost_usd: cost,
                    finished_ms: at,
                    outcome: Outcome::of(&outcome),
                })
            })
            .collect();
        let recorded: Vec<(String, f64, String, String)> = sqlx::query_as(
            "SELECT r.line_id, r.estimate_usd, r.kind, l.project_id
             FROM runs r JOIN lines l ON l.id = r.line_id WHERE r.outcome = 'running'",
        )
        .fetch_all(pool)
        .await?;
        let mut running: Vec<Reserve> = recorded
            .into_iter()
            .filter(|(line, ..)| !admitted.contains_key(line))
            .map(|(_, e, kind, project)| match StepKind::parse(&kind) {
                Some(kind) => self.policy.reserve(&runs, kind, &project, e, 0.0),
                None => Reserve::fixed(e),
            })
            .collect();
        // Admitted lines whose run is not recorded yet: by their estimate alone.
        running.extend(admitted.values().map(|e| Reserve::fixed(*e)));
        let server = last_server_view(pool).await?;
        let park: Option<String> =
            sqlx::query_scalar("SELECT value FROM account WHERE key = 'park_until'")
                .fetch_optional(pool)
                .await?;
        Ok(Snapshot {
            now_ms,
            runs,
            running,
            server,
            park_until: park.and_then(|v| v.parse().ok()),
        })
    }
}

/// observed_at, status, resets_at (s), limit_type, utilization, raw.
type LimitRow = (
    i64,
    String,
    Option<i64>,
    Option<String>,
    Option<f64>,
    String,
);

/// The last `rate_limit_event`, with both windows' utilisation read from its raw JSON.
async fn last_server_view(pool: &SqlitePool) -> Result<Option<ServerView>> {
    let row: Option<LimitRow> = sqlx::query_as(
        "SELECT observed_at, status, resets_at, limit_type, utilization, raw
         FROM rate_limits ORDER BY id DESC LIMIT 1",
    )
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|(at, status, resets, limit_type, util, raw)| {
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
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Store, testing};

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
        let step = store.add_step(&line, kind, "s", "t", &[]).await.unwrap();
        let run = testing::run(store, &step.id, &line).await;
        sqlx::query("UPDATE runs SET kind = ?, outcome = ?, cost_usd = ?, finished_at = ?, estimate_usd = 2.0 WHERE id = ?")
            .bind(kind.as_str())
            .bind(outcome)
            .bind(cost)
            .bind(at)
            .bind(run)
            .execute(&store.pool)
            .await
            .unwrap();
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
        let step = store
            .add_step(&line, StepKind::Fixer, "s", "t", &[])
            .await
            .unwrap();
        let r = testing::run(&store, &step.id, &line).await;
        sqlx::query("UPDATE runs SET estimate_usd = 1.25 WHERE id = ?")
            .bind(r)
            .execute(&store.pool)
            .await
            .unwrap();
        let raw = r#"{"type":"rate_limit_event","rate_limit_info":{"status":"allowed","resetsAt":1800003600,"rateLimitType":"five_hour","unifiedWindows":{"five_hour":{"utilization":0.31,"resetsAt":1800003600},"seven_day":{"utilization":0.12,"resetsAt":1800300000}}}}"#;
        sqlx::query(
            "INSERT INTO rate_limits (run_id, observed_at, status, resets_at, limit_type, utilization, raw)
             VALUES (NULL, ?, 'allowed', 1800003600, 'five_hour', 0.31, ?)",
        )
        .bind(NOW - MIN)
        .bind(raw)
        .execute(&store.pool)
        .await
        .unwrap();
        store.set_account_park_until(NOW + 7 * MIN).await.unwrap();

        let b = Budget::new(BudgetConfig::default());
        let s = b.snapshot(&store.pool, NOW, &HashMap::new()).await.unwrap();
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
        let s = b.snapshot(&store.pool, NOW, &admitted).await.unwrap();
        let mut r: Vec<f64> = s.running.iter().map(|r| r.estimate_usd).collect();
        r.sort_by(f64::total_cmp);
        assert_eq!(r, [0.5, 2.0]);
    }
}
