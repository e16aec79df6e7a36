//! What the budget reads of the runs: what finished runs spent, and the runs in progress with
//! the estimates they were admitted at.

use sqlx::{Row as _, SqliteConnection};

use super::*;

/// What the runs that ended since `since` cost together.
///
/// # Errors
/// Database errors.
pub async fn cost_since(c: &mut SqliteConnection, since: i64) -> Result<f64> {
    Ok(
        sqlx::query_scalar("SELECT COALESCE(SUM(cost_usd), 0.0) FROM runs WHERE finished_at >= ?")
            .bind(since)
            .fetch_one(&mut *c)
            .await?,
    )
}

/// A finished run as the budget sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Spent {
    pub kind: StepKind,
    pub project_id: String,
    pub step_id: String,
    /// Its step's size, as the plan gave it.
    pub size: Option<StepSize>,
    pub cost_usd: f64,
    pub started_ms: i64,
    pub finished_ms: i64,
    pub outcome: RunOutcome,
}

/// Finished runs since `since_ms`, plus at least the last `rows` runs whenever they ended,
/// oldest first.
///
/// # Errors
/// Database errors; a stored kind or outcome no variant carries.
pub async fn history(c: &mut SqliteConnection, since_ms: i64, rows: i64) -> Result<Vec<Spent>> {
    let raw = sqlx::query(
        "SELECT r.kind, l.project_id, r.step_id, s.size, r.cost_usd, r.started_at, r.finished_at,
                r.outcome
         FROM runs r JOIN lines l ON l.id = r.line_id LEFT JOIN steps s ON s.id = r.step_id
         WHERE r.finished_at IS NOT NULL AND r.outcome != 'running'
           AND (r.finished_at >= ?1 OR r.id > (SELECT COALESCE(MAX(id), 0) FROM runs) - ?2)
         ORDER BY r.finished_at, r.id",
    )
    .bind(since_ms)
    .bind(rows)
    .fetch_all(&mut *c)
    .await?;
    let spent = raw
        .iter()
        .map(|r| {
            Ok(Spent {
                kind: column(r, "kind")?,
                project_id: r.try_get("project_id")?,
                step_id: r.try_get("step_id")?,
                size: column_opt(r, "size")?,
                cost_usd: r.try_get("cost_usd")?,
                started_ms: r.try_get("started_at")?,
                finished_ms: r.try_get("finished_at")?,
                outcome: column(r, "outcome")?,
            })
        })
        .collect::<std::result::Result<_, sqlx::Error>>()?;
    Ok(spent)
}

/// A run in progress as the budget sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    pub run_id: i64,
    pub step_n: u32,
    pub line_id: String,
    pub project_id: String,
    pub kind: StepKind,
    pub size: Option<StepSize>,
    pub estimate_usd: f64,
    /// When the run started, unix ms (its spend so far leaves a rolling pool from then).
    pub started_ms: i64,
}

/// What the runs that ended after `since_ms` spent after it: a run that began before it counts
/// for the share of its time after it (a run spends over its run, and what it spent before
/// `since_ms` is not in a window that begins then).
///
/// # Errors
/// Database errors.
pub async fn spent_since(c: &mut SqliteConnection, since_ms: i64) -> Result<f64> {
    Ok(sqlx::query_scalar(
        "SELECT COALESCE(SUM(cost_usd * MIN(1.0,
                    CAST(finished_at - ?1 AS REAL) / MAX(1, finished_at - started_at))), 0.0)
         FROM runs WHERE finished_at > ?1 AND outcome != 'running'",
    )
    .bind(since_ms)
    .fetch_one(&mut *c)
    .await?)
}

/// Every run in progress with the estimate it was admitted at.
///
/// # Errors
/// Database errors.
pub async fn claims(c: &mut SqliteConnection) -> Result<Vec<Claim>> {
    let raw = sqlx::query(
        "SELECT r.id, s.n, s.size, r.line_id, r.estimate_usd, r.kind, l.project_id, r.started_at
         FROM runs r JOIN lines l ON l.id = r.line_id JOIN steps s ON s.id = r.step_id
         WHERE r.outcome = 'running' ORDER BY r.id",
    )
    .fetch_all(&mut *c)
    .await?;
    let claims = raw
        .iter()
        .map(|r| {
            Ok(Claim {
                run_id: r.try_get("id")?,
                step_n: r.try_get("n")?,
                line_id: r.try_get("line_id")?,
                project_id: r.try_get("project_id")?,
                kind: column(r, "kind")?,
                size: column_opt(r, "size")?,
                estimate_usd: r.try_get("estimate_usd")?,
                started_ms: r.try_get("started_at")?,
            })
        })
        .collect::<std::result::Result<_, sqlx::Error>>()?;
    Ok(claims)
}
