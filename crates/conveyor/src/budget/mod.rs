//! The budget: the single place where the daemon asks "may this step start now?".
//!
//! The rule itself is `conveyor_core::budget`, pure (history, pools and the clock passed in) so
//! the night simulator runs it with a virtual clock; this module only loads its figures from SQLite:
//! the finished runs (spending and history), the estimates of the running steps, the server's
//! last `rate_limit_event` and the account's park.

mod live;
mod report;

use std::collections::HashMap;
use std::sync::Arc;

use conveyor_api::{Calibration, PoolKind, RunningStep};

pub use conveyor_core::budget::{
    Admitted, Class, Decision, Estimate, History, Outcome, Policy, Pool, Reserve, Run,
    SIZE_MIN_SAMPLES, ServerView, ServerWindow, Snapshot, calibration, quantile,
};
use conveyor_core::budget::{DAY_MS, HOUR_MS};
pub use live::{Live, Meter, Price, Prices, Tokens, meter_file};
pub use report::render;

use crate::config::BudgetConfig;
use crate::error::Result;
use crate::store::{self, Store};

/// Runs kept for history beyond the pools' spans (every kind's last `history_runs` is well
/// inside this).
const HISTORY_ROWS: i64 = 5000;

/// Observations of a pool's size older than this are not used (the plan may have changed).
const CALIBRATION_DAYS: i64 = 14;

/// The daemon's budget: the policy plus its loader, the running steps' live cost and the
/// prices it is counted in.
#[derive(Debug, Clone)]
pub struct Budget {
    pub policy: Policy,
    pub live: Arc<Live>,
    pub prices: Arc<Prices>,
}

impl Budget {
    pub fn new(cfg: BudgetConfig) -> Budget {
        Budget {
            prices: Arc::new(Prices::new(&cfg.prices)),
            policy: Policy::new(cfg),
            live: Arc::new(Live::default()),
        }
    }

    /// The rolling window's threshold, when the window pool is on (with `"auto"`, as the
    /// calibration has it now).
    ///
    /// # Errors
    /// Database errors.
    pub async fn window_threshold(&self, db: &Store, now_ms: i64) -> Result<Option<f64>> {
        if self.policy.cfg.window_secs == 0 {
            return Ok(None);
        }
        let c = self.calibration(db, PoolKind::Window, now_ms).await?;
        Ok(Some(self.policy.window_threshold(c.as_ref())))
    }

    /// What the recent observations say of `pool`'s size.
    ///
    /// # Errors
    /// Database errors.
    pub async fn calibration(
        &self,
        db: &Store,
        pool: PoolKind,
        now_ms: i64,
    ) -> Result<Option<Calibration>> {
        let sizes = store::calibration::sizes(
            &mut *db.conn().await?,
            pool,
            now_ms - CALIBRATION_DAYS * DAY_MS,
            i64::try_from(calibration::RECENT).unwrap_or(20),
        )
        .await?;
        Ok(calibration::propose(&sizes))
    }

    /// Records what a `rate_limit_event` says of the pools' size: for each window it gives a
    /// utilisation of (five hours: the rolling window; seven days: the weekly pool), our own
    /// spending in that window now — the runs that ended since it began (its reset less its
    /// span, or the span back from now) and the live cost of the running ones — over the
    /// utilisation.
    ///
    /// # Errors
    /// Database errors.
    pub async fn observe(
        &self,
        db: &Store,
        now_ms: i64,
        run_id: Option<i64>,
        windows: &[(PoolKind, ServerWindow)],
    ) -> Result<()> {
        // The live cost of the runs in progress only: an entry of a run whose cost is
        // recorded (or left by a run that ended in an error) is not spend to add again.
        let live = store::runs::claims(&mut *db.conn().await?)
            .await?
            .iter()
            .fold(0.0, |a, c| a + self.live.get(c.run_id));
        for (pool, w) in windows {
            let span = match pool {
                PoolKind::Window => 5 * HOUR_MS,
                PoolKind::Weekly => 7 * DAY_MS,
                PoolKind::Monthly => continue,
            };
            let start = w
                .resets_at_ms
                .filter(|r| *r > now_ms)
                .map_or(now_ms - span, |r| r - span);
            let spent = store::runs::spent_since(&mut *db.conn().await?, start).await? + live;
            let Some(size) = calibration::observe(spent, w.utilization) else {
                continue;
            };
            store::calibration::insert(
                &mut *db.conn().await?,
                store::calibration::Observation {
                    pool: *pool,
                    observed_at: now_ms,
                    run_id,
                    utilization: w.utilization,
                    spent_usd: spent,
                    size_usd: size,
                },
            )
            .await?;
        }
        Ok(())
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
        Ok(self.view(db, now_ms, admitted).await?.0)
    }

