//! The decisions catalogue: what was decided without Anton. It is read from two tables, the
//! agents' `decided` journal entries and the questions decided by default.

use conveyor_api as api;
use sqlx::{Row, SqliteConnection};

use super::row::OPEN_LINE;
use crate::error::Result;
use crate::store::names::column;
use crate::store::sql::rfc3339;

/// The decisions taken without Anton, newest first, of one project or all: the agents'
/// `decided` entries (the daemon's own notes among them, `conveyor: …`) and the forks and
/// questions decided by default. `open_only` keeps those of lines not accepted or cancelled.
///
/// # Errors
/// Database errors.
pub async fn decisions(
    c: &mut SqliteConnection,
    project_id: Option<&str>,
    open_only: bool,
    limit: i64,
) -> Result<Vec<api::Decision>> {
    let open = if open_only {
        format!("AND {OPEN_LINE}")
    } else {
        String::new()
    };
    let project = if project_id.is_some() {
        "AND l.project_id = ?1"
    } else {
        "AND (?1 IS NULL)"
    };
    let rows = sqlx::query(&format!(
        "SELECT * FROM (
            SELECT 'journal-' || j.id AS id, l.project_id, j.line_id,
                CASE WHEN j.text LIKE 'conveyor: %' THEN 'daemon' ELSE 'agent' END AS source,
                j.text, j.why, NULL AS question_id, '[]' AS options, NULL AS default_opt,
                j.created_at
            FROM journal j JOIN lines l ON l.id = j.line_id
            WHERE j.kind = 'decided' {project} {open}
          UNION ALL
            SELECT q.id, l.project_id, q.line_id, COALESCE(q.decided_by, 'agent') AS source,
                j.text, COALESCE(q.verdict_why, j.why) AS why, q.id AS question_id, j.options,
                j.default_opt, q.created_at
            FROM questions q JOIN journal j ON j.id = q.journal_id JOIN lines l ON l.id = q.line_id
            WHERE q.status = 'decided' {project} {open}
        ) ORDER BY created_at DESC, id LIMIT ?2"
    ))
    .bind(project_id)
    .bind(limit)
    .fetch_all(&mut *c)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(api::Decision {
                id: r.try_get("id")?,
                project_id: r.try_get("project_id")?,
                line_id: r.try_get("line_id")?,
                source: column(r, "source")?,
                text: r.try_get::<Option<String>, _>("text")?.unwrap_or_default(),
                why: r.try_get("why")?,
                question_id: r.try_get("question_id")?,
                options: serde_json::from_str(&r.try_get::<String, _>("options")?)
                    .unwrap_or_default(),
                default: r.try_get("default_opt")?,
                created_at: rfc3339(r.try_get("created_at")?),
            })
        })
        .collect::<std::result::Result<_, sqlx::Error>>()
        .map_err(Into::into)
}
