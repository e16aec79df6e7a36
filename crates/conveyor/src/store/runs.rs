//! `runs`: every attempt of a step — one `claude -p` process — with its pid, outcome, cost and
//! tokens. The budget's history and its running claims are read from here (`spend`), the API's
//! view of a line's runs too (`view`).

use conveyor_api::{StepKind, StepSize};
use sqlx::{Connection, FromRow, SqliteConnection};

use super::lines;
use super::names::{Stored, column, column_opt};
use super::sql::{marks, now_ms, rfc3339};
use crate::error::Result;

/// Whether a run (of `runs`) is in its line's session: its step has no session of its own, as
/// a judge's and a checking role's have (`steps.session_id`, set before their runs start).
const IN_LINE_SESSION: &str =
    "(SELECT steps.session_id IS NULL FROM steps WHERE steps.id = runs.step_id)";

/// How a run ended (or that it has not).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunOutcome {
    /// The process runs (or the daemon died while it did).
    Running,
    /// The CLI ended without error; the daemon's own checks have not decided yet.
    Finished,
    /// Finished and its checks green: the step is done.
    Ok,
    /// Finished but its checks stayed red.
    Red,
    /// The CLI ended with an error.
    Failed,
    /// The account's usage limit cut it (a miss).
    UsageLimit,
    /// Its own `--max-budget-usd` cap cut it (a miss).
    MaxBudget,
    /// `--session-id` refused: the session is already in use.
    SessionInUse,
    /// `--resume` answered "No conversation found".
    NoConversation,
    /// A dead end no retry gets past (not logged in, no binary).
    Fatal,
    /// The daemon stopped or died while it ran or was checked.
    Interrupted,
    /// Its line was cancelled.
    Cancelled,
}

impl RunOutcome {
    pub const ALL: [RunOutcome; 12] = [
        RunOutcome::Running,
        RunOutcome::Finished,
        RunOutcome::Ok,
        RunOutcome::Red,
        RunOutcome::Failed,
        RunOutcome::UsageLimit,
        RunOutcome::MaxBudget,
        RunOutcome::SessionInUse,
        RunOutcome::NoConversation,
        RunOutcome::Fatal,
        RunOutcome::Interrupted,
        RunOutcome::Cancelled,
    ];

    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            RunOutcome::Running => "running",
            RunOutcome::Finished => "finished",
            RunOutcome::Ok => "ok",
            RunOutcome::Red => "red",
            RunOutcome::Failed => "failed",
            RunOutcome::UsageLimit => "usage_limit",
            RunOutcome::MaxBudget => "max_budget",
            RunOutcome::SessionInUse => "session_in_use",
            RunOutcome::NoConversation => "no_conversation",
            RunOutcome::Fatal => "fatal",
            RunOutcome::Interrupted => "interrupted",
            RunOutcome::Cancelled => "cancelled",
        }
    }
}

// Here rather than in `names`, beside the wire types: the type is the store's own, and
// `names` stays below every table file.
impl Stored for RunOutcome {
    const WHAT: &'static str = "run outcome";
    const ALL: &'static [Self] = &RunOutcome::ALL;
    fn name(self) -> &'static str {
        self.as_str()
    }
}

/// A run left `running`, as recovery sees it.
#[derive(Debug, Clone, FromRow)]
pub struct Unfinished {
    pub id: i64,
    /// Its stream file.
    pub log_path: Option<String>,
    pub step_id: String,
    pub line_id: String,
    /// It reached `system/init`: its session exists (the line's, unless its step's own).
    pub init_seen: bool,
    /// It ran in the line's session (not in a judge's or a checking role's own).
    pub in_line_session: bool,
}

/// A run about to start.
#[derive(Debug, Clone)]
pub struct NewRun<'a> {
    pub step_id: &'a str,
    pub line_id: &'a str,
    pub kind: StepKind,
    pub attempt: i64,
    /// `--resume` (else `--session-id`).
    pub resumed: bool,
    /// What the budget admitted it at.
    pub estimate_usd: f64,
    /// Its stream-json log.
    pub log_path: Option<&'a str>,
}

/// Records a run as `running`; returns its id.
///
/// # Errors
/// Database errors.
pub async fn start(c: &mut SqliteConnection, r: &NewRun<'_>) -> Result<i64> {
    // Not `RETURNING` read with `fetch_one`: a statement left unfinished keeps its write lock
    // until the connection is next used.
    Ok(sqlx::query(
        "INSERT INTO runs (step_id, line_id, kind, attempt, resumed, started_at, outcome,
            estimate_usd, log_path) VALUES (?,?,?,?,?,?, 'running', ?, ?)",
    )
    .bind(r.step_id)
    .bind(r.line_id)
    .bind(r.kind.name())
    .bind(r.attempt)
    .bind(r.resumed)
    .bind(now_ms())
    .bind(r.estimate_usd)
    .bind(r.log_path)
    .execute(&mut *c)
    .await?
    .last_insert_rowid())
}

