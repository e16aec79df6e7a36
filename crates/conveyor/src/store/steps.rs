//! `steps`: a line's steps in order. A step's attempts are `runs` rows; the API shows a step
//! with its runs summed ([`StepWithCost`]).

use conveyor_api::{self as api, Level, StepKind, StepSize, StepState};
use sqlx::sqlite::SqliteRow;
use sqlx::{Connection, FromRow, Row, SqliteConnection};

use super::names::{Stored, column, column_opt};
use super::sql::{marks, now_ms};
use super::{lines, questions, runs};
use crate::config::Check;
use crate::error::Result;

#[derive(Debug, Clone)]
pub struct StepRow {
    pub id: String,
    pub line_id: String,
    pub n: i64,
    pub kind: StepKind,
    /// The planner's guess of its size (a plan's executor step that gave one).
    pub size: Option<StepSize>,
    pub title: String,
    pub task: String,
    /// JSON of `[Check]` (see [`StepRow::checks`]).
    pub checks: String,
    pub state: StepState,
    pub attempts: i64,
    /// Why the next attempt starts from a rolled-back worktree (told to the agent).
    pub rolled_back: Option<String>,
    /// The project agent a checking role ran as.
    pub agent: Option<String>,
    /// A checking role's verdict: JSON of [`api::RoleVerdict`].
    pub verdict: Option<String>,
}

impl StepRow {
    /// A checking role's verdict, as the daemon read it.
    pub fn role_verdict(&self) -> Option<api::RoleVerdict> {
        serde_json::from_str(self.verdict.as_deref()?).ok()
    }
}

impl FromRow<'_, SqliteRow> for StepRow {
    fn from_row(r: &SqliteRow) -> Result<Self, sqlx::Error> {
        Ok(StepRow {
            id: r.try_get("id")?,
            line_id: r.try_get("line_id")?,
            n: r.try_get("n")?,
            kind: column(r, "kind")?,
            size: column_opt(r, "size")?,
            title: r.try_get("title")?,
            task: r.try_get("task")?,
            checks: r.try_get("checks")?,
            state: column(r, "state")?,
            attempts: r.try_get("attempts")?,
            rolled_back: r.try_get("rolled_back")?,
            agent: r.try_get("agent")?,
            verdict: r.try_get("verdict")?,
        })
    }
}

impl StepRow {
    pub fn checks(&self) -> Vec<Check> {
        serde_json::from_str(&self.checks).unwrap_or_default()
    }
}

/// A step with its runs summed, as the API shows it.
#[derive(Debug, Clone)]
pub struct StepWithCost {
    pub id: String,
    pub line_id: String,
    pub n: i64,
    pub kind: StepKind,
    pub size: Option<StepSize>,
    pub title: String,
    pub state: StepState,
    pub attempts: i64,
    pub error: Option<String>,
    pub session_id: Option<String>,
    pub agent: Option<String>,
    /// JSON of [`api::RoleVerdict`].
    pub verdict: Option<String>,
    pub cost_usd: f64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cache_read: i64,
    pub cache_write: i64,
    pub duration_ms: Option<i64>,
}

impl FromRow<'_, SqliteRow> for StepWithCost {
    fn from_row(r: &SqliteRow) -> Result<Self, sqlx::Error> {
        Ok(StepWithCost {
            id: r.try_get("id")?,
            line_id: r.try_get("line_id")?,
            n: r.try_get("n")?,
            kind: column(r, "kind")?,
            size: column_opt(r, "size")?,
            title: r.try_get("title")?,
            state: column(r, "state")?,
            attempts: r.try_get("attempts")?,
            error: r.try_get("error")?,
            session_id: r.try_get("session_id")?,
            agent: r.try_get("agent")?,
            verdict: r.try_get("verdict")?,
            cost_usd: r.try_get("cost_usd")?,
            input_tokens: r.try_get("input_tokens")?,
            output_tokens: r.try_get("output_tokens")?,
            cache_read: r.try_get("cache_read")?,
            cache_write: r.try_get("cache_write")?,
            duration_ms: r.try_get("duration_ms")?,
        })
    }
}

