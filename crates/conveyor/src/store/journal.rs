//! `journal`: a line's journal entries, one row per line of its journal file, keyed on the
//! entry's byte offset in the file so that ingesting twice stores nothing twice. A malformed
//! line is a row too (`valid = 0`, its `raw` text and `error`), never dropped.

use conveyor_api::{self as api, JournalKind};
use sqlx::sqlite::SqliteRow;
use sqlx::{FromRow, Row, SqliteConnection};

use super::names::{Stored, column_opt};
use super::sql::rfc3339;
use crate::error::Result;

#[derive(Debug, Clone)]
pub struct JournalRow {
    pub id: i64,
    pub line_id: String,
    pub step_id: Option<String>,
    /// `None` for a malformed line.
    pub kind: Option<JournalKind>,
    pub said: Said,
    pub valid: bool,
    pub error: Option<String>,
    pub raw: String,
    pub created_at: i64,
}

/// What an entry says — the part of a journal entry its question shows too.
#[derive(Debug, Clone)]
pub struct Said {
    pub text: Option<String>,
    /// JSON of the options.
    pub options: String,
    pub default_opt: Option<String>,
    pub why: Option<String>,
    pub reversible: Option<bool>,
    pub expensive: Option<bool>,
}

impl FromRow<'_, SqliteRow> for Said {
    fn from_row(r: &SqliteRow) -> Result<Self, sqlx::Error> {
        Ok(Said {
            text: r.try_get("text")?,
            options: r.try_get("options")?,
            default_opt: r.try_get("default_opt")?,
            why: r.try_get("why")?,
            reversible: r.try_get("reversible")?,
            expensive: r.try_get("expensive")?,
        })
    }
}

impl Said {
    pub fn options(&self) -> Vec<String> {
        serde_json::from_str(&self.options).unwrap_or_default()
    }
}

impl FromRow<'_, SqliteRow> for JournalRow {
    fn from_row(r: &SqliteRow) -> Result<Self, sqlx::Error> {
        Ok(JournalRow {
            id: r.try_get("id")?,
            line_id: r.try_get("line_id")?,
            step_id: r.try_get("step_id")?,
            kind: column_opt(r, "kind")?,
            said: Said::from_row(r)?,
            valid: r.try_get("valid")?,
            error: r.try_get("error")?,
            raw: r.try_get("raw")?,
            created_at: r.try_get("created_at")?,
        })
    }
}

impl JournalRow {
    pub fn to_api(&self) -> api::JournalEntry {
        api::JournalEntry {
            id: self.id,
            line_id: self.line_id.clone(),
            step_id: self.step_id.clone(),
            kind: self.kind,
            text: self.said.text.clone(),
            options: self.said.options(),
            default: self.said.default_opt.clone(),
            why: self.said.why.clone(),
            reversible: self.said.reversible,
            expensive: self.said.expensive,
            valid: self.valid,
            error: self.error.clone(),
            raw: self.raw.clone(),
            created_at: rfc3339(self.created_at),
        }
    }
}

const COLUMNS: &str = "j.id, j.line_id, j.step_id, j.kind, j.text, j.options, j.default_opt,
    j.why, j.reversible, j.expensive, j.valid, j.error, j.raw, j.created_at";

/// Where an entry comes from: its line, step and byte offset in the journal file.
#[derive(Debug, Clone, Copy)]
pub struct At<'a> {
    pub line_id: &'a str,
    pub step_id: Option<&'a str>,
    pub offset: i64,
    pub now: i64,
}

/// A well-formed entry.
#[derive(Debug, Clone, Copy)]
pub struct NewEntry<'a> {
    pub kind: JournalKind,
    pub text: &'a str,
    pub options: &'a [String],
    pub default: Option<&'a str>,
    pub why: Option<&'a str>,
    pub reversible: Option<bool>,
    pub expensive: Option<bool>,
    pub raw: &'a str,
}

