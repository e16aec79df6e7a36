//! How a question is written and judged: the agent's, as the journal's ingestion finds it,
//! with the judge's verdict on it or its trip back to the line's session; or the daemon's own,
//! validated as it is asked.

use conveyor_api::{self as api, DecisionSource, QuestionKind, QuestionStatus};
use sqlx::SqliteConnection;

use crate::error::Result;
use crate::store::journal;
use crate::store::names::Stored;

/// A new unvalidated question for the journal entry `journal_id`, written by `step_id`;
/// returns its id.
///
/// # Errors
/// Database errors.
pub async fn insert(
    c: &mut SqliteConnection,
    line_id: &str,
    journal_id: i64,
    kind: QuestionKind,
    step_id: Option<&str>,
    now: i64,
) -> Result<String> {
    let id = uuid::Uuid::new_v4().to_string();
    sqlx::query(
        "INSERT INTO questions (id, line_id, journal_id, status, created_at, kind, from_step)
         VALUES (?, ?, ?, 'unvalidated', ?, ?, ?)",
    )
    .bind(&id)
    .bind(line_id)
    .bind(journal_id)
    .bind(now)
    .bind(kind.name())
    .bind(step_id)
    .execute(&mut *c)
    .await?;
    Ok(id)
}

/// Where a question now stands, who decided it and why.
#[derive(Debug, Clone)]
pub struct Verdict<'a> {
    pub status: QuestionStatus,
    pub by: DecisionSource,
    pub why: &'a str,
    pub duplicate_of: Option<&'a str>,
    pub urgent: bool,
    pub now: i64,
}

/// Records a verdict on an unvalidated question; `false` when it was no longer unvalidated
/// (judged already: a verdict is never applied twice).
///
/// # Errors
/// Database errors.
pub async fn set_verdict(c: &mut SqliteConnection, id: &str, v: &Verdict<'_>) -> Result<bool> {
    let validated = (v.status == QuestionStatus::Validated).then_some(v.now);
    let done = sqlx::query(
        "UPDATE questions SET status = ?, decided_by = ?, verdict_why = ?, duplicate_of = ?,
            urgent = ?, validated_at = COALESCE(?, validated_at)
         WHERE id = ? AND status = 'unvalidated'",
    )
    .bind(v.status.name())
    .bind(v.by.name())
    .bind(v.why)
    .bind(v.duplicate_of)
    .bind(v.urgent)
    .bind(validated)
    .bind(id)
    .execute(&mut *c)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// Sends unvalidated questions back to the line's session: `rework`, carried by `step_id`.
///
/// # Errors
/// Database errors.
pub async fn send_to_rework(
    c: &mut SqliteConnection,
    id: &str,
    by: DecisionSource,
    why: &str,
    step_id: &str,
) -> Result<()> {
    sqlx::query(
        "UPDATE questions SET status = 'rework', decided_by = ?, verdict_why = ?, rework_step = ?
         WHERE id = ? AND status = 'unvalidated'",
    )
    .bind(by.name())
    .bind(why)
    .bind(step_id)
    .bind(id)
    .execute(&mut *c)
    .await?;
    Ok(())
}

/// The rework step `step_id` is done: the questions it carried are judged again, now as
/// coming from it (its reads count for the memory rule).
///
/// # Errors
/// Database errors.
pub async fn reworked(c: &mut SqliteConnection, step_id: &str) -> Result<()> {
    sqlx::query(
        "UPDATE questions SET status = 'unvalidated', decided_by = NULL, reworks = reworks + 1,
            from_step = rework_step, rework_step = NULL
         WHERE rework_step = ? AND status = 'rework'",
    )
    .bind(step_id)
    .execute(&mut *c)
    .await?;
    Ok(())
}

/// A question the daemon asks Anton itself.
#[derive(Debug, Clone)]
pub struct DaemonQuestion<'a> {
    pub text: &'a str,
    pub options: &'a [String],
    pub default: Option<&'a str>,
    /// Why it is asked (the entry's `why`).
    pub why: &'a str,
    pub reversible: bool,
    pub expensive: bool,
    /// Why it is validated without a judge (the verdict's `why`).
    pub validated: &'a str,
    /// Irreversible and expensive, by day: it goes to the Catcher.
    pub urgent: bool,
}

/// Writes `q` into the line's journal (below the agent's entries) and as a question validated
/// by the daemon, in the caller's transaction; returns its id.
///
/// # Errors
/// Database errors.
pub async fn ask_as_daemon(
    c: &mut SqliteConnection,
    line_id: &str,
    q: &DaemonQuestion<'_>,
    now: i64,
) -> Result<Option<String>> {
    let raw = serde_json::json!({"kind": "question", "text": q.text, "options": q.options,
        "default": q.default, "why": q.why, "reversible": q.reversible, "expensive": q.expensive})
    .to_string();
    let offset = journal::next_daemon_offset(c, line_id).await?;
    let at = journal::At {
        line_id,
        step_id: None,
        offset,
        now,
    };
    let entry = journal::NewEntry {
        kind: api::JournalKind::Question,
        text: q.text,
        options: q.options,
        default: q.default,
        why: Some(q.why),
        reversible: Some(q.reversible),
        expensive: Some(q.expensive),
        raw: &raw,
    };
    let Some(journal_id) = journal::insert(c, at, entry).await? else {
        return Ok(None);
    };
    let id = insert(
        c,
        line_id,
        journal_id,
        api::QuestionKind::Question,
        None,
        now,
    )
    .await?;
    set_verdict(
        c,
        &id,
        &Verdict {
            status: QuestionStatus::Validated,
            by: api::DecisionSource::Daemon,
            why: q.validated,
            duplicate_of: None,
            urgent: q.urgent,
            now,
        },
    )
    .await?;
    Ok(Some(id))
}