impl StepWithCost {
    pub fn to_api(&self) -> api::Step {
        api::Step {
            id: self.id.clone(),
            n: u32::try_from(self.n).unwrap_or(0),
            kind: self.kind,
            title: self.title.clone(),
            state: self.state,
            size: self.size,
            attempts: u32::try_from(self.attempts).unwrap_or(0),
            session_id: self.session_id.clone(),
            agent: self.agent.clone(),
            verdict: self
                .verdict
                .as_deref()
                .and_then(|v| serde_json::from_str(v).ok()),
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
    "SELECT s.id, s.line_id, s.n, s.kind, s.size, s.title, s.state, s.attempts, s.error, s.session_id,
        s.agent, s.verdict,
        COALESCE(SUM(r.cost_usd), 0.0) AS cost_usd,
        COALESCE(SUM(r.input_tokens), 0) AS input_tokens,
        COALESCE(SUM(r.output_tokens), 0) AS output_tokens,
        COALESCE(SUM(r.cache_read), 0) AS cache_read,
        COALESCE(SUM(r.cache_write), 0) AS cache_write,
        SUM(COALESCE(r.finished_at, CAST(strftime('%s', 'now') AS INTEGER) * 1000) - r.started_at)
            AS duration_ms
    FROM steps s LEFT JOIN runs r ON r.step_id = s.id";

/// Steps of one line with their summed runs.
///
/// # Errors
/// Database errors.
pub async fn with_cost(c: &mut SqliteConnection, line_id: &str) -> Result<Vec<StepWithCost>> {
    Ok(sqlx::query_as(&format!(
        "{STEP_WITH_COST} WHERE s.line_id = ? GROUP BY s.id ORDER BY s.n"
    ))
    .bind(line_id)
    .fetch_all(&mut *c)
    .await?)
}

/// Steps of several lines with their summed runs.
///
/// # Errors
/// Database errors.
pub async fn with_cost_for(
    c: &mut SqliteConnection,
    line_ids: &[String],
) -> Result<Vec<StepWithCost>> {
    if line_ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "{STEP_WITH_COST} WHERE s.line_id IN ({}) GROUP BY s.id ORDER BY s.line_id, s.n",
        marks(line_ids.len())
    );
    let mut q = sqlx::query_as(&sql);
    for id in line_ids {
        q = q.bind(id);
    }
    Ok(q.fetch_all(&mut *c).await?)
}

/// The steps of a line, in order.
///
/// # Errors
/// Database errors.
pub async fn of_line(c: &mut SqliteConnection, line_id: &str) -> Result<Vec<StepRow>> {
    Ok(
        sqlx::query_as("SELECT * FROM steps WHERE line_id = ? ORDER BY n")
            .bind(line_id)
            .fetch_all(&mut *c)
            .await?,
    )
}

/// One step.
///
/// # Errors
/// Database errors.
pub async fn get(c: &mut SqliteConnection, id: &str) -> Result<Option<StepRow>> {
    Ok(sqlx::query_as("SELECT * FROM steps WHERE id = ?")
        .bind(id)
        .fetch_optional(&mut *c)
        .await?)
}

/// Every step left `running` (recovery).
///
/// # Errors
/// Database errors.
pub async fn running(c: &mut SqliteConnection) -> Result<Vec<StepRow>> {
    Ok(
        sqlx::query_as("SELECT * FROM steps WHERE state = 'running'")
            .fetch_all(&mut *c)
            .await?,
    )
}

/// Appends a pending step after the line's last one; returns it.
///
/// # Errors
/// Database errors.
pub async fn add(
    c: &mut SqliteConnection,
    line_id: &str,
    kind: StepKind,
    title: &str,
    task: &str,
    checks: &[Check],
) -> Result<StepRow> {
    // Immediate: it reads the last step's number before it writes, and a deferred one is
    // refused the upgrade ("database is locked") when another writer came in between. Not
    // inside another transaction: that is what `add_in` is for.
    let mut tx = c.begin_with("BEGIN IMMEDIATE").await?;
    let id = insert(&mut tx, line_id, kind, None, title, task, checks).await?;
    let step = get(&mut tx, &id).await?;
    tx.commit().await?;
    Ok(step.expect("just inserted"))
}

/// Appends a pending step after the line's last one on `conn` (inside the caller's
/// transaction); returns its id. `size`: the planner's, for a plan's step.
async fn insert(
    conn: &mut SqliteConnection,
    line_id: &str,
    kind: StepKind,
    size: Option<StepSize>,
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
        "INSERT INTO steps (id, line_id, n, kind, size, title, task, checks, state)
         VALUES (?,?,?,?,?,?,?,?, 'pending')",
    )
    .bind(&id)
    .bind(line_id)
    .bind(n)
    .bind(kind.name())
    .bind(size.map(Stored::name))
    .bind(title)
    .bind(task)
    .bind(serde_json::to_string(checks).unwrap_or_else(|_| "[]".into()))
    .execute(&mut *conn)
    .await?;
    Ok(id)
}

/// The session a step of its own runs its next attempt in (a judge's, new every attempt).
///
/// # Errors
/// Database errors.
pub async fn set_session(c: &mut SqliteConnection, id: &str, session_id: &str) -> Result<()> {
    sqlx::query("UPDATE steps SET session_id = ? WHERE id = ?")
        .bind(session_id)
        .bind(id)
        .execute(&mut *c)
        .await?;
    Ok(())
}

/// The project agent a checking role's step runs as (`None`: the built-in prompt).
///
/// # Errors
/// Database errors.
pub async fn set_agent(c: &mut SqliteConnection, id: &str, agent: Option<&str>) -> Result<()> {
    sqlx::query("UPDATE steps SET agent = ? WHERE id = ?")
        .bind(agent)
        .bind(id)
        .execute(&mut *c)
        .await?;
    Ok(())
}

/// A checking role's verdict, kept with its step.
///
/// # Errors
/// Database errors.
pub async fn set_verdict(
    c: &mut SqliteConnection,
    id: &str,
    verdict: &api::RoleVerdict,
) -> Result<()> {
    sqlx::query("UPDATE steps SET verdict = ? WHERE id = ?")
        .bind(serde_json::to_string(verdict).unwrap_or_default())
        .bind(id)
        .execute(&mut *c)
        .await?;
    Ok(())
}

/// The verdicts of the line's checking-role steps that are done, with their step number and
/// kind, oldest first.
///
/// # Errors
/// Database errors.
pub async fn verdicts(
    c: &mut SqliteConnection,
    line_id: &str,
) -> Result<Vec<(i64, StepKind, api::RoleVerdict)>> {
    let rows: Vec<(i64, String, String)> = sqlx::query_as(
        "SELECT n, kind, verdict FROM steps WHERE line_id = ? AND verdict IS NOT NULL ORDER BY n",
    )
    .bind(line_id)
    .fetch_all(&mut *c)
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|(n, k, v)| Some((n, StepKind::parse(&k)?, serde_json::from_str(&v).ok()?)))
        .collect())
}

