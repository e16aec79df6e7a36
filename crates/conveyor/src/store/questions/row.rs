//! How a question is read: its row (with its journal entry and its line's project) and the
//! queries the judge, the scheduler and the morning page ask of it.

use conveyor_api::{self as api, DecisionSource, QuestionKind, QuestionStatus};
use sqlx::sqlite::SqliteRow;
use sqlx::{FromRow, Row, SqliteConnection};

use crate::error::Result;
use crate::store::journal::Said;
use crate::store::names::{Stored, column, column_opt};
use crate::store::sql::rfc3339;
use conveyor_core::text::normalise;

/// A question with its journal entry and its line's project.
#[derive(Debug, Clone)]
pub struct QuestionRow {
    pub id: String,
    pub line_id: String,
    pub project_id: String,
    pub kind: QuestionKind,
    /// What its journal entry says.
    pub said: Said,
    pub status: QuestionStatus,
    pub decided_by: Option<DecisionSource>,
    pub verdict_why: Option<String>,
    pub duplicate_of: Option<String>,
    pub urgent: bool,
    pub reworks: i64,
    /// The step whose reads count for the memory rule.
    pub from_step: Option<String>,
    pub answer: Option<String>,
    /// The answer can still be changed or taken back: no `answer` step of its line that
    /// would carry it has started.
    pub changeable: bool,
    pub created_at: i64,
    pub validated_at: Option<i64>,
    pub answered_at: Option<i64>,
}

impl FromRow<'_, SqliteRow> for QuestionRow {
    fn from_row(r: &SqliteRow) -> Result<Self, sqlx::Error> {
        Ok(QuestionRow {
            id: r.try_get("id")?,
            line_id: r.try_get("line_id")?,
            project_id: r.try_get("project_id")?,
            kind: column(r, "qkind")?,
            said: Said::from_row(r)?,
            status: column(r, "status")?,
            decided_by: column_opt(r, "decided_by")?,
            verdict_why: r.try_get("verdict_why")?,
            duplicate_of: r.try_get("duplicate_of")?,
            urgent: r.try_get("urgent")?,
            reworks: r.try_get("reworks")?,
            from_step: r.try_get("from_step")?,
            answer: r.try_get("answer")?,
            changeable: r.try_get("changeable")?,
            created_at: r.try_get("created_at")?,
            validated_at: r.try_get("validated_at")?,
            answered_at: r.try_get("answered_at")?,
        })
    }
}

impl QuestionRow {
    /// The text as compared for duplicates: case, spacing and closing punctuation aside.
    pub fn normalised(&self) -> String {
        normalise(self.said.text.as_deref().unwrap_or_default())
    }

    pub fn to_api(&self) -> api::Question {
        api::Question {
            id: self.id.clone(),
            line_id: self.line_id.clone(),
            project_id: self.project_id.clone(),
            kind: self.kind,
            text: self.said.text.clone().unwrap_or_default(),
            options: self.said.options(),
            default: self.said.default_opt.clone(),
            why: self.said.why.clone(),
            reversible: self.said.reversible,
            expensive: self.said.expensive,
            status: self.status,
            decided_by: self.decided_by,
            verdict_why: self.verdict_why.clone(),
            duplicate_of: self.duplicate_of.clone(),
            urgent: self.urgent,
            reworks: u32::try_from(self.reworks).unwrap_or(0),
            answer: self.answer.clone(),
            changeable: self.changeable,
            created_at: rfc3339(self.created_at),
            validated_at: self.validated_at.map(rfc3339),
            answered_at: self.answered_at.map(rfc3339),
        }
    }
}

/// Whether an answered question's answer may still change: no attempt of a step of its line
/// (a judge's aside, which is never told answers) has started since it was given — every step
/// reads the undelivered answers right after its attempt starts (`q` is the question's alias).
/// A macro, so that [`SELECT`] can be one constant.
macro_rules! changeable {
    () => {
        "(q.status = 'answered' AND q.delivered = 0 AND NOT EXISTS (
            SELECT 1 FROM steps s WHERE s.line_id = q.line_id AND s.kind != 'judge'
              AND s.started_at >= q.answered_at))"
    };
}

pub(super) const CHANGEABLE: &str = changeable!();

