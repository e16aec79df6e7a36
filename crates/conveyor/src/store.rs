//! SQLite storage: the queue lives on disk. Migrations are embedded; the database runs in WAL
//! mode with foreign keys on. Queries live here beside the rows they read.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use conveyor_api as api;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{FromRow, SqlitePool};

use crate::Result;
use crate::config::Check;

/// Milliseconds since the epoch, UTC.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// RFC 3339 text of a time in milliseconds.
pub fn rfc3339(ms: i64) -> String {
    chrono::DateTime::<chrono::Utc>::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Opens (creating if missing) the database and applies the migrations.
///
/// # Errors
/// [`crate::Error::Db`] or [`crate::Error::Migrate`].
pub async fn open(path: &Path) -> Result<SqlitePool> {
    let opts = SqliteConnectOptions::from_str("sqlite://")?
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .foreign_keys(true)
        .busy_timeout(Duration::from_secs(10));
    let pool = SqlitePoolOptions::new()
        .max_connections(8)
        .connect_with(opts)
        .await?;
    sqlx::migrate!("./migrations").run(&pool).await?;
    Ok(pool)
}

#[derive(Debug, Clone, FromRow)]
pub struct ProjectRow {
    pub id: String,
    pub name: String,
    pub repo_path: String,
    pub main_branch: String,
    pub created_at: i64,
}

impl ProjectRow {
    pub fn to_api(&self) -> api::Project {
        api::Project {
            id: self.id.clone(),
            name: self.name.clone(),
            repo_path: self.repo_path.clone(),
            main_branch: self.main_branch.clone(),
            created_at: rfc3339(self.created_at),
        }
    }
}

#[derive(Debug, Clone, FromRow)]
pub struct LineRow {
    pub id: String,
    pub project_id: String,
    pub title: String,
    pub task: String,
    pub priority: i64,
    pub state: String,
    pub level: Option<String>,
    pub session_id: String,
    pub session_started: bool,
    pub session_cost: f64,
    pub branch: String,
    pub worktree: Option<String>,
    pub checkpoint: Option<String>,
    pub reason: Option<String>,
    pub park_until: Option<i64>,
    pub gate_failures: i64,
    pub journal_offset: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

impl LineRow {
    pub fn state(&self) -> api::LineState {
        api::LineState::parse(&self.state).unwrap_or(api::LineState::Blocked)
    }

    pub fn to_api(&self, steps: Vec<api::Step>) -> api::Line {
        let cost_usd = steps.iter().map(|s| s.cost_usd).sum();
        api::Line {
            id: self.id.clone(),
            project_id: self.project_id.clone(),
            title: self.title.clone(),
            task: self.task.clone(),
            priority: i32::try_from(self.priority).unwrap_or(0),
            state: self.state(),
            level: self.level.as_deref().and_then(api::Level::parse),
            session_id: self.session_id.clone(),
            branch: self.branch.clone(),
            reason: self.reason.clone(),
            park_until: self.park_until.map(rfc3339),
            steps,
            cost_usd,
            created_at: rfc3339(self.created_at),
            updated_at: rfc3339(self.updated_at),
        }
    }
}

#[derive(Debug, Clone, FromRow)]
pub struct StepRow {
    pub id: String,
    pub line_id: String,
    pub n: i64,
    pub kind: String,
    pub title: String,
    pub task: String,
    pub checks: String,
    pub state: String,
    pub attempts: i64,
    pub error: Option<String>,
    pub rolled_back: Option<String>,
    pub checkpoint: Option<String>,
}

impl StepRow {
    pub fn kind(&self) -> api::StepKind {
        api::StepKind::parse(&self.kind).unwrap_or(api::StepKind::Executor)
    }
    pub fn state(&self) -> api::StepState {
        api::StepState::parse(&self.state).unwrap_or(api::StepState::Failed)
    }
    pub fn checks(&self) -> Vec<Check> {
        serde_json::from_str(&self.checks).unwrap_or_default()
    }
}

/// A step with its runs summed, as the API shows it.
#[derive(Debug, Clone, FromRow)]
pub struct StepWithCost {
    pub id: String,
    pub line_id: String,
    pub n: i64,
    pub kind: String,
    pub title: String,
    pub state: String,
    pub attempts: i64,
    pub error: Option<String>,
    pub cost_usd: f64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cache_read: i64,
    pub cache_write: i64,
    pub duration_ms: Option<i64>,
}

impl StepWithCost {
    pub fn to_api(&self) -> api::Step {
        api::Step {
            id: self.id.clone(),
            n: u32::try_from(self.n).unwrap_or(0),
            kind: api::StepKind::parse(&self.kind).unwrap_or(api::StepKind::Executor),
            title: self.title.clone(),
            state: api::StepState::parse(&self.state).unwrap_or(api::StepState::Failed),
            attempts: u32::try_from(self.attempts).unwrap_or(0),
            cost_usd: self.cost_usd,
            tokens: api::Tokens {
                input: u64::try_from(self.input_tokens).unwrap_or(0),
                output: u64::try_from(self.output_tokens).unwrap_or(0),
                cache_read: u64::try_from(self.cache_read).unwrap_or(0),
                cache_write: u64::try_from(self.cache_write).unwrap_or(0),
            },
            error: self.error.clone(),
            duration_ms: self.duration_ms.and_then(|d| u64::try_from(d).ok()),
        }
    }
}

const STEP_WITH_COST: &str =
    "SELECT s.id, s.line_id, s.n, s.kind, s.title, s.state, s.attempts, s.error,
        COALESCE(SUM(r.cost_usd), 0.0) AS cost_usd,
        COALESCE(SUM(r.input_tokens), 0) AS input_tokens,
        COALESCE(SUM(r.output_tokens), 0) AS output_tokens,
        COALESCE(SUM(r.cache_read), 0) AS cache_read,
        COALESCE(SUM(r.cache_write), 0) AS cache_write,
        SUM(COALESCE(r.finished_at, CAST(strftime('%s', 'now') AS INTEGER) * 1000) - r.started_at)
            AS duration_ms
    FROM steps s LEFT JOIN runs r ON r.step_id = s.id";

#[derive(Debug, Clone, FromRow)]
pub struct RunRow {
    pub id: i64,
    pub step_id: String,
    pub line_id: String,
    pub kind: String,
    pub attempt: i64,
    pub pid: Option<i64>,
    pub outcome: String,
    pub init_seen: bool,
    pub estimate_usd: f64,
}

#[derive(Debug, Clone, FromRow)]
pub struct JournalRow {
    pub id: i64,
    pub line_id: String,
    pub step_id: Option<String>,
    pub kind: Option<String>,
    pub text: Option<String>,
    pub options: String,
    pub default_opt: Option<String>,
    pub why: Option<String>,
    pub reversible: Option<bool>,
    pub expensive: Option<bool>,
    pub valid: bool,
    pub error: Option<String>,
    pub raw: String,
    pub created_at: i64,
}

impl JournalRow {
    pub fn to_api(&self) -> api::JournalEntry {
        api::JournalEntry {
            id: self.id,
            line_id: self.line_id.clone(),
            step_id: self.step_id.clone(),
            kind: self.kind.as_deref().and_then(parse_journal_kind),
            text: self.text.clone(),
            options: serde_json::from_str(&self.options).unwrap_or_default(),
            default: self.default_opt.clone(),
            why: self.why.clone(),
            reversible: self.reversible,
            expensive: self.expensive,
            valid: self.valid,
            error: self.error.clone(),
            raw: self.raw.clone(),
            created_at: rfc3339(self.created_at),
        }
    }
}

pub fn parse_journal_kind(s: &str) -> Option<api::JournalKind> {
    match s {
        "fork" => Some(api::JournalKind::Fork),
        "question" => Some(api::JournalKind::Question),
        "decided" => Some(api::JournalKind::Decided),
        "uncovered" => Some(api::JournalKind::Uncovered),
        _ => None,
    }
}

#[derive(Debug, Clone, FromRow)]
pub struct QuestionRow {
    pub id: String,
    pub line_id: String,
    pub project_id: String,
    pub text: Option<String>,
    pub options: String,
    pub default_opt: Option<String>,
    pub why: Option<String>,
    pub reversible: Option<bool>,
    pub expensive: Option<bool>,
    pub status: String,
    pub answer: Option<String>,
    pub created_at: i64,
}

impl QuestionRow {
    pub fn to_api(&self) -> api::Question {
        api::Question {
            id: self.id.clone(),
            line_id: self.line_id.clone(),
            project_id: self.project_id.clone(),
            text: self.text.clone().unwrap_or_default(),
            options: serde_json::from_str(&self.options).unwrap_or_default(),
            default: self.default_opt.clone(),
            why: self.why.clone(),
            reversible: self.reversible,
            expensive: self.expensive,
            status: match self.status.as_str() {
                "validated" => api::QuestionStatus::Validated,
                "answered" => api::QuestionStatus::Answered,
                "dismissed" => api::QuestionStatus::Dismissed,
                _ => api::QuestionStatus::Unvalidated,
            },
            answer: self.answer.clone(),
            created_at: rfc3339(self.created_at),
        }
    }
}

pub const QUESTION_SELECT: &str = "SELECT q.id, q.line_id, l.project_id, j.text, j.options,
        j.default_opt, j.why, j.reversible, j.expensive, q.status, q.answer, q.created_at
    FROM questions q JOIN journal j ON j.id = q.journal_id JOIN lines l ON l.id = q.line_id";

/// Typed queries over the pool.
#[derive(Debug, Clone)]
pub struct Store {
    pub pool: SqlitePool,
}

impl Store {
    pub async fn projects(&self) -> Result<Vec<ProjectRow>> {
        Ok(sqlx::query_as("SELECT * FROM projects ORDER BY name")
            .fetch_all(&self.pool)
            .await?)
    }

    pub async fn project(&self, id: &str) -> Result<Option<ProjectRow>> {
        Ok(sqlx::query_as("SELECT * FROM projects WHERE id = ?")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?)
    }

    pub async fn insert_project(&self, p: &ProjectRow) -> Result<()> {
        sqlx::query(
            "INSERT INTO projects (id, name, repo_path, main_branch, created_at) VALUES (?,?,?,?,?)",
        )
        .bind(&p.id)
        .bind(&p.name)
        .bind(&p.repo_path)
        .bind(&p.main_branch)
        .bind(p.created_at)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub async fn line(&self, id: &str) -> Result<Option<LineRow>> {
        Ok(sqlx::query_as("SELECT * FROM lines WHERE id = ?")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?)
    }

    pub async fn insert_line(&self, l: &LineRow) -> Result<()> {
        sqlx::query(
            "INSERT INTO lines (id, project_id, title, task, priority, state, session_id, branch,
                created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
        )
        .bind(&l.id)
        .bind(&l.project_id)
        .bind(&l.title)
        .bind(&l.task)
        .bind(l.priority)
        .bind(&l.state)
        .bind(&l.session_id)
        .bind(&l.branch)
        .bind(l.created_at)
        .bind(l.updated_at)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Lines filtered by state and project, highest priority first (then oldest, then id: a
    /// total order, so pages do not overlap).
    pub async fn lines(
        &self,
        state: Option<&str>,
        project: Option<&str>,
        limit: i64,
        offset: i64,
    ) -> Result<Vec<LineRow>> {
        Ok(sqlx::query_as(
            "SELECT * FROM lines WHERE (?1 IS NULL OR state = ?1) AND (?2 IS NULL OR project_id = ?2)
             ORDER BY priority DESC, created_at ASC, id ASC LIMIT ?3 OFFSET ?4",
        )
        .bind(state)
        .bind(project)
        .bind(limit)
        .bind(offset)
        .fetch_all(&self.pool)
        .await?)
    }

    /// How many lines [`Store::lines`] pages through with these filters.
    pub async fn count_lines(&self, state: Option<&str>, project: Option<&str>) -> Result<i64> {
        Ok(sqlx::query_scalar(
            "SELECT COUNT(*) FROM lines WHERE (?1 IS NULL OR state = ?1) AND (?2 IS NULL OR project_id = ?2)",
        )
        .bind(state)
        .bind(project)
        .fetch_one(&self.pool)
        .await?)
    }

    /// Steps of one line with their summed runs.
    pub async fn steps_with_cost(&self, line_id: &str) -> Result<Vec<StepWithCost>> {
        Ok(sqlx::query_as(&format!(
            "{STEP_WITH_COST} WHERE s.line_id = ? GROUP BY s.id ORDER BY s.n"
        ))
        .bind(line_id)
        .fetch_all(&self.pool)
        .await?)
    }

    /// Steps of several lines with their summed runs.
    pub async fn steps_with_cost_for(&self, line_ids: &[String]) -> Result<Vec<StepWithCost>> {
        if line_ids.is_empty() {
            return Ok(Vec::new());
        }
        let marks = vec!["?"; line_ids.len()].join(",");
        let sql = format!(
            "{STEP_WITH_COST} WHERE s.line_id IN ({marks}) GROUP BY s.id ORDER BY s.line_id, s.n"
        );
        let mut q = sqlx::query_as(&sql);
        for id in line_ids {
            q = q.bind(id);
        }
        Ok(q.fetch_all(&self.pool).await?)
    }

    /// The line as the API shows it.
    pub async fn line_api(&self, id: &str) -> Result<Option<api::Line>> {
        let Some(l) = self.line(id).await? else {
            return Ok(None);
        };
        let steps = self.steps_with_cost(id).await?;
        Ok(Some(
            l.to_api(steps.iter().map(StepWithCost::to_api).collect()),
        ))
    }

    pub async fn steps(&self, line_id: &str) -> Result<Vec<StepRow>> {
        Ok(
            sqlx::query_as("SELECT * FROM steps WHERE line_id = ? ORDER BY n")
                .bind(line_id)
                .fetch_all(&self.pool)
                .await?,
        )
    }

    pub async fn step(&self, id: &str) -> Result<Option<StepRow>> {
        Ok(sqlx::query_as("SELECT * FROM steps WHERE id = ?")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?)
    }

    /// Appends a step after the line's last one.
    pub async fn add_step(
        &self,
        line_id: &str,
        kind: api::StepKind,
        title: &str,
        task: &str,
        checks: &[Check],
    ) -> Result<StepRow> {
        let mut tx = self.pool.begin().await?;
        let id = insert_step(&mut tx, line_id, kind, title, task, checks).await?;
        tx.commit().await?;
        Ok(self.step(&id).await?.expect("just inserted"))
    }

    /// Moves a line to `state`, unless it is cancelled: a cancel is final, whatever the line's
    /// flow was doing when it came. Returns whether the line changed.
    pub async fn set_line_state(
        &self,
        id: &str,
        state: api::LineState,
        reason: Option<&str>,
        park_until: Option<i64>,
    ) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE lines SET state = ?, reason = ?, park_until = ?, updated_at = ?
             WHERE id = ? AND state != 'cancelled'",
        )
        .bind(state.as_str())
        .bind(reason)
        .bind(park_until)
        .bind(now_ms())
        .bind(id)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() > 0)
    }

    pub async fn set_step_state(
        &self,
        id: &str,
        state: api::StepState,
        error: Option<&str>,
    ) -> Result<()> {
        sqlx::query("UPDATE steps SET state = ?, error = ? WHERE id = ?")
            .bind(state.as_str())
            .bind(error)
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Runs that never finished (the daemon died or stopped while they ran).
    pub async fn unfinished_runs(&self) -> Result<Vec<RunRow>> {
        Ok(sqlx::query_as(
            "SELECT id, step_id, line_id, kind, attempt, pid, outcome, init_seen, estimate_usd
             FROM runs WHERE outcome = 'running'",
        )
        .fetch_all(&self.pool)
        .await?)
    }

    /// Journal entries of a line, oldest first, the last `limit`.
    pub async fn journal(&self, line_id: &str, limit: i64) -> Result<Vec<JournalRow>> {
        let mut rows: Vec<JournalRow> = sqlx::query_as(
            "SELECT id, line_id, step_id, kind, text, options, default_opt, why, reversible,
                expensive, valid, error, raw, created_at
             FROM journal WHERE line_id = ? ORDER BY id DESC LIMIT ?",
        )
        .bind(line_id)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        rows.reverse();
        Ok(rows)
    }

    pub async fn account_park_until(&self) -> Result<Option<i64>> {
        let v: Option<String> =
            sqlx::query_scalar("SELECT value FROM account WHERE key = 'park_until'")
                .fetch_optional(&self.pool)
                .await?;
        Ok(v.and_then(|v| v.parse().ok()))
    }

    pub async fn set_account_park_until(&self, until: i64) -> Result<()> {
        sqlx::query(
            "INSERT INTO account (key, value) VALUES ('park_until', ?1)
             ON CONFLICT(key) DO UPDATE SET value = CAST(MAX(CAST(value AS INTEGER), CAST(?1 AS INTEGER)) AS TEXT)",
        )
        .bind(until.to_string())
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}

/// Appends a pending step after the line's last one on `conn` (inside the caller's
/// transaction); returns its id.
///
/// # Errors
/// Database errors.
pub async fn insert_step(
    conn: &mut sqlx::SqliteConnection,
    line_id: &str,
    kind: api::StepKind,
    title: &str,
    task: &str,
    checks: &[Check],
) -> Result<String> {
    let n: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(n), 0) + 1 FROM steps WHERE line_id = ?")
        .bind(line_id)
        .fetch_one(&mut *conn)
        .await?;
    let id = uuid::Uuid::new_v4().to_string();
    sqlx::query(
        "INSERT INTO steps (id, line_id, n, kind, title, task, checks, state) VALUES (?,?,?,?,?,?,?, 'pending')",
    )
    .bind(&id)
    .bind(line_id)
    .bind(n)
    .bind(kind.as_str())
    .bind(title)
    .bind(task)
    .bind(serde_json::to_string(checks).unwrap_or_else(|_| "[]".into()))
    .execute(&mut *conn)
    .await?;
    Ok(id)
}

/// A store in a temporary SQLite file, and rows to fill it, for unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    pub async fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let pool = open(&dir.path().join("t.db")).await.unwrap();
        (dir, Store { pool })
    }

    /// A line (and its project, made when missing) in `state`; returns the line's id.
    pub async fn line(
        store: &Store,
        project: &str,
        id: &str,
        priority: i64,
        state: &str,
    ) -> String {
        if store.project(project).await.unwrap().is_none() {
            store
                .insert_project(&ProjectRow {
                    id: project.into(),
                    name: project.into(),
                    repo_path: format!("/nonexistent/{project}"),
                    main_branch: "main".into(),
                    created_at: now_ms(),
                })
                .await
                .unwrap();
        }
        store
            .insert_line(&LineRow {
                id: id.into(),
                project_id: project.into(),
                title: id.into(),
                task: "task".into(),
                priority,
                state: state.into(),
                level: None,
                session_id: uuid::Uuid::new_v4().to_string(),
                session_started: false,
                session_cost: 0.0,
                branch: format!("line/{id}"),
                worktree: None,
                checkpoint: None,
                reason: None,
                park_until: None,
                gate_failures: 0,
                journal_offset: 0,
                created_at: now_ms(),
                updated_at: now_ms(),
            })
            .await
            .unwrap();
        id.into()
    }

    /// A run of `step` left `running`; returns its id.
    pub async fn run(store: &Store, step: &str, line: &str) -> i64 {
        sqlx::query_scalar(
            "INSERT INTO runs (step_id, line_id, kind, attempt, resumed, started_at, outcome)
             VALUES (?, ?, 'executor', 1, 0, ?, 'running') RETURNING id",
        )
        .bind(step)
        .bind(line)
        .bind(now_ms())
        .fetch_one(&store.pool)
        .await
        .unwrap()
    }
}