/// Removes the line's `answer` steps that have not started and carry nothing any more (an
/// answer taken back).
///
/// # Errors
/// Database errors.
pub async fn drop_unstarted_answer(c: &mut SqliteConnection, line_id: &str) -> Result<()> {
    sqlx::query(
        "DELETE FROM steps WHERE line_id = ? AND kind = 'answer' AND state = 'pending'
           AND attempts = 0",
    )
    .bind(line_id)
    .execute(&mut *c)
    .await?;
    Ok(())
}

/// Appends a pending step on `conn` (inside the caller's transaction); returns its id.
///
/// # Errors
/// Database errors.
pub async fn add_in(
    conn: &mut SqliteConnection,
    line_id: &str,
    kind: StepKind,
    title: &str,
    task: &str,
) -> Result<String> {
    insert(conn, line_id, kind, None, title, task, &[]).await
}

/// Sets the step's state and error (`None` clears it).
///
/// # Errors
/// Database errors.
pub async fn set_state(
    c: &mut SqliteConnection,
    id: &str,
    state: StepState,
    error: Option<&str>,
) -> Result<()> {
    sqlx::query("UPDATE steps SET state = ?, error = ? WHERE id = ?")
        .bind(state.name())
        .bind(error)
        .bind(id)
        .execute(&mut *c)
        .await?;
    Ok(())
}

/// The step's attempt `attempt` starts: `running`, its last error cleared, the time kept (an
/// answer given before it can no longer change).
///
/// # Errors
/// Database errors.
pub async fn start_attempt(c: &mut SqliteConnection, id: &str, attempt: i64) -> Result<()> {
    sqlx::query(
        "UPDATE steps SET state = 'running', attempts = ?, error = NULL, started_at = ? WHERE id = ?",
    )
    .bind(attempt)
    .bind(now_ms())
    .bind(id)
        .execute(&mut *c)
        .await?;
    Ok(())
}

/// An attempt that never started: the step back to `state` with `attempts` (not counted).
///
/// # Errors
/// Database errors.
pub async fn restore(
    c: &mut SqliteConnection,
    id: &str,
    state: StepState,
    attempts: i64,
) -> Result<()> {
    sqlx::query("UPDATE steps SET state = ?, attempts = ? WHERE id = ?")
        .bind(state.name())
        .bind(attempts)
        .bind(id)
        .execute(&mut *c)
        .await?;
    Ok(())
}

/// The step is resumed later from a rolled-back worktree: `state` (`pending` or
/// `interrupted`), with why the worktree was rolled back (told to the next attempt) and, when
/// given, the error that shows meanwhile.
///
/// # Errors
/// Database errors.
pub async fn roll_back(
    c: &mut SqliteConnection,
    id: &str,
    state: StepState,
    rolled_back: &str,
    error: Option<&str>,
) -> Result<()> {
    sqlx::query(
        "UPDATE steps SET state = ?, rolled_back = ?, error = COALESCE(?, error) WHERE id = ?",
    )
    .bind(state.name())
    .bind(rolled_back)
    .bind(error)
    .bind(id)
    .execute(&mut *c)
    .await?;
    Ok(())
}

