//! Deploys after a line's merge (`deploys`): the row of a deploy that runs is the project's
//! deploy lock, also across a restart.

use conveyor_api::{self as api, DeployOutcome};
use sqlx::{Row, SqliteConnection};

use super::names::{Stored, column};
use super::sql::rfc3339;
use crate::error::Result;

/// A deploy as stored.
#[derive(Debug, Clone)]
pub struct DeployRow {
    pub id: i64,
    pub line_id: String,
    pub commit: String,
    pub previous_commit: String,
    pub started_at: i64,
    pub finished_at: Option<i64>,
    pub outcome: DeployOutcome,
    pub output_tail: String,
    /// JSON of `[api::HealthCheck]`.
    pub health: String,
}

impl DeployRow {
    pub fn to_api(&self) -> api::Deploy {
        api::Deploy {
            commit: self.commit.clone(),
            previous_commit: self.previous_commit.clone(),
            started_at: rfc3339(self.started_at),
            finished_at: self.finished_at.map(rfc3339),
            outcome: self.outcome,
            output_tail: self.output_tail.clone(),
            health: serde_json::from_str(&self.health).unwrap_or_default(),
        }
    }
}

fn row(r: &sqlx::sqlite::SqliteRow) -> std::result::Result<DeployRow, sqlx::Error> {
    Ok(DeployRow {
        id: r.try_get("id")?,
        line_id: r.try_get("line_id")?,
        commit: r.try_get("commit_sha")?,
        previous_commit: r.try_get("previous_commit")?,
        started_at: r.try_get("started_at")?,
        finished_at: r.try_get("finished_at")?,
        outcome: column(r, "outcome")?,
        output_tail: r.try_get("output_tail")?,
        health: r.try_get("health")?,
    })
}

/// Starts a deploy; its id.
///
/// # Errors
/// Database errors.
pub async fn start(
    c: &mut SqliteConnection,
    (line_id, project_id): (&str, &str),
    (commit, previous): (&str, &str),
    now: i64,
) -> Result<i64> {
    let done = sqlx::query(
        "INSERT INTO deploys (line_id, project_id, commit_sha, previous_commit, started_at)
         VALUES (?,?,?,?,?)",
    )
    .bind(line_id)
    .bind(project_id)
    .bind(commit)
    .bind(previous)
    .bind(now)
    .execute(&mut *c)
    .await?;
    Ok(done.last_insert_rowid())
}

/// Keeps what the deploy (and its rollback) printed.
///
/// # Errors
/// Database errors.
pub async fn set_output(c: &mut SqliteConnection, id: i64, output_tail: &str) -> Result<()> {
    sqlx::query("UPDATE deploys SET output_tail = ? WHERE id = ?")
        .bind(output_tail)
        .bind(id)
        .execute(&mut *c)
        .await?;
    Ok(())
}

/// Keeps the health check's tries so far.
///
/// # Errors
/// Database errors.
pub async fn set_health(
    c: &mut SqliteConnection,
    id: i64,
    health: &[api::HealthCheck],
) -> Result<()> {
    sqlx::query("UPDATE deploys SET health = ? WHERE id = ?")
        .bind(serde_json::to_string(health).unwrap_or_else(|_| "[]".into()))
        .bind(id)
        .execute(&mut *c)
        .await?;
    Ok(())
}

/// Ends the deploy with its outcome.
///
/// # Errors
/// Database errors.
pub async fn finish(
    c: &mut SqliteConnection,
    id: i64,
    outcome: DeployOutcome,
    now: i64,
) -> Result<()> {
    sqlx::query("UPDATE deploys SET outcome = ?, finished_at = ? WHERE id = ?")
        .bind(outcome.name())
        .bind(now)
        .bind(id)
        .execute(&mut *c)
        .await?;
    Ok(())
}

/// The deploy of the project that runs (or ran when the daemon died), if any.
///
/// # Errors
/// Database errors.
pub async fn running_of_project(
    c: &mut SqliteConnection,
    project_id: &str,
) -> Result<Option<DeployRow>> {
    let r = sqlx::query(
        "SELECT * FROM deploys WHERE project_id = ? AND outcome = 'running' ORDER BY id LIMIT 1",
    )
    .bind(project_id)
    .fetch_optional(&mut *c)
    .await?;
    Ok(r.as_ref().map(row).transpose()?)
}

/// The commit production runs after the project's last finished deploy: a green one's
/// commit, a rolled-back one's previous commit (what the rollback put back), a red one's
/// commit (nothing put it back). `None` before any deploy.
///
/// # Errors
/// Database errors.
pub async fn in_production(c: &mut SqliteConnection, project_id: &str) -> Result<Option<String>> {
    let r: Option<(String, String, String)> = sqlx::query_as(
        "SELECT outcome, commit_sha, previous_commit FROM deploys
         WHERE project_id = ? AND outcome != 'running' ORDER BY id DESC LIMIT 1",
    )
    .bind(project_id)
    .fetch_optional(&mut *c)
    .await?;
    Ok(r.map(|(outcome, commit, previous)| {
        if outcome == DeployOutcome::RolledBack.name() {
            previous
        } else {
            commit
        }
    }))
}

/// The deploys of these lines, by line, oldest first.
///
/// # Errors
/// Database errors.
pub async fn of_lines(
    c: &mut SqliteConnection,
    line_ids: &[String],
) -> Result<std::collections::HashMap<String, Vec<api::Deploy>>> {
    let mut out: std::collections::HashMap<String, Vec<api::Deploy>> =
        std::collections::HashMap::new();
    if line_ids.is_empty() {
        return Ok(out);
    }
    let marks = vec!["?"; line_ids.len()].join(", ");
    let sql = format!("SELECT * FROM deploys WHERE line_id IN ({marks}) ORDER BY id");
    let mut q = sqlx::query(&sql);
    for id in line_ids {
        q = q.bind(id);
    }
    for r in q.fetch_all(&mut *c).await? {
        let d = row(&r)?;
        out.entry(d.line_id.clone()).or_default().push(d.to_api());
    }
    Ok(out)
}