/// The run's process started.
///
/// # Errors
/// Database errors.
pub async fn set_pid(c: &mut SqliteConnection, id: i64, pid: u32) -> Result<()> {
    sqlx::query("UPDATE runs SET pid = ? WHERE id = ?")
        .bind(i64::from(pid))
        .bind(id)
        .execute(&mut *c)
        .await?;
    Ok(())
}

/// The run reached `system/init`: its line's session exists from now on.
///
/// # Errors
/// Database errors.
pub async fn saw_init(c: &mut SqliteConnection, id: i64, line_id: &str) -> Result<()> {
    // Immediate: it reads before it writes, and a deferred one is refused the upgrade
    // ("database is locked") when another writer came in between.
    let mut tx = c.begin_with("BEGIN IMMEDIATE").await?;
    sqlx::query("UPDATE runs SET init_seen = 1 WHERE id = ?")
        .bind(id)
        .execute(&mut *tx)
        .await?;
    // A judge's or a checking role's run starts a session of its own, not the line's.
    let in_line: bool =
        sqlx::query_scalar(&format!("SELECT {IN_LINE_SESSION} FROM runs WHERE id = ?"))
            .bind(id)
            .fetch_one(&mut *tx)
            .await?;
    if in_line {
        lines::set_session_started(&mut tx, line_id, true).await?;
    }
    tx.commit().await?;
    Ok(())
}

/// What an ended run reports.
#[derive(Debug, Clone)]
pub struct Ended {
    pub outcome: RunOutcome,
    pub exit_code: Option<i32>,
    /// The session's cumulative `total_cost_usd` the result gave.
    pub session_total: Option<f64>,
    /// The run's own cost.
    pub cost_usd: f64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub duration_ms: i64,
    pub result: Option<String>,
    pub stderr_tail: String,
    pub permission_denials: Option<String>,
    pub hook_blocks: u32,
    pub init_seen: bool,
}

/// Records an ended run and, in the same transaction, its line's session total.
///
/// # Errors
/// Database errors.
pub async fn finish(
    c: &mut SqliteConnection,
    id: i64,
    line_id: &str,
    session_total_usd: Option<f64>,
    e: &Ended,
) -> Result<()> {
    let tokens = |t: u64| i64::try_from(t).unwrap_or(0);
    // A savepoint: the caller's transaction (immediate) holds the write lock already.
    let mut tx = c.begin().await?;
    sqlx::query(
        "UPDATE runs SET finished_at = ?, outcome = ?, exit_code = ?, session_total = ?,
            cost_usd = ?, input_tokens = ?, output_tokens = ?, cache_read = ?, cache_write = ?,
            duration_ms = ?, result = ?, stderr_tail = ?, permission_denials = ?, hook_blocks = ?,
            init_seen = MAX(init_seen, ?)
         WHERE id = ?",
    )
    .bind(now_ms())
    .bind(e.outcome.name())
    .bind(e.exit_code)
    .bind(e.session_total)
    .bind(e.cost_usd)
    .bind(tokens(e.input_tokens))
    .bind(tokens(e.output_tokens))
    .bind(tokens(e.cache_read))
    .bind(tokens(e.cache_write))
    .bind(e.duration_ms)
    .bind(&e.result)
    .bind(&e.stderr_tail)
    .bind(&e.permission_denials)
    .bind(i64::from(e.hook_blocks))
    .bind(e.init_seen)
    .bind(id)
    .execute(&mut *tx)
    .await?;
    // The line's session total; a judge's own session leaves it alone.
    if let Some(total) = session_total_usd {
        lines::set_session_cost(&mut tx, line_id, total).await?;
    }
    tx.commit().await?;
    Ok(())
}

/// # Errors
/// Database errors.
pub async fn set_outcome(c: &mut SqliteConnection, id: i64, outcome: RunOutcome) -> Result<()> {
    sqlx::query("UPDATE runs SET outcome = ? WHERE id = ?")
        .bind(outcome.name())
        .bind(id)
        .execute(&mut *c)
        .await?;
    Ok(())
}

/// The stream-json logs of a step's runs, oldest first.
///
/// # Errors
/// Database errors.
pub async fn logs_of_step(c: &mut SqliteConnection, step_id: &str) -> Result<Vec<String>> {
    Ok(sqlx::query_scalar(
        "SELECT log_path FROM runs WHERE step_id = ? AND log_path IS NOT NULL ORDER BY id",
    )
    .bind(step_id)
    .fetch_all(&mut *c)
    .await?)
}

/// Runs that never finished (the daemon died or stopped while they ran).
///
/// # Errors
/// Database errors.
pub async fn unfinished(c: &mut SqliteConnection) -> Result<Vec<Unfinished>> {
    Ok(sqlx::query_as(&format!(
        "SELECT id, log_path, step_id, line_id, init_seen, {IN_LINE_SESSION} AS in_line_session
             FROM runs WHERE outcome = 'running'"
    ))
    .fetch_all(&mut *c)
    .await?)
}