/// Closes the line's failed, pending and interrupted steps (remarks carry on from the
/// checkpoint).
///
/// # Errors
/// Database errors.
pub async fn cancel_open(c: &mut SqliteConnection, line_id: &str) -> Result<()> {
    sqlx::query(
        "UPDATE steps SET state = 'cancelled' WHERE line_id = ? AND state IN ('failed', 'pending', 'interrupted')",
    )
    .bind(line_id)
    .execute(&mut *c)
    .await?;
    Ok(())
}

/// What a successful step leaves: its run, its checkpoint and, for a planner, the plan.
#[derive(Debug, Clone, Copy)]
pub struct Done<'a> {
    pub line_id: &'a str,
    pub step_id: &'a str,
    pub run_id: i64,
    /// The checkpoint commit.
    pub sha: &'a str,
    /// A planner's level and steps (they become executor steps).
    pub plan: Option<(Level, &'a [crate::plan::PlannedStep])>,
    /// The questions whose answers the step's prompt carried: delivered now.
    pub carried: &'a [String],
}

/// Records a successful step, in one transaction: the run ok, the step done at its
/// checkpoint, the line's checkpoint moved, answers delivered, and for a planner the plan's
/// level and executor steps — a crash can never leave a done planner without its steps.
///
/// # Errors
/// Database errors (nothing is written then).
pub async fn record_done(c: &mut SqliteConnection, d: Done<'_>) -> Result<()> {
    let mut tx = c.begin_with("BEGIN IMMEDIATE").await?;
    runs::set_outcome(&mut tx, d.run_id, runs::RunOutcome::Ok).await?;
    sqlx::query(
        "UPDATE steps SET state = 'done', checkpoint = ?, error = NULL, rolled_back = NULL WHERE id = ?",
    )
    .bind(d.sha)
    .bind(d.step_id)
    .execute(&mut *tx)
    .await?;
    lines::set_checkpoint(&mut tx, d.line_id, d.sha).await?;
    questions::mark_delivered(&mut tx, d.carried).await?;
    // What a rework step carried back is judged again.
    questions::reworked(&mut tx, d.step_id).await?;
    if let Some((level, steps)) = d.plan {
        lines::raise_level(&mut tx, d.line_id, level, "the planner chose it", now_ms()).await?;
        for s in steps {
            insert(
                &mut tx,
                d.line_id,
                StepKind::Executor,
                s.size,
                &s.title,
                &s.task,
                &s.checks,
            )
            .await?;
        }
    }
    tx.commit().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    #[tokio::test]
    async fn a_planner_is_done_only_together_with_its_executor_steps() {
        let (_dir, store) = testing::store().await;
        let line = testing::line(&store, "p", "l", 0, "running").await;
        let planner = testing::step(&store, &line, StepKind::Planner).await;
        let run = testing::run(&store, &planner.id, &line).await;
        let plan =
            crate::plan::parse(r#"{"steps":[{"title":"a","task":"x"},{"title":"b","task":"y"}]}"#)
                .unwrap();
        let done = Done {
            line_id: &line,
            step_id: &planner.id,
            run_id: run,
            sha: "abc",
            plan: Some((plan.level, &plan.steps)),
            carried: &[],
        };
        // The second executor step cannot be written (as if the daemon died in between).
        testing::exec(
            &store,
            "CREATE TRIGGER boom BEFORE INSERT ON steps WHEN NEW.title = 'b'
             BEGIN SELECT RAISE(ABORT, 'boom'); END",
        )
        .await;
        let r = record_done(&mut store.conn().await.unwrap(), done).await;
        assert!(r.is_err());
        let steps = of_line(&mut store.conn().await.unwrap(), &line)
            .await
            .unwrap();
        assert_eq!(steps.len(), 1, "no executor step without the planner done");
        assert_eq!(steps[0].state, StepState::Pending);
        let l = lines::get(&mut store.conn().await.unwrap(), &line)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(l.checkpoint, None);

        testing::exec(&store, "DROP TRIGGER boom").await;
        record_done(&mut store.conn().await.unwrap(), done)
            .await
            .unwrap();
        let steps = of_line(&mut store.conn().await.unwrap(), &line)
            .await
            .unwrap();
        assert_eq!(steps.len(), 3);
        assert_eq!(steps[0].state, StepState::Done);
        assert!(steps[1..].iter().all(|s| s.kind == StepKind::Executor));
    }
}
