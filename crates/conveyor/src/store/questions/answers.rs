//! Anton's answer to a question, from the morning page until the line's `answer` step has
//! carried it to the agent: while no step has started since, it may still change or be taken
//! back.

use sqlx::SqliteConnection;

use super::row::{CHANGEABLE, QuestionRow, SELECT};
use crate::error::Result;

/// Records Anton's answer (to be delivered by the line's `answer` step), the status before it
/// kept to return to; `false` when the question is answered already and its answer can no
/// longer change (checked in the same statement, so a step starting meanwhile cannot slip in
/// between).
///
/// # Errors
/// Database errors.
pub async fn answer(c: &mut SqliteConnection, id: &str, text: &str, now: i64) -> Result<bool> {
    let done = sqlx::query(&format!(
        "UPDATE questions AS q SET
            prior_status = CASE WHEN q.status = 'answered' THEN q.prior_status ELSE q.status END,
            status = 'answered', answer = ?, answered_at = ?, delivered = 0,
            validated_at = COALESCE(q.validated_at, ?)
         WHERE q.id = ? AND (q.status IN ('validated', 'decided', 'duplicate') OR {CHANGEABLE})"
    ))
    .bind(text)
    .bind(now)
    .bind(now)
    .bind(id)
    .execute(&mut *c)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// Takes an answer back: the question is as it was before it was answered.
///
/// # Errors
/// Database errors.
pub async fn take_back(c: &mut SqliteConnection, id: &str) -> Result<bool> {
    let done = sqlx::query(&format!(
        "UPDATE questions AS q SET status = COALESCE(q.prior_status, 'validated'),
            prior_status = NULL, answer = NULL, answered_at = NULL, delivered = 0
         WHERE q.id = ? AND {CHANGEABLE}"
    ))
    .bind(id)
    .execute(&mut *c)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// The questions that got the answer of `id` with it (its duplicates), undelivered.
///
/// # Errors
/// Database errors.
pub async fn answered_with(c: &mut SqliteConnection, id: &str) -> Result<Vec<QuestionRow>> {
    Ok(sqlx::query_as(&format!(
        "{SELECT} WHERE q.duplicate_of = ? AND q.status = 'answered' AND q.delivered = 0"
    ))
    .bind(id)
    .fetch_all(&mut *c)
    .await?)
}

/// An answer on its way to the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undelivered {
    /// The question's id.
    pub id: String,
    pub question: String,
    pub answer: String,
}

/// The line's answers not yet given to the agent, oldest first.
///
/// # Errors
/// Database errors.
pub async fn undelivered_answers(
    c: &mut SqliteConnection,
    line_id: &str,
) -> Result<Vec<Undelivered>> {
    let rows: Vec<(String, Option<String>, String)> = sqlx::query_as(
        "SELECT q.id, j.text, q.answer FROM questions q JOIN journal j ON j.id = q.journal_id
         WHERE q.line_id = ? AND q.status = 'answered' AND q.delivered = 0 AND q.answer IS NOT NULL
         ORDER BY q.answered_at",
    )
    .bind(line_id)
    .fetch_all(&mut *c)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, q, a)| Undelivered {
            id,
            question: q.unwrap_or_default(),
            answer: a,
        })
        .collect())
}

/// These answers reached the agent (the step whose prompt carried them succeeded). Only these:
/// an answer given while that step ran was not in its prompt, and waits for the next.
///
/// # Errors
/// Database errors.
pub async fn mark_delivered(c: &mut SqliteConnection, ids: &[String]) -> Result<()> {
    for id in ids {
        sqlx::query("UPDATE questions SET delivered = 1 WHERE id = ? AND status = 'answered'")
            .bind(id)
            .execute(&mut *c)
            .await?;
    }
    Ok(())
}