    /// [`Budget::snapshot`], and every step running now with its claim as the snapshot counts
    /// it (`GET /api/budget`), from the same read.
    ///
    /// # Errors
    /// Database errors.
    pub async fn view(
        &self,
        db: &Store,
        now_ms: i64,
        admitted: &HashMap<String, f64>,
    ) -> Result<(Snapshot, Vec<RunningStep>)> {
        // The longest pool: the monthly credit (at most 31 days) or the week.
        let since = now_ms - 32 * DAY_MS;
        let runs: Vec<Run> = store::runs::history(&mut *db.conn().await?, since, HISTORY_ROWS)
            .await?
            .into_iter()
            .map(|r| Run {
                kind: r.kind,
                project: r.project_id,
                step_id: r.step_id,
                size: r.size,
                cost_usd: r.cost_usd,
                started_ms: r.started_ms,
                finished_ms: r.finished_ms,
                outcome: Outcome::of(r.outcome.as_str()),
            })
            .collect();
        let mut running: Vec<Reserve> = Vec::new();
        let mut steps: Vec<RunningStep> = Vec::new();
        for c in store::runs::claims(&mut *db.conn().await?).await? {
            let live = self.live.get(c.run_id);
            let class = Class {
                kind: c.kind,
                size: c.size,
            };
            let r = Reserve {
                started_ms: Some(c.started_ms),
                ..self
                    .policy
                    .running(&runs, class, &c.project_id, c.estimate_usd, live)
            };
            // An admitted line's recorded run counts by its admitted estimate (below).
            if !admitted.contains_key(&c.line_id) {
                running.push(r);
            }
            steps.push(RunningStep {
                line_id: c.line_id,
                step_n: c.step_n,
                kind: c.kind,
                estimate_usd: c.estimate_usd,
                live_usd: live,
                claim_usd: r.estimate_usd,
            });
        }
        // Admitted lines whose run is not recorded yet: by their estimate alone.
        running.extend(admitted.values().map(|e| Reserve::fixed(*e)));
        let server = store::rate_limits::last(&mut *db.conn().await?)
            .await?
            .map(server_view);
        let window_calibration = self.calibration(db, PoolKind::Window, now_ms).await?;
        let snap = Snapshot {
            now_ms,
            runs,
            running,
            live: true,
            window_calibration,
            server,
            park_until: store::account::park_until(&mut *db.conn().await?).await?,
        };
        Ok((snap, steps))
    }
}

