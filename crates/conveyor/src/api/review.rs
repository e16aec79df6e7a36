//! `/api/review` (the morning page) and `/api/questions/{id}/answer`.

use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use conveyor_api::{Answer, EventKind, Question, Review, ReviewProject};

use super::{ApiError, AppState};
use crate::events::EventBody;
use crate::store::{JournalRow, QUESTION_SELECT, QuestionRow, now_ms};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/review", get(review))
        .route("/api/questions/{id}/answer", post(answer))
}

/// Until the judge exists, every open question is in the `unvalidated` bucket. Answered
/// questions stay listed (as answered) until their line is accepted or cancelled.
#[utoipa::path(get, path = "/api/review", responses((status = 200, body = Review)))]
async fn review(State(st): State<AppState>) -> Result<Json<Review>, ApiError> {
    let projects = st.store.projects().await?;
    let questions: Vec<QuestionRow> = sqlx::query_as(&format!(
        "{QUESTION_SELECT} WHERE q.status IN ('unvalidated', 'validated', 'answered') AND l.state NOT IN ('accepted', 'cancelled') ORDER BY q.created_at"
    ))
    .fetch_all(&st.store.pool)
    .await?;
    let decided: Vec<(String, JournalRow)> = sqlx::query_as::<_, JournalRowWithProject>(
        "SELECT l.project_id, j.id, j.line_id, j.step_id, j.kind, j.text, j.options, j.default_opt,
            j.why, j.reversible, j.expensive, j.valid, j.error, j.raw, j.created_at
         FROM journal j JOIN lines l ON l.id = j.line_id
         WHERE j.kind = 'decided' AND l.state NOT IN ('accepted', 'cancelled') ORDER BY j.id",
    )
    .fetch_all(&st.store.pool)
    .await?
    .into_iter()
    .map(|r| (r.project_id.clone(), r.into_row()))
    .collect();
    let mut out = Vec::new();
    for p in projects {
        let mine: Vec<Question> = questions
            .iter()
            .filter(|q| q.project_id == p.id)
            .map(QuestionRow::to_api)
            .collect();
        let (answered, open): (Vec<Question>, Vec<Question>) = mine
            .into_iter()
            .partition(|q| q.status == conveyor_api::QuestionStatus::Answered);
        let (questions, unvalidated): (Vec<Question>, Vec<Question>) = open
            .into_iter()
            .partition(|q| q.status == conveyor_api::QuestionStatus::Validated);
        let decided = decided
            .iter()
            .filter(|(pid, _)| *pid == p.id)
            .map(|(_, j)| j.to_api())
            .collect::<Vec<_>>();
        if questions.is_empty()
            && unvalidated.is_empty()
            && answered.is_empty()
            && decided.is_empty()
        {
            continue;
        }
        out.push(ReviewProject {
            project_id: p.id,
            name: p.name,
            questions,
            unvalidated,
            answered,
            decided,
        });
    }
    Ok(Json(Review { projects: out }))
}

#[derive(sqlx::FromRow)]
struct JournalRowWithProject {
    project_id: String,
    id: i64,
    line_id: String,
    step_id: Option<String>,
    kind: Option<String>,
    text: Option<String>,
    options: String,
    default_opt: Option<String>,
    why: Option<String>,
    reversible: Option<bool>,
    expensive: Option<bool>,
    valid: bool,
    error: Option<String>,
    raw: String,
    created_at: i64,
}

impl JournalRowWithProject {
    fn into_row(self) -> JournalRow {
        JournalRow {
            id: self.id,
            line_id: self.line_id,
            step_id: self.step_id,
            kind: self.kind,
            text: self.text,
            options: self.options,
            default_opt: self.default_opt,
            why: self.why,
            reversible: self.reversible,
            expensive: self.expensive,
            valid: self.valid,
            error: self.error,
            raw: self.raw,
            created_at: self.created_at,
        }
    }
}

/// Records Anton's answer; the line's next step carries it to the agent in the same session.
#[utoipa::path(post, path = "/api/questions/{id}/answer", request_body = Answer,
    responses((status = 200, body = Question), (status = 400, body = conveyor_api::ApiErrorBody)))]
async fn answer(
    State(st): State<AppState>,
    Path(id): Path<String>,
    body: Result<Json<Answer>, JsonRejection>,
) -> Result<Json<Question>, ApiError> {
    let Json(a) = body?;
    let q: Option<QuestionRow> = sqlx::query_as(&format!("{QUESTION_SELECT} WHERE q.id = ?"))
        .bind(&id)
        .fetch_optional(&st.store.pool)
        .await?;
    let Some(q) = q else {
        return Err(ApiError::not_found(format!("no question {id}")));
    };
    let text = match (&a.option, &a.text) {
        (Some(o), None) => {
            let options: Vec<String> = serde_json::from_str(&q.options).unwrap_or_default();
            if !options.contains(o) {
                return Err(ApiError::bad_request(format!(
                    "{o:?} is not one of {options:?}"
                )));
            }
            o.clone()
        }
        (None, Some(t)) if !t.trim().is_empty() => t.clone(),
        _ => return Err(ApiError::bad_request("give exactly one of option or text")),
    };
    sqlx::query("UPDATE questions SET status = 'answered', answer = ?, answered_at = ?, delivered = 0 WHERE id = ?")
        .bind(&text)
        .bind(now_ms())
        .bind(&id)
        .execute(&st.store.pool)
        .await?;
    st.events.emit(
        EventKind::Question,
        EventBody {
            line_id: Some(q.line_id.clone()),
            project_id: Some(q.project_id.clone()),
            state: Some(conveyor_api::QuestionStatus::Answered.into()),
            ..EventBody::default()
        },
    );
    let q: QuestionRow = sqlx::query_as(&format!("{QUESTION_SELECT} WHERE q.id = ?"))
        .bind(&id)
        .fetch_one(&st.store.pool)
        .await?;
    Ok(Json(q.to_api()))
}
