//! The budget: the single place where the daemon asks "may this step start now?".
//!
//! [`Budget`] is the seam the full policy (several pools, packing short steps into the tail of a
//! window, the server's utilisation overriding estimates) plugs into later. This policy
//! is [`WindowThreshold`]: spent in the rolling window + estimates of the running steps + the
//! new step's estimate ≤ threshold (and the same over 7 days when a weekly cap is set).

use conveyor_api::StepKind;
use sqlx::SqlitePool;

use crate::Result;
use crate::config::BudgetConfig;

/// What is asked.
#[derive(Debug, Clone)]
pub struct Ask {
    pub kind: StepKind,
    /// Now, in unix milliseconds (passed in, so the policy is testable).
    pub now_ms: i64,
}

/// The answer.
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

/// A budget policy.
pub trait Budget: Send + Sync + std::fmt::Debug {
    /// May a step of this kind start now?
    fn decide<'a>(&'a self, pool: &'a SqlitePool, ask: Ask) -> BoxFuture<'a, Result<Decision>>;
}

/// A boxed future (keeps [`Budget`] usable as `dyn Budget`).
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// The threshold on the rolling window.
#[derive(Debug, Clone)]
pub struct WindowThreshold {
    pub cfg: BudgetConfig,
}

/// The figures behind a decision (also shown by `GET /api/budget`).
#[derive(Debug, Clone, Default)]
pub struct Figures {
    pub window_spent: f64,
    pub weekly_spent: f64,
    pub running_estimate: f64,
}

impl WindowThreshold {
    /// Spent in the window and the week, and the estimates of running steps.
    ///
    /// # Errors
    /// Database errors.
    pub async fn figures(&self, pool: &SqlitePool, now_ms: i64) -> Result<Figures> {
        let since = now_ms - i64::from(self.cfg.window_secs) * 1000;
        let week = now_ms - 7 * 24 * 3600 * 1000;
        let (window_spent, weekly_spent, running): (f64, f64, f64) = sqlx::query_as(
            "SELECT
                COALESCE(SUM(CASE WHEN finished_at >= ?1 THEN cost_usd END), 0.0),
                COALESCE(SUM(CASE WHEN finished_at >= ?2 THEN cost_usd END), 0.0),
                COALESCE(SUM(CASE WHEN outcome = 'running' THEN estimate_usd END), 0.0)
             FROM runs WHERE finished_at >= ?2 OR outcome = 'running'",
        )
        .bind(since)
        .bind(week)
        .fetch_one(pool)
        .await?;
        Ok(Figures {
            window_spent,
            weekly_spent,
            running_estimate: running,
        })
    }

    /// The estimate for a step kind: the mean cost of its last 20 finished steps, raised by
    /// `miss_factor` for each of those runs that a usage limit cut; the default without history.
    ///
    /// # Errors
    /// Database errors.
    pub async fn estimate(&self, pool: &SqlitePool, kind: StepKind) -> Result<(f64, u32)> {
        let rows: Vec<(f64, String)> = sqlx::query_as(
            "SELECT cost_usd, outcome FROM runs WHERE kind = ? AND outcome != 'running'
             ORDER BY id DESC LIMIT 20",
        )
        .bind(kind.as_str())
        .fetch_all(pool)
        .await?;
        let done: Vec<f64> = rows
            .iter()
            .filter(|(_, o)| o == "ok")
            .map(|(c, _)| *c)
            .collect();
        let misses = rows.iter().filter(|(_, o)| o == "usage_limit").count();
        let base = if done.is_empty() {
            self.cfg.default_estimate_usd
        } else {
            done.iter().sum::<f64>() / done.len() as f64
        };
        let factor = self
            .cfg
            .miss_factor
            .powi(i32::try_from(misses.min(5)).unwrap_or(5));
        Ok((base * factor, u32::try_from(done.len()).unwrap_or(0)))
    }

    /// When enough of the window's spending will have aged out to fit `need` more.
    async fn fits_at(&self, pool: &SqlitePool, now_ms: i64, need: f64, spent: f64) -> Result<i64> {
        let since = now_ms - i64::from(self.cfg.window_secs) * 1000;
        let rows: Vec<(i64, f64)> = sqlx::query_as(
            "SELECT finished_at, cost_usd FROM runs WHERE finished_at >= ? ORDER BY finished_at",
        )
        .bind(since)
        .fetch_all(pool)
        .await?;
        let mut left = spent;
        for (at, c) in rows {
            left -= c;
            if left + need <= self.cfg.threshold_usd {
                return Ok(at + i64::from(self.cfg.window_secs) * 1000 + 1000);
            }
        }
        Ok(now_ms + 60_000)
    }
}

impl Budget for WindowThreshold {
    fn decide<'a>(&'a self, pool: &'a SqlitePool, ask: Ask) -> BoxFuture<'a, Result<Decision>> {
        Box::pin(self.decide_now(pool, ask))
    }
}

