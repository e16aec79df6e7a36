//! `calibration`: the observations of a pool's real size (see `budget::calibration`).

use conveyor_api::PoolKind;
use sqlx::SqliteConnection;

use crate::error::Result;

/// One observation.
#[derive(Debug, Clone, Copy)]
pub struct Observation {
    pub pool: PoolKind,
    pub observed_at: i64,
    pub run_id: Option<i64>,
    pub utilization: f64,
    pub spent_usd: f64,
    pub size_usd: f64,
}

fn pool_name(p: PoolKind) -> &'static str {
    match p {
        PoolKind::Window => "window",
        PoolKind::Weekly => "weekly",
        PoolKind::Monthly => "monthly",
    }
}

/// # Errors
/// Database errors.
pub async fn insert(c: &mut SqliteConnection, o: Observation) -> Result<()> {
    sqlx::query(
        "INSERT INTO calibration (pool, observed_at, run_id, utilization, spent_usd, size_usd)
         VALUES (?,?,?,?,?,?)",
    )
    .bind(pool_name(o.pool))
    .bind(o.observed_at)
    .bind(o.run_id)
    .bind(o.utilization)
    .bind(o.spent_usd)
    .bind(o.size_usd)
    .execute(&mut *c)
    .await?;
    // A row or two a call: the proposal reads the last 20 of a pool, so the last few thousand
    // are more than enough (by the key, cheap).
    sqlx::query("DELETE FROM calibration WHERE id <= (SELECT MAX(id) FROM calibration) - ?")
        .bind(KEEP)
        .execute(&mut *c)
        .await?;
    Ok(())
}

/// Observations kept.
const KEEP: i64 = 5000;

/// The pool's last `limit` observed sizes since `since_ms`, oldest first.
///
/// # Errors
/// Database errors.
pub async fn sizes(
    c: &mut SqliteConnection,
    pool: PoolKind,
    since_ms: i64,
    limit: i64,
) -> Result<Vec<f64>> {
    let mut v: Vec<f64> = sqlx::query_scalar(
        "SELECT size_usd FROM calibration WHERE pool = ? AND observed_at >= ?
         ORDER BY id DESC LIMIT ?",
    )
    .bind(pool_name(pool))
    .bind(since_ms)
    .bind(limit)
    .fetch_all(&mut *c)
    .await?;
    v.reverse();
    Ok(v)
}
