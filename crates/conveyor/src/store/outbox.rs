//! `outbox`: messages to the Catcher and PlanFix, written in the transaction of the change
//! they report and delivered in id order per channel by `notify::send`. A `dedupe` key makes
//! writing the same message twice (a retried transition, a restart) a no-op.

use conveyor_api::{self as api, Channel, OutboxKind, OutboxState};
use sqlx::{Row, SqliteConnection};

use super::names::{Stored, column};
use super::sql::rfc3339;
use crate::error::Result;

/// An outbox row.
#[derive(Debug, Clone, PartialEq)]
pub struct OutboxRow {
    pub id: i64,
    pub channel: Channel,
    pub kind: OutboxKind,
    pub dedupe: String,
    pub line_id: Option<String>,
    pub question_id: Option<String>,
    /// The PlanFix task; for an `edit`, the id of the row whose message it changes.
    pub target: Option<String>,
    /// JSON: `{text, buttons}` for Telegram, `{round}` for a report, `{members}` for a digest.
    pub body: String,
    pub state: OutboxState,
    pub attempts: i64,
    pub next_at: i64,
    pub last_error: Option<String>,
    pub held: bool,
    pub digest_id: Option<i64>,
    pub resolved: Option<String>,
    /// JSON list of the Telegram message ids it went out as, or the PlanFix comment id.
    pub remote_id: Option<String>,
    pub created_at: i64,
    pub sent_at: Option<i64>,
}

fn row(r: &sqlx::sqlite::SqliteRow) -> std::result::Result<OutboxRow, sqlx::Error> {
    Ok(OutboxRow {
        id: r.try_get("id")?,
        channel: column(r, "channel")?,
        kind: column(r, "kind")?,
        dedupe: r.try_get("dedupe")?,
        line_id: r.try_get("line_id")?,
        question_id: r.try_get("question_id")?,
        target: r.try_get("target")?,
        body: r.try_get("body")?,
        state: column(r, "state")?,
        attempts: r.try_get("attempts")?,
        next_at: r.try_get("next_at")?,
        last_error: r.try_get("last_error")?,
        held: r.try_get("held")?,
        digest_id: r.try_get("digest_id")?,
        resolved: r.try_get("resolved")?,
        remote_id: r.try_get("remote_id")?,
        created_at: r.try_get("created_at")?,
        sent_at: r.try_get("sent_at")?,
    })
}

impl OutboxRow {
    /// The row as `GET /api/outbox` shows it; `preview` is what it says, without markup.
    pub fn to_api(&self, preview: String) -> api::OutboxItem {
        api::OutboxItem {
            id: self.id,
            channel: self.channel,
            kind: self.kind,
            state: self.state,
            attempts: u32::try_from(self.attempts).unwrap_or(0),
            next_at: (self.state == OutboxState::Pending).then(|| rfc3339(self.next_at)),
            last_error: self.last_error.clone(),
            line_id: self.line_id.clone(),
            held: self.held,
            preview,
            created_at: rfc3339(self.created_at),
            sent_at: self.sent_at.map(rfc3339),
        }
    }

    /// The Telegram message ids it went out as.
    pub fn message_ids(&self) -> Vec<i64> {
        self.remote_id
            .as_deref()
            .and_then(|s| serde_json::from_str(s).ok())
            .unwrap_or_default()
    }
}

/// A message to write.
#[derive(Debug, Clone)]
pub struct New<'a> {
    pub channel: Channel,
    pub kind: OutboxKind,
    /// Unique per message: a second write with the same key writes nothing.
    pub dedupe: String,
    pub line_id: Option<&'a str>,
    pub question_id: Option<&'a str>,
    pub target: Option<String>,
    pub body: serde_json::Value,
    /// Written at night: held for the digest.
    pub held: bool,
    pub now: i64,
}

/// Writes a message unless one with its `dedupe` key exists; its id when written.
///
/// # Errors
/// Database errors.
pub async fn enqueue(c: &mut SqliteConnection, m: &New<'_>) -> Result<Option<i64>> {
    // Not `RETURNING` read with `fetch_optional`: a statement left unfinished keeps its write
    // lock until the connection is next used, and every other writer waits on it.
    let done = sqlx::query(
        "INSERT INTO outbox (channel, kind, dedupe, line_id, question_id, target, body, held,
            next_at, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)
         ON CONFLICT(dedupe) DO NOTHING",
    )
    .bind(m.channel.name())
    .bind(m.kind.name())
    .bind(&m.dedupe)
    .bind(m.line_id)
    .bind(m.question_id)
    .bind(&m.target)
    .bind(m.body.to_string())
    .bind(m.held)
    .bind(m.now)
    .bind(m.now)
    .execute(&mut *c)
    .await?;
    Ok((done.rows_affected() > 0).then(|| done.last_insert_rowid()))
}