pub(super) const SELECT: &str = concat!(
    "SELECT q.id, q.line_id, l.project_id, q.kind AS qkind, j.text, j.options,
        j.default_opt, j.why, j.reversible, j.expensive, q.status, q.decided_by, q.verdict_why,
        q.duplicate_of, q.urgent, q.reworks, q.from_step, q.answer, q.delivered, q.created_at,
        q.validated_at, q.answered_at, ",
    changeable!(),
    " AS changeable
    FROM questions q JOIN journal j ON j.id = q.journal_id JOIN lines l ON l.id = q.line_id"
);

/// Lines whose questions still matter: not accepted, not cancelled.
pub(super) const OPEN_LINE: &str = "l.state NOT IN ('accepted', 'cancelled')";

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

/// The line's questions in one of `statuses`, oldest first.
///
/// # Errors
/// Database errors.
pub async fn of_line(
    c: &mut SqliteConnection,
    line_id: &str,
    statuses: &[QuestionStatus],
) -> Result<Vec<QuestionRow>> {
    Ok(sqlx::query_as(&format!(
        "{SELECT} WHERE q.line_id = ? AND q.status IN ({}) ORDER BY q.created_at, j.id",
        in_list(statuses)
    ))
    .bind(line_id)
    .fetch_all(&mut *c)
    .await?)
}

/// How many of the line's questions are in one of `statuses` (a count for the scheduler's
/// every pass, not the rows).
///
/// # Errors
/// Database errors.
pub async fn count_of_line(
    c: &mut SqliteConnection,
    line_id: &str,
    statuses: &[QuestionStatus],
) -> Result<u32> {
    let n: i64 = sqlx::query_scalar(&format!(
        "SELECT COUNT(*) FROM questions WHERE line_id = ? AND status IN ({})",
        in_list(statuses)
    ))
    .bind(line_id)
    .fetch_one(&mut *c)
    .await?;
    Ok(u32::try_from(n).unwrap_or(u32::MAX))
}

/// The project's open validated questions (not answered; lines not finished), oldest first.
///
/// # Errors
/// Database errors.
pub async fn open_validated_of_project(
    c: &mut SqliteConnection,
    project_id: &str,
) -> Result<Vec<QuestionRow>> {
    Ok(sqlx::query_as(&format!(
        "{SELECT} WHERE l.project_id = ? AND q.status = 'validated' AND {OPEN_LINE}
         ORDER BY q.validated_at, j.id"
    ))
    .bind(project_id)
    .fetch_all(&mut *c)
    .await?)
}

/// The questions the morning page lists: validated or answered, of lines not yet accepted or
/// cancelled, oldest first.
///
/// # Errors
/// Database errors.
pub async fn for_review(c: &mut SqliteConnection) -> Result<Vec<QuestionRow>> {
    Ok(sqlx::query_as(&format!(
        "{SELECT} WHERE q.status IN ('validated', 'answered') AND {OPEN_LINE}
         ORDER BY q.validated_at, q.created_at, j.id"
    ))
    .fetch_all(&mut *c)
    .await?)
}

/// How many questions of open lines are in `status`.
///
/// # Errors
/// Database errors.
pub async fn count(c: &mut SqliteConnection, status: QuestionStatus) -> Result<u32> {
    let n: i64 = sqlx::query_scalar(&format!(
        "SELECT COUNT(*) FROM questions q JOIN lines l ON l.id = q.line_id
         WHERE q.status = ? AND {OPEN_LINE}"
    ))
    .bind(status.name())
    .fetch_one(&mut *c)
    .await?;
    Ok(u32::try_from(n).unwrap_or(u32::MAX))
}

/// How many forks and questions written since `since` stand in `status` or were sent back
/// (`reworks > 0`) when `status` is `rework`.
///
/// # Errors
/// Database errors.
pub async fn count_since(
    c: &mut SqliteConnection,
    status: QuestionStatus,
    since: i64,
) -> Result<u32> {
    let n: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM questions WHERE created_at >= ?
           AND (status = ? OR (? = 'rework' AND reworks > 0))",
    )
    .bind(since)
    .bind(status.name())
    .bind(status.name())
    .fetch_one(&mut *c)
    .await?;
    Ok(u32::try_from(n).unwrap_or(u32::MAX))
}

