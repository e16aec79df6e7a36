//! `lines`: the queue. A line's state changes only through [`set_state`], which keeps a
//! cancelled line cancelled whatever its flow was doing when the cancel came.

use std::path::Path;

use conveyor_api::{self as api, Level, LineState, ReasonCode};
use sqlx::sqlite::SqliteRow;
use sqlx::{FromRow, Row, SqliteConnection};

use super::names::{Stored, column, column_opt};
use super::sql::{marks, now_ms, rfc3339};
use crate::error::Result;
use conveyor_core::text::normalise;

#[derive(Debug, Clone)]
pub struct LineRow {
    pub id: String,
    pub project_id: String,
    pub title: String,
    pub task: String,
    pub priority: i64,
    pub state: LineState,
    pub level: Option<Level>,
    /// Why the level is what it is.
    pub level_why: Option<String>,
    pub session_id: String,
    /// A run of this session reached `system/init`: later runs use `--resume`.
    pub session_started: bool,
    /// The session's cumulative `total_cost_usd` as last reported (a step's cost is the delta).
    pub session_cost: f64,
    pub branch: String,
    pub worktree: Option<String>,
    /// The commit the worktree is at after the last successful step.
    pub checkpoint: Option<String>,
    pub reason: Option<String>,
    pub reason_code: Option<ReasonCode>,
    pub park_until: Option<i64>,
    pub gate_failures: i64,
    /// The PlanFix task the line reports to when done.
    pub planfix_task: Option<String>,
    /// The state a re-checked condition (the vault) blocked the line from.
    pub blocked_from: Option<LineState>,
    pub created_at: i64,
    pub updated_at: i64,
}

impl FromRow<'_, SqliteRow> for LineRow {
    fn from_row(r: &SqliteRow) -> Result<Self, sqlx::Error> {
        Ok(LineRow {
            id: r.try_get("id")?,
            project_id: r.try_get("project_id")?,
            title: r.try_get("title")?,
            task: r.try_get("task")?,
            priority: r.try_get("priority")?,
            state: column(r, "state")?,
            level: column_opt(r, "level")?,
            level_why: r.try_get("level_why")?,
            session_id: r.try_get("session_id")?,
            session_started: r.try_get("session_started")?,
            session_cost: r.try_get("session_cost")?,
            branch: r.try_get("branch")?,
            worktree: r.try_get("worktree")?,
            checkpoint: r.try_get("checkpoint")?,
            reason: r.try_get("reason")?,
            reason_code: column_opt(r, "reason_code")?,
            park_until: r.try_get("park_until")?,
            gate_failures: r.try_get("gate_failures")?,
            planfix_task: r.try_get("planfix_task")?,
            blocked_from: column_opt(r, "blocked_from")?,
            created_at: r.try_get("created_at")?,
            updated_at: r.try_get("updated_at")?,
        })
    }
}

impl LineRow {
    /// A new queued line of `project_id`: its session id is assigned now, before the first
    /// step, and its branch is `line/<id>`.
    pub fn new(project_id: String, title: String, task: String, priority: i32, now: i64) -> Self {
        let id = uuid::Uuid::new_v4().to_string();
        LineRow {
            branch: format!("line/{id}"),
            session_id: uuid::Uuid::new_v4().to_string(),
            id,
            project_id,
            title,
            task,
            priority: i64::from(priority),
            state: LineState::Queued,
            level: None,
            level_why: None,
            session_started: false,
            session_cost: 0.0,
            worktree: None,
            checkpoint: None,
            reason: None,
            reason_code: None,
            park_until: None,
            gate_failures: 0,
            planfix_task: None,
            blocked_from: None,
            created_at: now,
            updated_at: now,
        }
    }

