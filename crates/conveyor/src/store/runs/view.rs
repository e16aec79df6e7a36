//! A line's runs as the API shows them, with where each one's stream-json log is.

use sqlx::{Row as _, SqliteConnection};

use super::*;

/// A run as `GET /api/lines/{id}/runs` shows it, with where its stream-json log is.
#[derive(Debug, Clone)]
pub struct RunView {
    pub run: conveyor_api::Run,
    pub log_path: Option<String>,
    /// The line's worktree, where the run's CLI ran.
    pub worktree: Option<String>,
}

const RUN_VIEW: &str = "SELECT runs.id, steps.n AS step_n, runs.kind, runs.attempt,
        COALESCE(steps.session_id, lines.session_id) AS session_id, runs.started_at,
        runs.finished_at, runs.cost_usd, runs.outcome, runs.log_path, lines.worktree
    FROM runs JOIN steps ON steps.id = runs.step_id JOIN lines ON lines.id = runs.line_id";

fn run_view(r: &sqlx::sqlite::SqliteRow) -> std::result::Result<RunView, sqlx::Error> {
    let outcome: RunOutcome = column(r, "outcome")?;
    let started: i64 = r.try_get("started_at")?;
    let finished: Option<i64> = r.try_get("finished_at")?;
    Ok(RunView {
        run: conveyor_api::Run {
            id: r.try_get("id")?,
            step_n: u32::try_from(r.try_get::<i64, _>("step_n")?).unwrap_or(0),
            kind: column(r, "kind")?,
            attempt: u32::try_from(r.try_get::<i64, _>("attempt")?).unwrap_or(0),
            session_id: r.try_get("session_id")?,
            started_at: rfc3339(started),
            ended_at: finished.map(rfc3339),
            cost_usd: r.try_get("cost_usd")?,
            // The two lists hold the same names (a test in this file holds them to it).
            outcome: conveyor_api::RunOutcome::parse(outcome.as_str())
                .unwrap_or(conveyor_api::RunOutcome::Interrupted),
            // The daemon's state knows how; the API handler fills it in.
            resume: None,
        },
        log_path: r.try_get("log_path")?,
        worktree: r.try_get("worktree")?,
    })
}

/// A line's runs, oldest first.
///
/// # Errors
/// Database errors.
pub async fn of_line(c: &mut SqliteConnection, line_id: &str) -> Result<Vec<RunView>> {
    let rows = sqlx::query(&format!(
        "{RUN_VIEW} WHERE runs.line_id = ? ORDER BY runs.id"
    ))
    .bind(line_id)
    .fetch_all(&mut *c)
    .await?;
    Ok(rows
        .iter()
        .map(run_view)
        .collect::<std::result::Result<_, _>>()?)
}

/// One run.
///
/// # Errors
/// Database errors.
pub async fn view(c: &mut SqliteConnection, id: i64) -> Result<Option<RunView>> {
    let row = sqlx::query(&format!("{RUN_VIEW} WHERE runs.id = ?"))
        .bind(id)
        .fetch_optional(&mut *c)
        .await?;
    Ok(row.as_ref().map(run_view).transpose()?)
}

#[cfg(test)]
mod view_tests {
    use super::RunOutcome;

    #[test]
    fn stored_outcomes_are_the_wire_outcomes() {
        for o in RunOutcome::ALL {
            assert_eq!(
                conveyor_api::RunOutcome::parse(o.as_str()).map(|w| w.as_str()),
                Some(o.as_str())
            );
        }
        assert_eq!(conveyor_api::RunOutcome::ALL.len(), RunOutcome::ALL.len());
    }
}