impl WindowThreshold {
    async fn decide_now(&self, pool: &SqlitePool, ask: Ask) -> Result<Decision> {
        let f = self.figures(pool, ask.now_ms).await?;
        let (estimate, _) = self.estimate(pool, ask.kind).await?;
        let need = f.running_estimate + estimate;
        if f.window_spent + need > self.cfg.threshold_usd {
            let until_ms = self.fits_at(pool, ask.now_ms, need, f.window_spent).await?;
            return Ok(Decision::Wait {
                until_ms,
                reason: format!(
                    "budget: spent ${:.4} in the window + ${:.4} running + ${:.4} for this {} step > threshold ${:.2}",
                    f.window_spent,
                    f.running_estimate,
                    estimate,
                    ask.kind.as_str(),
                    self.cfg.threshold_usd
                ),
            });
        }
        if let Some(weekly) = self.cfg.weekly_threshold_usd
            && f.weekly_spent + need > weekly
        {
            return Ok(Decision::Wait {
                until_ms: ask.now_ms + 3600 * 1000,
                reason: format!(
                    "budget: spent ${:.4} this week + ${need:.4} > weekly cap ${weekly:.2}",
                    f.weekly_spent
                ),
            });
        }
        Ok(Decision::Start {
            estimate_usd: estimate,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Store, now_ms, testing};

    const MIN: i64 = 60_000;

    fn policy(weekly: Option<f64>) -> WindowThreshold {
        WindowThreshold {
            cfg: BudgetConfig {
                window_secs: 3600,
                threshold_usd: 10.0,
                weekly_threshold_usd: weekly,
                default_estimate_usd: 1.0,
                miss_factor: 1.5,
            },
        }
    }

    /// An executor run that ended `ago_ms` before now having cost `cost`.
    async fn spent(store: &Store, cost: f64, ago_ms: i64, outcome: &str) {
        let line = testing::line(store, "p", &uuid::Uuid::new_v4().to_string(), 0, "running").await;
        let step = store
            .add_step(&line, StepKind::Executor, "s", "t", &[])
            .await
            .unwrap();
        let run = testing::run(store, &step.id, &line).await;
        sqlx::query("UPDATE runs SET outcome = ?, cost_usd = ?, finished_at = ? WHERE id = ?")
            .bind(outcome)
            .bind(cost)
            .bind(now_ms() - ago_ms)
            .bind(run)
            .execute(&store.pool)
            .await
            .unwrap();
    }

    async fn ask(p: &WindowThreshold, store: &Store, kind: StepKind) -> Decision {
        p.decide(
            &store.pool,
            Ask {
                kind,
                now_ms: now_ms(),
            },
        )
        .await
        .unwrap()
    }

    #[tokio::test]
    async fn starts_while_spent_plus_estimate_stays_at_or_below_the_threshold() {
        let (_d, store) = testing::store().await;
        let p = policy(None);
        assert_eq!(
            ask(&p, &store, StepKind::Planner).await,
            Decision::Start { estimate_usd: 1.0 }
        );
        spent(&store, 9.0, 10 * MIN, "ok").await;
        // 9 spent + 1 (the planner's default estimate) = 10: exactly the threshold.
        assert_eq!(
            ask(&p, &store, StepKind::Planner).await,
            Decision::Start { estimate_usd: 1.0 }
        );
        // Spending older than the window does not count.
        spent(&store, 100.0, 2 * 60 * MIN, "ok").await;
        assert!(matches!(
            ask(&p, &store, StepKind::Planner).await,
            Decision::Start { .. }
        ));
    }

    #[tokio::test]
    async fn over_the_threshold_waits_until_enough_spending_ages_out() {
        let (_d, store) = testing::store().await;
        let p = policy(None);
        spent(&store, 6.0, 50 * MIN, "ok").await;
        spent(&store, 4.0, 10 * MIN, "ok").await;
        let before = now_ms();
        let Decision::Wait { until_ms, reason } = ask(&p, &store, StepKind::Planner).await else {
            panic!("10 spent + 1 > 10 must wait");
        };
        assert!(reason.contains("threshold"), "{reason}");
        // The 6 spent 50 minutes ago leaves the window in 10 minutes; then 4 + 1 fits.
        let expect = before + 10 * MIN;
        assert!((until_ms - expect).abs() < 5_000, "{until_ms} vs {expect}");
    }

    #[tokio::test]
    async fn running_steps_count_with_their_estimates() {
        let (_d, store) = testing::store().await;
        let p = policy(None);
        spent(&store, 7.0, 5 * MIN, "ok").await;
        let line = testing::line(&store, "p", "busy", 0, "running").await;
        let step = store
            .add_step(&line, StepKind::Executor, "s", "t", &[])
            .await
            .unwrap();
        let run = testing::run(&store, &step.id, &line).await;
        sqlx::query("UPDATE runs SET estimate_usd = 3.0 WHERE id = ?")
            .bind(run)
            .execute(&store.pool)
            .await
            .unwrap();
        // 7 spent + 3 running + 1 new > 10.
        assert!(matches!(
            ask(&p, &store, StepKind::Planner).await,
            Decision::Wait { .. }
        ));
    }

    #[tokio::test]
    async fn the_weekly_cap_holds_back_what_the_window_allows() {
        let (_d, store) = testing::store().await;
        spent(&store, 11.5, 2 * 24 * 60 * MIN, "ok").await;
        assert!(matches!(
            ask(&policy(None), &store, StepKind::Planner).await,
            Decision::Start { .. }
        ));
        let Decision::Wait { reason, .. } =
            ask(&policy(Some(12.0)), &store, StepKind::Planner).await
        else {
            panic!("11.5 this week + 1 > 12 must wait");
        };
        assert!(reason.contains("weekly"), "{reason}");
    }

    #[tokio::test]
    async fn estimates_come_from_history_raised_after_a_usage_limit() {
        let (_d, store) = testing::store().await;
        let p = policy(None);
        spent(&store, 2.0, 5 * MIN, "ok").await;
        spent(&store, 4.0, 4 * MIN, "ok").await;
        assert_eq!(
            p.estimate(&store.pool, StepKind::Executor).await.unwrap(),
            (3.0, 2)
        );
        spent(&store, 0.5, 3 * MIN, "usage_limit").await;
        let (e, _) = p.estimate(&store.pool, StepKind::Executor).await.unwrap();
        assert!((e - 4.5).abs() < 1e-9, "{e}");
        // A kind with no history: the default.
        assert_eq!(
            p.estimate(&store.pool, StepKind::Fixer).await.unwrap(),
            (1.0, 0)
        );
    }
}
