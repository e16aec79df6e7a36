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