/// A run left `running` by a dead daemon: interrupted now, having cost `cost_usd` (what its
/// stream shows it spent; it has no result).
///
/// # Errors
/// Database errors.
pub async fn interrupt(c: &mut SqliteConnection, id: i64, cost_usd: f64) -> Result<()> {
    sqlx::query(
        "UPDATE runs SET outcome = 'interrupted', finished_at = ?, cost_usd = ? WHERE id = ?",
    )
    .bind(now_ms())
    .bind(cost_usd)
    .bind(id)
    .execute(&mut *c)
    .await?;
    Ok(())
}

/// The step's runs that had ended but were not yet judged (`finished`): interrupted.
///
/// # Errors
/// Database errors.
pub async fn interrupt_unjudged(c: &mut SqliteConnection, step_id: &str) -> Result<()> {
    sqlx::query(
        "UPDATE runs SET outcome = 'interrupted' WHERE step_id = ? AND outcome = 'finished'",
    )
    .bind(step_id)
    .execute(&mut *c)
    .await?;
    Ok(())
}

/// How many runs of the step ended in any of `outcomes`.
///
/// # Errors
/// Database errors.
pub async fn count_of_step(
    c: &mut SqliteConnection,
    step_id: &str,
    outcomes: &[RunOutcome],
) -> Result<i64> {
    let sql = format!(
        "SELECT COUNT(*) FROM runs WHERE step_id = ? AND outcome IN ({})",
        marks(outcomes.len())
    );
    let mut q = sqlx::query_scalar(&sql).bind(step_id);
    for o in outcomes {
        q = q.bind(o.name());
    }
    Ok(q.fetch_one(&mut *c).await?)
}

/// How many runs ended in any of `outcomes`, over all lines and time.
///
/// # Errors
/// Database errors.
pub async fn count_all(c: &mut SqliteConnection, outcomes: &[RunOutcome]) -> Result<i64> {
    let sql = format!(
        "SELECT COUNT(*) FROM runs WHERE outcome IN ({})",
        marks(outcomes.len())
    );
    let mut q = sqlx::query_scalar(&sql);
    for o in outcomes {
        q = q.bind(o.name());
    }
    Ok(q.fetch_one(&mut *c).await?)
}

/// How many runs a line has had.
///
/// # Errors
/// Database errors.
pub async fn count_of_line(c: &mut SqliteConnection, line_id: &str) -> Result<i64> {
    Ok(
        sqlx::query_scalar("SELECT COUNT(*) FROM runs WHERE line_id = ?")
            .bind(line_id)
            .fetch_one(&mut *c)
            .await?,
    )
}

/// Whether a run of the line's session other than `except` started the conversation
/// (`system/init`) and ended with a result (its session total is known): then the CLI had
/// saved the conversation, and one it no longer knows is lost work. A run that only reached
/// `system/init` before it was killed saved nothing; neither did a `--resume` refused with "No
/// conversation found", though the CLI ends it with a result (a zero total, no init). The runs
/// of a step with a session of its own (a judge, a checking role) are not the line's session.
///
/// # Errors
/// Database errors.
pub async fn session_finished_by_another(
    c: &mut SqliteConnection,
    line_id: &str,
    except: i64,
) -> Result<bool> {
    let n: i64 = sqlx::query_scalar(&format!(
        "SELECT COUNT(*) FROM runs WHERE line_id = ? AND id != ? AND session_total IS NOT NULL
                AND init_seen = 1 AND outcome != 'no_conversation' AND {IN_LINE_SESSION}"
    ))
    .bind(line_id)
    .bind(except)
    .fetch_one(&mut *c)
    .await?;
    Ok(n > 0)
}

/// The denials the CLI reported in the lines' runs (`permission_denials` of each run's result),
/// by line, oldest first.
///
/// # Errors
/// Database errors.
pub async fn denials_of(
    c: &mut SqliteConnection,
    line_ids: &[String],
) -> Result<std::collections::HashMap<String, Vec<conveyor_api::Denial>>> {
    let mut out: std::collections::HashMap<String, Vec<conveyor_api::Denial>> =
        std::collections::HashMap::new();
    if line_ids.is_empty() {
        return Ok(out);
    }
    let marks = vec!["?"; line_ids.len()].join(", ");
    let sql = format!(
        "SELECT r.line_id, s.n, r.permission_denials, COALESCE(r.finished_at, r.started_at)
         FROM runs r JOIN steps s ON s.id = r.step_id
         WHERE r.line_id IN ({marks}) AND r.permission_denials IS NOT NULL
           AND r.permission_denials != '[]'
         ORDER BY r.started_at, r.id"
    );
    let mut q = sqlx::query_as::<_, (String, i64, String, i64)>(&sql);
    for id in line_ids {
        q = q.bind(id);
    }
    for (line, n, json, at) in q.fetch_all(&mut *c).await? {
        let list: Vec<serde_json::Value> = serde_json::from_str(&json).unwrap_or_default();
        for d in list {
            out.entry(line.clone())
                .or_default()
                .push(conveyor_api::Denial {
                    step_n: u32::try_from(n).unwrap_or(0),
                    tool_name: d["tool_name"].as_str().unwrap_or_default().to_string(),
                    input: d["tool_input"].clone(),
                    at: rfc3339(at),
                });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;

mod spend;
mod view;
pub use spend::{claims, cost_since, history, spent_since};
pub use view::{of_line, view};