    pub fn to_api(&self, steps: Vec<api::Step>) -> api::Line {
        // Folded from +0.0: `Sum` of no `f64` is -0.0, which the wire would show as `-0.0`.
        let cost_usd = steps.iter().fold(0.0, |total, s| total + s.cost_usd);
        api::Line {
            id: self.id.clone(),
            project_id: self.project_id.clone(),
            title: self.title.clone(),
            task: self.task.clone(),
            priority: i32::try_from(self.priority).unwrap_or(0),
            state: self.state,
            level: self.level,
            level_why: self.level_why.clone(),
            rounds: u32::try_from(self.gate_failures).unwrap_or(0),
            session_id: self.session_id.clone(),
            branch: self.branch.clone(),
            reason: self.reason.clone(),
            reason_code: self.reason_code,
            park_until: self.park_until.map(rfc3339),
            steps,
            denials: Vec::new(),
            refusals: Vec::new(),
            deploys: Vec::new(),
            planfix_task: self.planfix_task.clone(),
            cost_usd,
            created_at: rfc3339(self.created_at),
            updated_at: rfc3339(self.updated_at),
        }
    }
}

/// The lines of these ids that exist, by id.
///
/// # Errors
/// Database errors; a stored state or level no variant carries.
pub async fn get_many(
    c: &mut SqliteConnection,
    ids: &[String],
) -> Result<std::collections::HashMap<String, LineRow>> {
    let mut found = std::collections::HashMap::with_capacity(ids.len());
    // SQLite takes at most 32766 parameters a statement; a few hundred at a time is plenty.
    for chunk in ids.chunks(500) {
        let sql = format!("SELECT * FROM lines WHERE id IN ({})", marks(chunk.len()));
        let mut q = sqlx::query_as::<_, LineRow>(&sql);
        for id in chunk {
            q = q.bind(id);
        }
        for row in q.fetch_all(&mut *c).await? {
            found.insert(row.id.clone(), row);
        }
    }
    Ok(found)
}

/// One line.
///
/// # Errors
/// Database errors; a stored state or level no variant carries.
pub async fn get(c: &mut SqliteConnection, id: &str) -> Result<Option<LineRow>> {
    Ok(sqlx::query_as("SELECT * FROM lines WHERE id = ?")
        .bind(id)
        .fetch_optional(&mut *c)
        .await?)
}

/// The line's state, or `None` when there is no such line.
///
/// # Errors
/// Database errors.
pub async fn state_of(c: &mut SqliteConnection, id: &str) -> Result<Option<LineState>> {
    let s: Option<String> = sqlx::query_scalar("SELECT state FROM lines WHERE id = ?")
        .bind(id)
        .fetch_optional(&mut *c)
        .await?;
    Ok(s.map(|s| super::names::parse("lines.state", &s))
        .transpose()?)
}

/// A new line. It is made after every line before it: its `created_at` is moved past the
/// newest line's when that is as late (two lines made in one millisecond), so age orders
/// lines as they were made — the daemon's order, pult's and a reorder's all break a tie of
/// priority by age, then by the random id.
///
/// # Errors
/// Database errors.
pub async fn insert(c: &mut SqliteConnection, l: &mut LineRow) -> Result<()> {
    // One statement: the insert holds the write lock while it reads the newest line, so two
    // lines made at once get two times. Not `RETURNING` read with `fetch_one` (see
    // `runs::start`); the time is read back.
    sqlx::query(
        "INSERT INTO lines (id, project_id, title, task, priority, state, session_id, branch,
            planfix_task, created_at, updated_at)
         SELECT ?1,?2,?3,?4,?5,?6,?7,?8,?9, made, MAX(?11, made)
         FROM (SELECT MAX(?10, COALESCE(MAX(created_at) + 1, ?10)) AS made FROM lines)",
    )
    .bind(&l.id)
    .bind(&l.project_id)
    .bind(&l.title)
    .bind(&l.task)
    .bind(l.priority)
    .bind(l.state.name())
    .bind(&l.session_id)
    .bind(&l.branch)
    .bind(&l.planfix_task)
    .bind(l.created_at)
    .bind(l.updated_at)
    .execute(&mut *c)
    .await?;
    let (made, updated): (i64, i64) =
        sqlx::query_as("SELECT created_at, updated_at FROM lines WHERE id = ?")
            .bind(&l.id)
            .fetch_one(&mut *c)
            .await?;
    (l.created_at, l.updated_at) = (made, updated);
    Ok(())
}