/// Stores a well-formed entry unless one is stored at that offset; returns its id when new.
///
/// # Errors
/// Database errors.
pub async fn insert(c: &mut SqliteConnection, at: At<'_>, e: NewEntry<'_>) -> Result<Option<i64>> {
    let done = sqlx::query(
        "INSERT OR IGNORE INTO journal (line_id, step_id, offset, kind, text, options,
            default_opt, why, reversible, expensive, valid, error, raw, created_at)
         VALUES (?,?,?,?,?,?,?,?,?,?,1,NULL,?,?)",
    )
    .bind(at.line_id)
    .bind(at.step_id)
    .bind(at.offset)
    .bind(e.kind.name())
    .bind(e.text)
    .bind(serde_json::to_string(e.options).unwrap_or_else(|_| "[]".into()))
    .bind(e.default)
    .bind(e.why)
    .bind(e.reversible)
    .bind(e.expensive)
    .bind(e.raw)
    .bind(at.now)
    .execute(&mut *c)
    .await?;
    Ok((done.rows_affected() > 0).then(|| done.last_insert_rowid()))
}

/// The offset of an entry the daemon writes itself, not in the agent's file: below every other
/// (file offsets are never negative).
///
/// # Errors
/// Database errors.
pub async fn next_daemon_offset(c: &mut SqliteConnection, line_id: &str) -> Result<i64> {
    let low: i64 = sqlx::query_scalar(
        "SELECT MIN(COALESCE(MIN(offset), 0), 0) FROM journal WHERE line_id = ?",
    )
    .bind(line_id)
    .fetch_one(&mut *c)
    .await?;
    Ok(low - 1)
}

/// Whether the line's journal has an entry with exactly this text.
///
/// # Errors
/// Database errors.
pub async fn has_text(c: &mut SqliteConnection, line_id: &str, text: &str) -> Result<bool> {
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM journal WHERE line_id = ? AND text = ?")
        .bind(line_id)
        .bind(text)
        .fetch_one(&mut *c)
        .await?;
    Ok(n > 0)
}

/// How many entries of `kind` the line's journal has.
///
/// # Errors
/// Database errors.
pub async fn count_kind(
    c: &mut SqliteConnection,
    line_id: &str,
    kind: api::JournalKind,
) -> Result<i64> {
    Ok(
        sqlx::query_scalar("SELECT COUNT(*) FROM journal WHERE line_id = ? AND kind = ?")
            .bind(line_id)
            .bind(kind.name())
            .fetch_one(&mut *c)
            .await?,
    )
}

/// A `decided` entry the daemon writes itself (its text starts `conveyor: `, which makes its
/// source `daemon` in the catalogue), below the agent's entries.
///
/// # Errors
/// Database errors.
pub async fn insert_daemon_decided(
    c: &mut SqliteConnection,
    line_id: &str,
    text: &str,
    why: &str,
    now: i64,
) -> Result<()> {
    let raw = serde_json::json!({"kind": "decided", "text": text, "why": why}).to_string();
    let offset = next_daemon_offset(c, line_id).await?;
    insert(
        c,
        At {
            line_id,
            step_id: None,
            offset,
            now,
        },
        NewEntry {
            kind: api::JournalKind::Decided,
            text,
            options: &[],
            default: None,
            why: Some(why),
            reversible: Some(true),
            expensive: Some(false),
            raw: &raw,
        },
    )
    .await?;
    Ok(())
}

/// Stores a malformed line with what is wrong with it, unless one is stored at that offset;
/// returns whether it is new.
///
/// # Errors
/// Database errors.
pub async fn insert_malformed(
    c: &mut SqliteConnection,
    at: At<'_>,
    error: &str,
    raw: &str,
) -> Result<bool> {
    let done = sqlx::query(
        "INSERT OR IGNORE INTO journal (line_id, step_id, offset, valid, error, raw, created_at)
         VALUES (?,?,?,0,?,?,?)",
    )
    .bind(at.line_id)
    .bind(at.step_id)
    .bind(at.offset)
    .bind(error)
    .bind(raw)
    .bind(at.now)
    .execute(&mut *c)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// The line's last `limit` entries, oldest first.
///
/// # Errors
/// Database errors.
pub async fn recent(
    c: &mut SqliteConnection,
    line_id: &str,
    limit: i64,
) -> Result<Vec<JournalRow>> {
    let mut rows: Vec<JournalRow> = sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM journal j WHERE j.line_id = ? ORDER BY j.id DESC LIMIT ?"
    ))
    .bind(line_id)
    .bind(limit)
    .fetch_all(&mut *c)
    .await?;
    rows.reverse();
    Ok(rows)
}
