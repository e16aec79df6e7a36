//! `rate_limits`: every `rate_limit_event` the CLI reported, raw JSON kept (the budget reads
//! both windows' utilisation from it).

use sqlx::{FromRow, SqliteConnection};

use super::sql::now_ms;
use crate::error::Result;

/// One reported event.
#[derive(Debug, Clone, FromRow)]
pub struct RateLimitRow {
    pub observed_at: i64,
    pub status: String,
    /// Unix seconds.
    pub resets_at: Option<i64>,
    pub limit_type: Option<String>,
    pub utilization: Option<f64>,
    pub raw: String,
}

/// What a run reported.
#[derive(Debug, Clone, Copy)]
pub struct NewRateLimit<'a> {
    pub status: &'a str,
    pub resets_at: Option<i64>,
    pub limit_type: Option<&'a str>,
    pub utilization: Option<f64>,
    pub raw: &'a str,
}

/// # Errors
/// Database errors.
pub async fn insert(
    c: &mut SqliteConnection,
    run_id: Option<i64>,
    e: NewRateLimit<'_>,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO rate_limits (run_id, observed_at, status, resets_at, limit_type,
            utilization, raw) VALUES (?,?,?,?,?,?,?)",
    )
    .bind(run_id)
    .bind(now_ms())
    .bind(e.status)
    .bind(e.resets_at)
    .bind(e.limit_type)
    .bind(e.utilization)
    .bind(e.raw)
    .execute(&mut *c)
    .await?;
    Ok(())
}

/// The last event reported.
///
/// # Errors
/// Database errors.
pub async fn last(c: &mut SqliteConnection) -> Result<Option<RateLimitRow>> {
    Ok(sqlx::query_as(
        "SELECT observed_at, status, resets_at, limit_type, utilization, raw
         FROM rate_limits ORDER BY id DESC LIMIT 1",
    )
    .fetch_optional(&mut *c)
    .await?)
}