/// The windows a `rate_limit_event` (its raw JSON) gives a utilisation of: the five hours as
/// the rolling window's pool, the seven days as the weekly one.
pub fn server_windows(raw: &str) -> Vec<(PoolKind, ServerWindow)> {
    let v: serde_json::Value = serde_json::from_str(raw).unwrap_or_default();
    let info = v.get("rate_limit_info").unwrap_or(&v);
    let Some(windows) = info.get("unifiedWindows") else {
        return Vec::new();
    };
    [
        ("five_hour", PoolKind::Window),
        ("seven_day", PoolKind::Weekly),
    ]
    .into_iter()
    .filter_map(|(key, pool)| {
        let w = windows.get(key)?;
        Some((
            pool,
            ServerWindow {
                utilization: w.get("utilization")?.as_f64()?,
                resets_at_ms: w
                    .get("resetsAt")
                    .and_then(serde_json::Value::as_i64)
                    .map(|s| s * 1000),
            },
        ))
    })
    .collect()
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
    let windows = server_windows(&raw);
    let window = |pool: PoolKind, key: &str| -> Option<ServerWindow> {
        let from_raw = windows.iter().find(|(p, _)| *p == pool).map(|(_, w)| *w);
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
        window: window(PoolKind::Window, "five_hour"),
        weekly: window(PoolKind::Weekly, "seven_day"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing;
    use conveyor_api::{StepKind, StepSize};

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
            &format!(
                "UPDATE runs SET estimate_usd = 2.0, started_at = {} WHERE id = {run}",
                at - 10 * MIN
            ),
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
            &format!(
                "UPDATE runs SET estimate_usd = 1.25, started_at = {} WHERE id = {r}",
                NOW - 3 * MIN
            ),
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
        // The fixer is claimed at its recorded estimate, 1.25, at no known rate (no history).
        // With when it started: what it spends leaves the window from then.
        assert_eq!(
            s.running,
            [Reserve {
                started_ms: Some(NOW - 3 * MIN),
                ..Reserve::fixed(1.25)
            }]
        );
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

    /// The planner's sizes travel from the plan to the steps, from the steps to the runs the
    /// budget learns from, and to the claim of a running step: a small step running beside
    /// large ones is claimed as a small one.
    #[tokio::test]
    async fn the_plans_sizes_reach_the_history_and_the_running_claims() {
        let (_d, store) = testing::store().await;
        // Six large executors of the project, $8 each, sized by no plan.
        for i in 0..6 {
            run(
                &store,
                "p",
                StepKind::Executor,
                8.0,
                NOW - (60 - i) * MIN,
                "ok",
            )
            .await;
        }
        // A line planned into seven small steps; six of them ran at $1, the seventh runs now.
        let line = testing::line(&store, "p", "planned", 0, "running").await;
        let planner = crate::store::testing::step(&store, &line, StepKind::Planner).await;
        let planned = testing::run(&store, &planner.id, &line).await;
        let plan = crate::plan::parse(&format!(
            r#"{{"steps":[{}]}}"#,
            [r#"{"title":"t","task":"x","size":"s"}"#; 7].join(",")
        ))
        .unwrap();
        store::steps::record_done(
            &mut store.conn().await.unwrap(),
            store::steps::Done {
                line_id: &line,
                step_id: &planner.id,
                run_id: planned,
                sha: "abc",
                plan: Some((plan.level, &plan.steps)),
                carried: &[],
            },
        )
        .await
        .unwrap();
        let steps = store::steps::of_line(&mut store.conn().await.unwrap(), &line)
            .await
            .unwrap();
        assert_eq!(steps.len(), 8);
        assert!(steps[1..].iter().all(|s| s.size == Some(StepSize::S)));
        assert_eq!(steps[0].size, None);
        for (i, s) in (0i64..).zip(&steps[1..7]) {
            let r = testing::run(&store, &s.id, &line).await;
            testing::end_run(&store, r, "executor", "ok", 1.0, NOW - (30 - i) * MIN).await;
        }
        let running = testing::run(&store, &steps[7].id, &line).await;
        testing::exec(
            &store,
            &format!("UPDATE runs SET estimate_usd = 1.0 WHERE id = {running}"),
        )
        .await;
        let b = Budget::new(BudgetConfig::default());
        b.live.set(running, 0.5);
        let (s, claims) = b.view(&store, NOW, &HashMap::new()).await.unwrap();
        let sizes: Vec<_> = s
            .runs
            .iter()
            .filter(|r| r.kind == StepKind::Executor)
            .map(|r| r.size)
            .collect();
        assert_eq!(sizes[..6], [None; 6]);
        assert_eq!(sizes[6..], [Some(StepSize::S); 6]);
        // Claimed from the small steps' history ($1 × the margins), not the kind's ($8).
        assert_eq!(claims.len(), 1);
        assert!(claims[0].claim_usd < 2.0, "{claims:?}");
        let of_kind = b.policy.running(&s.runs, StepKind::Executor, "p", 1.0, 0.5);
        assert!(of_kind.estimate_usd > 8.0, "{of_kind:?}");
    }

    #[tokio::test]
    async fn a_utilisation_is_an_observation_of_the_pools_size_and_live_cost_counts() {
        let (_d, store) = testing::store().await;
        // $6 of a run that ended ten minutes ago, all of it inside the window.
        run(&store, "p", StepKind::Executor, 6.0, NOW - 10 * MIN, "ok").await;
        let b = Budget::new(BudgetConfig {
            threshold_usd: crate::config::Threshold::Auto,
            threshold_floor_usd: 10.0,
            ..BudgetConfig::default()
        });
        // A run in progress that has spent $4 so far, by its stream.
        let line = testing::line(&store, "r", "busy", 0, "running").await;
        let step = crate::store::testing::step(&store, &line, StepKind::Executor).await;
        let r = testing::run(&store, &step.id, &line).await;
        b.live.set(r, 4.0);
        let (s, running) = b.view(&store, NOW, &HashMap::new()).await.unwrap();
        assert_eq!(s.running[0].live_usd, 4.0);
        assert!(s.live);
        assert_eq!(
            (running[0].live_usd, i64::from(running[0].step_n)),
            (4.0, step.n)
        );
        // "auto" without observations: the floor.
        assert_eq!(b.policy.pools(&s)[0].threshold_usd, 10.0);
        // The server says 20% of the five hours: ($6 + $4) / 0.2 = $50, three times.
        let w = ServerWindow {
            utilization: 0.2,
            resets_at_ms: Some(NOW + 3600 * 1000),
        };
        for _ in 0..3 {
            b.observe(&store, NOW, Some(r), &[(PoolKind::Window, w)])
                .await
                .unwrap();
        }
        // Too small a utilisation says nothing.
        let tiny = ServerWindow {
            utilization: 0.01,
            ..w
        };
        b.observe(&store, NOW, Some(r), &[(PoolKind::Window, tiny)])
            .await
            .unwrap();
        let c = b
            .calibration(&store, PoolKind::Window, NOW)
            .await
            .unwrap()
            .unwrap();
        assert_eq!((c.observed_size_usd, c.observations), (50.0, 3));
        let s = b.snapshot(&store, NOW, &HashMap::new()).await.unwrap();
        assert_eq!(b.policy.pools(&s)[0].threshold_usd, 50.0);
        assert_eq!(b.window_threshold(&store, NOW).await.unwrap(), Some(50.0));
        // The event's windows, as the CLI writes them.
        let raw = r#"{"type":"rate_limit_event","rate_limit_info":{"status":"allowed","unifiedWindows":{"five_hour":{"utilization":0.31,"resetsAt":1800003600},"seven_day":{"utilization":0.12}}}}"#;
        let ws = server_windows(raw);
        assert_eq!(ws.len(), 2);
        assert_eq!(ws[0].0, PoolKind::Window);
        assert_eq!(ws[0].1.resets_at_ms, Some(1_800_003_600_000));
        assert_eq!((ws[1].0, ws[1].1.utilization), (PoolKind::Weekly, 0.12));
    }
}