/// Lines filtered by state and project, highest priority first (then oldest, then id: a
/// total order, so pages do not overlap).
///
/// # Errors
/// Database errors.
pub async fn page(
    c: &mut SqliteConnection,
    state: Option<LineState>,
    project: Option<&str>,
    limit: i64,
    offset: i64,
) -> Result<Vec<LineRow>> {
    Ok(sqlx::query_as(
        "SELECT * FROM lines WHERE (?1 IS NULL OR state = ?1) AND (?2 IS NULL OR project_id = ?2)
         ORDER BY priority DESC, created_at ASC, id ASC LIMIT ?3 OFFSET ?4",
    )
    .bind(state.map(Stored::name))
    .bind(project)
    .bind(limit)
    .bind(offset)
    .fetch_all(&mut *c)
    .await?)
}

/// How many lines [`page`] pages through with these filters.
///
/// # Errors
/// Database errors.
pub async fn count(
    c: &mut SqliteConnection,
    state: Option<LineState>,
    project: Option<&str>,
) -> Result<i64> {
    Ok(sqlx::query_scalar(
        "SELECT COUNT(*) FROM lines WHERE (?1 IS NULL OR state = ?1) AND (?2 IS NULL OR project_id = ?2)",
    )
    .bind(state.map(Stored::name))
    .bind(project)
    .fetch_one(&mut *c)
    .await?)
}

/// How many lines are in any of `states`.
///
/// # Errors
/// Database errors.
pub async fn count_in(c: &mut SqliteConnection, states: &[LineState]) -> Result<u32> {
    let sql = format!(
        "SELECT COUNT(*) FROM lines WHERE state IN ({})",
        marks(states.len())
    );
    let mut q = sqlx::query_scalar::<_, i64>(&sql);
    for s in states {
        q = q.bind(s.name());
    }
    Ok(u32::try_from(q.fetch_one(&mut *c).await?).unwrap_or(u32::MAX))
}

/// The lines in any of `states`, in the daemon's order: highest priority first, then oldest,
/// then by id (the order `PUT /api/lines/order` sets and [`page`] lists).
///
/// # Errors
/// Database errors.
pub async fn in_states(c: &mut SqliteConnection, states: &[LineState]) -> Result<Vec<LineRow>> {
    let sql = format!(
        "SELECT * FROM lines WHERE state IN ({}) ORDER BY priority DESC, created_at ASC, id ASC",
        marks(states.len())
    );
    let mut q = sqlx::query_as::<_, LineRow>(&sql);
    for s in states {
        q = q.bind(s.name());
    }
    Ok(q.fetch_all(&mut *c).await?)
}

/// The open line (neither accepted nor cancelled) of `project_id` whose title is `title` as
/// compared for duplicates (case, blanks and a closing mark aside), if any.
///
/// # Errors
/// Database errors.
pub async fn open_with_title(
    c: &mut SqliteConnection,
    project_id: &str,
    title: &str,
) -> Result<Option<LineRow>> {
    let want = normalise(title);
    let open: Vec<LineRow> = sqlx::query_as(
        "SELECT * FROM lines WHERE project_id = ? AND state NOT IN ('accepted', 'cancelled')",
    )
    .bind(project_id)
    .fetch_all(&mut *c)
    .await?;
    Ok(open.into_iter().find(|l| normalise(&l.title) == want))
}

/// `(project_id, line_id)` of every line in any of `states`.
///
/// # Errors
/// Database errors.
pub async fn projects_in_states(
    c: &mut SqliteConnection,
    states: &[LineState],
) -> Result<Vec<(String, String)>> {
    // A line blocked by a condition re-checked every minute keeps its project too.
    let sql = format!(
        "SELECT project_id, id FROM lines WHERE state IN ({}) OR blocked_from IS NOT NULL",
        marks(states.len())
    );
    let mut q = sqlx::query_as::<_, (String, String)>(&sql);
    for s in states {
        q = q.bind(s.name());
    }
    Ok(q.fetch_all(&mut *c).await?)
}