/// One row.
///
/// # Errors
/// Database errors.
pub async fn get(c: &mut SqliteConnection, id: i64) -> Result<Option<OutboxRow>> {
    Ok(sqlx::query("SELECT * FROM outbox WHERE id = ?")
        .bind(id)
        .try_map(|r| row(&r))
        .fetch_optional(&mut *c)
        .await?)
}

/// The channel's first pending message not held for a digest (due or not: the channel is a
/// queue, and nothing overtakes a message that waits to be retried).
///
/// # Errors
/// Database errors.
pub async fn head(c: &mut SqliteConnection, channel: Channel) -> Result<Option<OutboxRow>> {
    Ok(sqlx::query(
        "SELECT * FROM outbox WHERE channel = ? AND state = 'pending' AND held = 0
         ORDER BY id LIMIT 1",
    )
    .bind(channel.name())
    .try_map(|r| row(&r))
    .fetch_optional(&mut *c)
    .await?)
}

/// The held messages no digest carries yet, oldest first.
///
/// # Errors
/// Database errors.
pub async fn held_loose(c: &mut SqliteConnection, channel: Channel) -> Result<Vec<OutboxRow>> {
    Ok(sqlx::query(
        "SELECT * FROM outbox WHERE channel = ? AND state = 'pending' AND held = 1
            AND digest_id IS NULL ORDER BY id",
    )
    .bind(channel.name())
    .try_map(|r| row(&r))
    .fetch_all(&mut *c)
    .await?)
}

/// The messages a digest carries, oldest first.
///
/// # Errors
/// Database errors.
pub async fn members(c: &mut SqliteConnection, digest_id: i64) -> Result<Vec<OutboxRow>> {
    Ok(
        sqlx::query("SELECT * FROM outbox WHERE digest_id = ? ORDER BY id")
            .bind(digest_id)
            .try_map(|r| row(&r))
            .fetch_all(&mut *c)
            .await?,
    )
}

/// Puts held messages into a digest.
///
/// # Errors
/// Database errors.
pub async fn fold(c: &mut SqliteConnection, digest_id: i64, ids: &[i64]) -> Result<()> {
    for id in ids {
        sqlx::query("UPDATE outbox SET digest_id = ? WHERE id = ?")
            .bind(digest_id)
            .bind(id)
            .execute(&mut *c)
            .await?;
    }
    Ok(())
}

/// Counts an attempt before it is made: a crash during the call leaves the count, and a
/// PlanFix post whose fate is unknown is looked up before it is tried again.
///
/// # Errors
/// Database errors.
pub async fn attempt(c: &mut SqliteConnection, id: i64) -> Result<()> {
    sqlx::query("UPDATE outbox SET attempts = attempts + 1 WHERE id = ?")
        .bind(id)
        .execute(&mut *c)
        .await?;
    Ok(())
}

/// Delivered: the row and the messages it carries (a digest's).
///
/// # Errors
/// Database errors.
pub async fn sent(c: &mut SqliteConnection, id: i64, remote_id: &str, now: i64) -> Result<()> {
    sqlx::query(
        "UPDATE outbox SET state = 'sent', remote_id = ?, sent_at = ?, last_error = NULL
         WHERE id = ? OR digest_id = ?",
    )
    .bind(remote_id)
    .bind(now)
    .bind(id)
    .bind(id)
    .execute(&mut *c)
    .await?;
    Ok(())
}

/// Not delivered this time: tried again at `next_at`.
///
/// # Errors
/// Database errors.
pub async fn retry(c: &mut SqliteConnection, id: i64, next_at: i64, error: &str) -> Result<()> {
    sqlx::query("UPDATE outbox SET next_at = ?, last_error = ? WHERE id = ?")
        .bind(next_at)
        .bind(error)
        .bind(id)
        .execute(&mut *c)
        .await?;
    Ok(())
}

/// Refused for good: the row and the messages it carries.
///
/// # Errors
/// Database errors.
pub async fn failed(c: &mut SqliteConnection, id: i64, error: &str) -> Result<()> {
    sqlx::query("UPDATE outbox SET state = 'failed', last_error = ? WHERE id = ? OR digest_id = ?")
        .bind(error)
        .bind(id)
        .bind(id)
        .execute(&mut *c)
        .await?;
    Ok(())
}

