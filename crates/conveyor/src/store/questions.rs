//! `questions`: the journal's questions with where each stands (unvalidated, validated,
//! answered, …) and Anton's answer, until the line's next step delivers it to the agent.

use conveyor_api::{self as api, QuestionStatus};
use sqlx::sqlite::SqliteRow;
use sqlx::{FromRow, Row, SqliteConnection};

use super::journal::Said;
use super::names::column;
use super::{now_ms, rfc3339};
use crate::Result;

/// A question with its journal entry and its line's project.
#[derive(Debug, Clone)]
pub struct QuestionRow {
    pub id: String,
    pub line_id: String,
    pub project_id: String,
    /// What its journal entry says.
    pub said: Said,
    pub status: QuestionStatus,
    pub answer: Option<String>,
    pub created_at: i64,
}

impl FromRow<'_, SqliteRow> for QuestionRow {
    fn from_row(r: &SqliteRow) -> Result<Self, sqlx::Error> {
        Ok(QuestionRow {
            id: r.try_get("id")?,
            line_id: r.try_get("line_id")?,
            project_id: r.try_get("project_id")?,
            said: Said::from_row(r)?,
            status: column(r, "status")?,
            answer: r.try_get("answer")?,
            created_at: r.try_get("created_at")?,
        })
    }
}

impl QuestionRow {
    pub fn to_api(&self) -> api::Question {
        api::Question {
            id: self.id.clone(),
            line_id: self.line_id.clone(),
            project_id: self.project_id.clone(),
            text: self.said.text.clone().unwrap_or_default(),
            options: self.said.options(),
            default: self.said.default_opt.clone(),
            why: self.said.why.clone(),
            reversible: self.said.reversible,
            expensive: self.said.expensive,
            status: self.status,
            answer: self.answer.clone(),
            created_at: rfc3339(self.created_at),
        }
    }
}

const SELECT: &str = "SELECT q.id, q.line_id, l.project_id, j.text, j.options,
        j.default_opt, j.why, j.reversible, j.expensive, q.status, q.answer, q.created_at
    FROM questions q JOIN journal j ON j.id = q.journal_id JOIN lines l ON l.id = q.line_id";

/// A new unvalidated question for the journal entry `journal_id`.
///
/// # Errors
/// Database errors.
pub async fn insert(
    c: &mut SqliteConnection,
    line_id: &str,
    journal_id: i64,
    now: i64,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO questions (id, line_id, journal_id, status, created_at)
         VALUES (?, ?, ?, 'unvalidated', ?)",
    )
    .bind(uuid::Uuid::new_v4().to_string())
    .bind(line_id)
    .bind(journal_id)
    .bind(now)
    .execute(&mut *c)
    .await?;
    Ok(())
}

/// One question.
///
/// # Errors
/// Database errors.
pub async fn get(c: &mut SqliteConnection, id: &str) -> Result<Option<QuestionRow>> {
    Ok(sqlx::query_as(&format!("{SELECT} WHERE q.id = ?"))
        .bind(id)
        .fetch_optional(&mut *c)
        .await?)
}

/// The questions the morning page lists: open or answered, of lines not yet accepted or
/// cancelled, oldest first.
///
/// # Errors
/// Database errors.
pub async fn for_review(c: &mut SqliteConnection) -> Result<Vec<QuestionRow>> {
    Ok(sqlx::query_as(&format!(
        "{SELECT} WHERE q.status IN ('unvalidated', 'validated', 'answered')
           AND l.state NOT IN ('accepted', 'cancelled') ORDER BY q.created_at"
    ))
    .fetch_all(&mut *c)
    .await?)
}

/// Records Anton's answer (to be delivered by the line's next step).
///
/// # Errors
/// Database errors.
pub async fn answer(c: &mut SqliteConnection, id: &str, text: &str) -> Result<()> {
    sqlx::query(
        "UPDATE questions SET status = 'answered', answer = ?, answered_at = ?, delivered = 0 WHERE id = ?",
    )
    .bind(text)
    .bind(now_ms())
    .bind(id)
    .execute(&mut *c)
    .await?;
    Ok(())
}

/// `(question, answer)` of the line's answers not yet given to the agent.
///
/// # Errors
/// Database errors.
pub async fn undelivered_answers(
    c: &mut SqliteConnection,
    line_id: &str,
) -> Result<Vec<(String, String)>> {
    let rows: Vec<(Option<String>, String)> = sqlx::query_as(
        "SELECT j.text, q.answer FROM questions q JOIN journal j ON j.id = q.journal_id
         WHERE q.line_id = ? AND q.status = 'answered' AND q.delivered = 0 AND q.answer IS NOT NULL",
    )
    .bind(line_id)
    .fetch_all(&mut *c)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(q, a)| (q.unwrap_or_default(), a))
        .collect())
}

/// The line's answers reached the agent (its step succeeded).
///
/// # Errors
/// Database errors.
pub async fn mark_delivered(c: &mut SqliteConnection, line_id: &str) -> Result<()> {
    sqlx::query("UPDATE questions SET delivered = 1 WHERE line_id = ? AND status = 'answered'")
        .bind(line_id)
        .execute(&mut *c)
        .await?;
    Ok(())
}