/// The lines blocked by a condition re-checked every minute (`reason_code`), with the state
/// each left.
///
/// # Errors
/// Database errors.
pub async fn blocked_by(c: &mut SqliteConnection, code: ReasonCode) -> Result<Vec<LineRow>> {
    Ok(sqlx::query_as(
        "SELECT * FROM lines WHERE state = 'blocked' AND reason_code = ? AND blocked_from IS NOT NULL
         ORDER BY priority DESC, created_at, id",
    )
    .bind(code.name())
    .fetch_all(&mut *c)
    .await?)
}

/// Moves a line to `state`, unless it is cancelled: a cancel is final, whatever the line's
/// flow was doing when it came. Returns whether the line changed.
///
/// # Errors
/// Database errors.
pub async fn set_state(
    c: &mut SqliteConnection,
    id: &str,
    state: LineState,
    reason: Option<(ReasonCode, &str)>,
    park_until: Option<i64>,
) -> Result<bool> {
    // Blocked by the vault, the line remembers the state it left (kept across a second such
    // block) and returns there when the vault opens; any other state forgets it.
    let remembers = state == LineState::Blocked
        && reason.is_some_and(|(code, _)| code == ReasonCode::VaultClosed);
    let done = sqlx::query(
        "UPDATE lines SET state = ?, reason = ?, reason_code = ?, park_until = ?, updated_at = ?,
            blocked_from = CASE WHEN ? THEN COALESCE(blocked_from, NULLIF(state, 'blocked')) END
         WHERE id = ? AND state != 'cancelled'",
    )
    .bind(state.name())
    .bind(reason.map(|(_, text)| text))
    .bind(reason.map(|(code, _)| code.name()))
    .bind(park_until)
    .bind(now_ms())
    .bind(remembers)
    .bind(id)
    .execute(&mut *c)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// # Errors
/// Database errors.
pub async fn set_priority(c: &mut SqliteConnection, id: &str, priority: i32) -> Result<()> {
    sqlx::query("UPDATE lines SET priority = ?, updated_at = ? WHERE id = ?")
        .bind(i64::from(priority))
        .bind(now_ms())
        .bind(id)
        .execute(&mut *c)
        .await?;
    Ok(())
}

/// The line's worktree exists at `worktree`, at `checkpoint`.
///
/// # Errors
/// Database errors.
pub async fn set_worktree(
    c: &mut SqliteConnection,
    id: &str,
    worktree: &Path,
    checkpoint: Option<&str>,
) -> Result<()> {
    sqlx::query("UPDATE lines SET worktree = ?, checkpoint = ?, updated_at = ? WHERE id = ?")
        .bind(worktree.to_string_lossy().into_owned())
        .bind(checkpoint)
        .bind(now_ms())
        .bind(id)
        .execute(&mut *c)
        .await?;
    Ok(())
}

/// The line's worktree is gone (accepted).
///
/// # Errors
/// Database errors.
pub async fn clear_worktree(c: &mut SqliteConnection, id: &str) -> Result<()> {
    sqlx::query("UPDATE lines SET worktree = NULL WHERE id = ?")
        .bind(id)
        .execute(&mut *c)
        .await?;
    Ok(())
}

/// Whether a run of the line's session reached `system/init` (later runs use `--resume`).
///
/// # Errors
/// Database errors.
pub async fn set_session_started(c: &mut SqliteConnection, id: &str, started: bool) -> Result<()> {
    sqlx::query("UPDATE lines SET session_started = ? WHERE id = ?")
        .bind(started)
        .bind(id)
        .execute(&mut *c)
        .await?;
    Ok(())
}

/// The session's cumulative cost as last reported.
///
/// # Errors
/// Database errors.
pub async fn set_session_cost(c: &mut SqliteConnection, id: &str, total_usd: f64) -> Result<()> {
    sqlx::query("UPDATE lines SET session_cost = ? WHERE id = ?")
        .bind(total_usd)
        .bind(id)
        .execute(&mut *c)
        .await?;
    Ok(())
}

/// Red gate rounds in a row.
///
/// # Errors
/// Database errors.
pub async fn set_gate_failures(c: &mut SqliteConnection, id: &str, failures: i64) -> Result<()> {
    sqlx::query("UPDATE lines SET gate_failures = ? WHERE id = ?")
        .bind(failures)
        .bind(id)
        .execute(&mut *c)
        .await?;
    Ok(())
}

/// Raises the line's level to `level` with why (never lowers it: a lower or equal level
/// changes nothing), and journals a raise of a level already set as the daemon's `decided`
/// entry, so it shows with the line's entries and in the catalogue. Returns whether it rose.
///
/// # Errors
/// Database errors.
pub async fn raise_level(
    c: &mut SqliteConnection,
    id: &str,
    level: Level,
    why: &str,
    now: i64,
) -> Result<bool> {
    const RANK: &str =
        "CASE level WHEN 'light' THEN 1 WHEN 'medium' THEN 2 WHEN 'full' THEN 3 ELSE 0 END";
    let rank = match level {
        Level::Light => 1,
        Level::Medium => 2,
        Level::Full => 3,
    };
    let was_set: bool = sqlx::query_scalar("SELECT level IS NOT NULL FROM lines WHERE id = ?")
        .bind(id)
        .fetch_optional(&mut *c)
        .await?
        .unwrap_or(false);
    let done = sqlx::query(&format!(
        "UPDATE lines SET level = ?, level_why = ?, updated_at = ? WHERE id = ? AND {RANK} < ?"
    ))
    .bind(level.name())
    .bind(why)
    .bind(now)
    .bind(id)
    .bind(rank)
    .execute(&mut *c)
    .await?;
    if done.rows_affected() == 0 {
        return Ok(false);
    }
    if !was_set {
        // The first level is the planner's choice, which it journals itself as a fork.
        return Ok(true);
    }
    let text = format!("conveyor: the level is {}", level.name());
    super::journal::insert_daemon_decided(c, id, &text, why, now).await?;
    Ok(true)
}

/// Moves the line's checkpoint (after a successful step).
///
/// # Errors
/// Database errors.
pub async fn set_checkpoint(c: &mut SqliteConnection, id: &str, sha: &str) -> Result<()> {
    sqlx::query("UPDATE lines SET checkpoint = ?, updated_at = ? WHERE id = ?")
        .bind(sha)
        .bind(now_ms())
        .bind(id)
        .execute(&mut *c)
        .await?;
    Ok(())
}

/// Where ingestion of the line's journal file resumes.
///
/// # Errors
/// Database errors (a missing line among them).
pub async fn journal_offset(c: &mut SqliteConnection, id: &str) -> Result<i64> {
    Ok(
        sqlx::query_scalar("SELECT journal_offset FROM lines WHERE id = ?")
            .bind(id)
            .fetch_one(&mut *c)
            .await?,
    )
}

/// # Errors
/// Database errors.
pub async fn set_journal_offset(c: &mut SqliteConnection, id: &str, offset: i64) -> Result<()> {
    sqlx::query("UPDATE lines SET journal_offset = ? WHERE id = ?")
        .bind(offset)
        .bind(id)
        .execute(&mut *c)
        .await?;
    Ok(())
}

/// Stamps the line's last change (tests: a write that must not happen again).
///
/// # Errors
/// Database errors.
#[cfg(test)]
pub async fn set_updated_at(c: &mut SqliteConnection, id: &str, at: i64) -> Result<()> {
    sqlx::query("UPDATE lines SET updated_at = ? WHERE id = ?")
        .bind(at)
        .bind(id)
        .execute(&mut *c)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests;