/// Records what became of what a message asked ("accepted", the answer given). The messages
/// about `question_id`, or the `ready` messages of `line_id`.
///
/// # Errors
/// Database errors.
pub async fn resolve(
    c: &mut SqliteConnection,
    about: About<'_>,
    resolved: &str,
) -> Result<Vec<OutboxRow>> {
    let (sql, key) = match about {
        About::Question(q) => (
            "UPDATE outbox SET resolved = ? WHERE channel = 'telegram' AND kind = 'question'
                AND question_id = ? RETURNING *",
            q,
        ),
        About::Ready(l) => (
            "UPDATE outbox SET resolved = ? WHERE channel = 'telegram' AND kind = 'ready'
                AND line_id = ? RETURNING *",
            l,
        ),
    };
    Ok(sqlx::query(sql)
        .bind(resolved)
        .bind(key)
        .try_map(|r| row(&r))
        .fetch_all(&mut *c)
        .await?)
}

/// What a resolution is about.
#[derive(Debug, Clone, Copy)]
pub enum About<'a> {
    Question(&'a str),
    Ready(&'a str),
}

/// The Telegram rows (a message or a digest) that went out as message `message_id`.
///
/// # Errors
/// Database errors.
pub async fn by_message(c: &mut SqliteConnection, message_id: i64) -> Result<Vec<OutboxRow>> {
    let rows: Vec<OutboxRow> = sqlx::query(
        "SELECT o.* FROM outbox o, json_each(o.remote_id) m
         WHERE o.channel = 'telegram' AND o.state = 'sent' AND o.kind != 'edit'
            AND json_valid(o.remote_id) AND m.value = ?
         ORDER BY o.id",
    )
    .bind(message_id)
    .try_map(|r| row(&r))
    .fetch_all(&mut *c)
    .await?;
    Ok(rows)
}

/// The PlanFix reports written for a line so far.
///
/// # Errors
/// Database errors.
pub async fn reports_of(c: &mut SqliteConnection, line_id: &str) -> Result<i64> {
    Ok(sqlx::query_scalar(
        "SELECT COUNT(*) FROM outbox WHERE channel = 'planfix' AND kind = 'report' AND line_id = ?",
    )
    .bind(line_id)
    .fetch_one(&mut *c)
    .await?)
}

/// Pending rows first, then the newest others; at most `limit`.
///
/// # Errors
/// Database errors.
pub async fn list(c: &mut SqliteConnection, limit: i64) -> Result<Vec<OutboxRow>> {
    Ok(sqlx::query(
        "SELECT * FROM outbox ORDER BY (state = 'pending') DESC,
            CASE WHEN state = 'pending' THEN id ELSE -id END LIMIT ?",
    )
    .bind(limit)
    .try_map(|r| row(&r))
    .fetch_all(&mut *c)
    .await?)
}

/// How many rows are in each state: (pending, sent, failed).
///
/// # Errors
/// Database errors.
pub async fn counts(c: &mut SqliteConnection) -> Result<(i64, i64, i64)> {
    Ok(sqlx::query_as(
        "SELECT COALESCE(SUM(state = 'pending'), 0), COALESCE(SUM(state = 'sent'), 0),
            COALESCE(SUM(state = 'failed'), 0) FROM outbox",
    )
    .fetch_one(&mut *c)
    .await?)
}

/// Replaces what a row says (a test message names its own row).
///
/// # Errors
/// Database errors.
pub async fn set_body(c: &mut SqliteConnection, id: i64, body: &serde_json::Value) -> Result<()> {
    sqlx::query("UPDATE outbox SET body = ? WHERE id = ?")
        .bind(body.to_string())
        .bind(id)
        .execute(&mut *c)
        .await?;
    Ok(())
}

/// Holds a message for the night's digest (written by day, not delivered before night came).
///
/// # Errors
/// Database errors.
pub async fn hold(c: &mut SqliteConnection, id: i64) -> Result<()> {
    sqlx::query("UPDATE outbox SET held = 1 WHERE id = ?")
        .bind(id)
        .execute(&mut *c)
        .await?;
    Ok(())
}

/// The message ids a message in parts went out as so far (a retry sends only the rest).
///
/// # Errors
/// Database errors.
pub async fn set_remote(c: &mut SqliteConnection, id: i64, remote_id: &str) -> Result<()> {
    sqlx::query("UPDATE outbox SET remote_id = ? WHERE id = ?")
        .bind(remote_id)
        .bind(id)
        .execute(&mut *c)
        .await?;
    Ok(())
}