/// The questions judged duplicates of `id`, on lines not finished.
///
/// # Errors
/// Database errors.
pub async fn duplicates_of(c: &mut SqliteConnection, id: &str) -> Result<Vec<QuestionRow>> {
    Ok(sqlx::query_as(&format!(
        "{SELECT} WHERE q.duplicate_of = ? AND q.status = 'duplicate' AND {OPEN_LINE}"
    ))
    .bind(id)
    .fetch_all(&mut *c)
    .await?)
}

fn in_list(statuses: &[QuestionStatus]) -> String {
    statuses
        .iter()
        .map(|s| format!("'{}'", s.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows written before the judge existed: a dismissed question is decided, an unvalidated
    /// one is shown as asked (validated by the daemon), an answered one keeps its answer, and
    /// a fork, which had no row, gets one, decided (its default was taken).
    #[tokio::test]
    async fn old_rows_migrate() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("old.db");
        // The schema before the judge: the migrations up to 0003 only.
        let old = dir.path().join("migrations");
        std::fs::create_dir(&old).unwrap();
        let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
        for f in [
            "0001_init.sql",
            "0002_lines_order.sql",
            "0003_reason_code.sql",
        ] {
            std::fs::copy(here.join(f), old.join(f)).unwrap();
        }
        let opts = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(&db)
            .create_if_missing(true);
        let pool = sqlx::SqlitePool::connect_with(opts).await.unwrap();
        sqlx::migrate::Migrator::new(old.as_path())
            .await
            .unwrap()
            .run(&pool)
            .await
            .unwrap();
        for sql in [
            "INSERT INTO projects VALUES ('p', 'p', '/r', 'main', 0)",
            "INSERT INTO lines (id, project_id, title, task, state, session_id, branch, created_at, updated_at)
                VALUES ('l', 'p', 't', 't', 'waiting_answer', 's', 'line/l', 0, 0)",
            "INSERT INTO journal (id, line_id, step_id, offset, kind, text, valid, raw, created_at) VALUES
                (1, 'l', 'st', 0, 'question', 'dismissed one', 1, '{}', 10),
                (2, 'l', 'st', 10, 'question', 'open one', 1, '{}', 20),
                (3, 'l', 'st', 20, 'question', 'answered one', 1, '{}', 30),
                (4, 'l', 'st', 30, 'fork', 'a fork', 1, '{}', 40)",
            "INSERT INTO questions (id, line_id, journal_id, status, answer, created_at) VALUES
                ('q1', 'l', 1, 'dismissed', NULL, 10),
                ('q2', 'l', 2, 'unvalidated', NULL, 20),
                ('q3', 'l', 3, 'answered', 'yes', 30)",
        ] {
            sqlx::query(sql).execute(&pool).await.unwrap();
        }
        pool.close().await;

        let store = crate::store::Store::open(&db).await.unwrap();
        let rows = of_line(&mut store.conn().await.unwrap(), "l", QuestionStatus::ALL)
            .await
            .unwrap();
        let got: Vec<(&str, QuestionKind, QuestionStatus, Option<DecisionSource>)> = rows
            .iter()
            .map(|q| {
                (
                    q.said.text.as_deref().unwrap(),
                    q.kind,
                    q.status,
                    q.decided_by,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    "dismissed one",
                    QuestionKind::Question,
                    QuestionStatus::Decided,
                    Some(DecisionSource::Daemon)
                ),
                (
                    "open one",
                    QuestionKind::Question,
                    QuestionStatus::Validated,
                    Some(DecisionSource::Daemon)
                ),
                (
                    "answered one",
                    QuestionKind::Question,
                    QuestionStatus::Answered,
                    None
                ),
                (
                    "a fork",
                    QuestionKind::Fork,
                    QuestionStatus::Decided,
                    Some(DecisionSource::Agent)
                ),
            ]
        );
        assert_eq!(rows[1].validated_at, Some(20));
        assert_eq!(rows[2].answer.as_deref(), Some("yes"));
        assert!(rows.iter().all(|q| q.from_step.as_deref() == Some("st")));
    }
}
