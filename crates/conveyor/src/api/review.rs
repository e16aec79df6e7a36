//! `/api/review` (the morning page), `/api/questions/{id}/answer` and `/api/decisions`.

use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, Query, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use conveyor_api::{
    Answer, AnswerOption, AnswerText, ApiErrorBody, Decision, ErrorCode, Question, QuestionStatus,
    Review, ReviewProject, has_text,
};
use serde::Deserialize;

use super::{ApiError, ApiState, AppState};
use crate::line::judge::{self, AnswerRefused};
use crate::store::{self, QuestionRow};

pub fn router() -> Router<ApiState> {
    Router::new()
        .route("/api/review", get(review))
        .route("/api/questions/{id}/answer", post(answer))
        .route("/api/decisions", get(decisions))
}

/// The path parameter of `/api/questions/{id}/answer`.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
struct QuestionId {
    /// The question's id, as `GET /api/review` lists it.
    id: String,
}

/// The most decided entries one project's block lists.
const DECIDED_MAX: i64 = 200;

/// The morning page. By day (a `night` is configured and it has ended) the list is the one
/// frozen at the night's end: questions validated after it are under `later`. Answered
/// questions stay listed until their line is accepted or cancelled.
#[utoipa::path(get, operation_id = "get_review", path = "/api/review", responses((status = 200, body = Review)))]
async fn review(State(st): State<AppState>) -> Result<Json<Review>, ApiError> {
    let now = st.clock.now_ms();
    let frozen_at = st.cfg.night().and_then(|n| n.frozen_at(now));
    let c = &mut *st.store.conn().await?;
    let projects = store::projects::all(c).await?;
    let rows = store::questions::for_review(c).await?;
    let pending_judgement = store::questions::count(c, QuestionStatus::Unvalidated).await?;
    let in_rework = store::questions::count(c, QuestionStatus::Rework).await?;
    let mut out = Vec::new();
    for p in projects {
        let mine = || rows.iter().filter(|q| q.project_id == p.id);
        let frozen =
            |q: &&QuestionRow| frozen_at.is_none_or(|f| q.validated_at.is_some_and(|v| v <= f));
        let open = || mine().filter(|q| q.status == QuestionStatus::Validated);
        let questions: Vec<Question> = open().filter(frozen).map(QuestionRow::to_api).collect();
        let later: Vec<Question> = open()
            .filter(|q| !frozen(q))
            .map(QuestionRow::to_api)
            .collect();
        let answered: Vec<Question> = mine()
            .filter(|q| q.status == QuestionStatus::Answered)
            .map(QuestionRow::to_api)
            .collect();
        let decided = store::questions::decisions(c, Some(&p.id), true, DECIDED_MAX).await?;
        if questions.is_empty() && later.is_empty() && answered.is_empty() && decided.is_empty() {
            continue;
        }
        out.push(ReviewProject {
            project_id: p.id,
            name: p.name,
            questions,
            later,
            answered,
            decided,
        });
    }
    Ok(Json(Review {
        frozen_at: frozen_at.map(store::rfc3339),
        pending_judgement,
        in_rework,
        projects: out,
    }))
}

/// Records Anton's answer (and on the questions judged its duplicates); an `answer` step
/// carries it to the line's session, and a line that waited for it goes on.
#[utoipa::path(post, operation_id = "answer_question", path = "/api/questions/{id}/answer", params(QuestionId), request_body = Answer,
    responses((status = 200, body = Question),
        (status = 400, description = "`bad_request`: a malformed body: not exactly one of `option` and `text`, or blank `text`", body = ApiErrorBody),
        (status = 404, description = "`not_found`: no question has that id", body = ApiErrorBody),
        (status = 409, description = "`invalid_state`: the question's line is accepted or cancelled (nothing would read the answer), the question is still being judged or repeats another (answer that one), or its answer was already delivered", body = ApiErrorBody),
        (status = 422, description = "`not_an_option`: `option` is not one of the question's options", body = ApiErrorBody)))]
async fn answer(
    State(st): State<AppState>,
    Path(QuestionId { id }): Path<QuestionId>,
    body: Result<Json<Answer>, JsonRejection>,
) -> Result<Json<Question>, ApiError> {
    let Json(a) = body?;
    let Some(q) = store::questions::get(&mut *st.store.conn().await?, &id).await? else {
        return Err(ApiError::not_found(format!("no question {id}")));
    };
    let text = match a {
        Answer::Option(AnswerOption { option }) if option.is_empty() => {
            return Err(ApiError::bad_request("option is empty"));
        }
        Answer::Option(AnswerOption { option }) => {
            let options = q.said.options();
            if !options.contains(&option) {
                return Err(ApiError::unprocessable(
                    ErrorCode::NotAnOption,
                    format!("{option:?} is not one of {options:?}"),
                ));
            }
            option
        }
        Answer::Text(AnswerText { text }) if has_text(&text) => text,
        Answer::Text(_) => return Err(ApiError::bad_request("text is blank")),
    };
    if let Err(refused) = judge::answer(&st, &q, &text).await? {
        return Err(ApiError::conflict(
            ErrorCode::InvalidState,
            match &refused {
                AnswerRefused::LineFinished(_) | AnswerRefused::Delivered => refused.to_string(),
                AnswerRefused::NotJudged(_) | AnswerRefused::Duplicate(_) => {
                    format!("question {id}: {refused}")
                }
            },
        ));
    }
    let q = store::questions::get(&mut *st.store.conn().await?, &id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no question {id}")))?;
    Ok(Json(q.to_api()))
}

/// The query of `/api/decisions`.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct DecisionsQuery {
    /// Only this project's.
    project: Option<String>,
    /// At most this many, newest first (1–1000; 200 when absent).
    #[param(minimum = 1, maximum = 1000)]
    #[serde(default, deserialize_with = "conveyor_api::integral_i64_opt")]
    limit: Option<i64>,
}

/// The "decided myself" catalogue: every decision taken without Anton — an agent's `decided`
/// entry, a fork or question the judge or the daemon decided by default — newest first.
#[utoipa::path(get, operation_id = "list_decisions", path = "/api/decisions", params(DecisionsQuery),
    responses((status = 200, body = Vec<Decision>),
        (status = 400, description = "`bad_request`: `limit` out of 1–1000", body = ApiErrorBody)))]
async fn decisions(
    State(st): State<AppState>,
    q: Result<Query<DecisionsQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Vec<Decision>>, ApiError> {
    let Query(q) = q?;
    let limit = q.limit.unwrap_or(DECIDED_MAX);
    if !(1..=1000).contains(&limit) {
        return Err(ApiError::bad_request(format!(
            "limit {limit} is out of 1–1000"
        )));
    }
    let c = &mut *st.store.conn().await?;
    Ok(Json(
        store::questions::decisions(c, q.project.as_deref(), false, limit).await?,
    ))
}
