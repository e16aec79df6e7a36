//! `/api/review` (the morning page), `/api/questions/{id}/answer` and `/api/decisions`.

use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, Query, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use conveyor_api::{
    Answer, AnswerOption, AnswerText, ApiErrorBody, Decision, ErrorCode, LineState, NightGlance,
    Question, QuestionStatus, Review, ReviewProject, has_text,
};
use serde::Deserialize;

use super::error::ApiError;
use super::state::{ApiState, AppState};
use crate::line::answer::{self, AnswerRefused};
use crate::store::{self, QuestionRow};

pub fn router() -> Router<ApiState> {
    Router::new()
        .route("/api/review", get(review))
        .route("/api/questions/{id}/answer", post(answer).delete(take_back))
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
    let night = glance(&st, c, now).await?;
    Ok(Json(Review {
        frozen_at: frozen_at.map(store::rfc3339),
        pending_judgement,
        in_rework,
        night,
        projects: out,
    }))
}

/// Last night at a glance: lines by where they stand, what the runs since the night began
/// cost, and what the judge kept from Anton since then.
async fn glance(
    st: &AppState,
    c: &mut sqlx::SqliteConnection,
    now: i64,
) -> Result<NightGlance, ApiError> {
    let since = st.cfg.night().map_or(now - DAY_MS, |n| n.started_at(now));
    Ok(NightGlance {
        since: store::rfc3339(since),
        awaiting_acceptance: store::lines::count_in(c, &[LineState::AwaitingAcceptance]).await?,
        running: store::lines::count_in(c, &crate::line::ACTIVE).await?,
        waiting_answer: store::lines::count_in(c, &[LineState::WaitingAnswer]).await?,
        needs_human: store::lines::count_in(c, &[LineState::NeedsHuman]).await?,
        rolled_back: store::lines::count_in(c, &[LineState::RolledBack]).await?,
        cost_usd: store::runs::cost_since(c, since).await?,
        window_threshold_usd: st.budget.window_threshold(&st.store, now).await?,
        sent_back: store::questions::count_since(c, QuestionStatus::Rework, since).await?,
        duplicates: store::questions::count_since(c, QuestionStatus::Duplicate, since).await?,
    })
}

/// Without a configured night, "last night" is the last day.
const DAY_MS: i64 = 24 * 3_600_000;

/// Records Anton's answer (and on the questions judged its duplicates); an `answer` step
/// carries it to the line's session, and a line that waited for it goes on.
#[utoipa::path(post, operation_id = "answer_question", path = "/api/questions/{id}/answer", params(QuestionId), request_body = Answer,
    responses((status = 200, body = Question),
        (status = 400, description = "`bad_request`: a malformed body: not exactly one of `option` and `text`, or blank `text`", body = ApiErrorBody),
        (status = 404, description = "`not_found`: no question has that id", body = ApiErrorBody),
        (status = 409, description = "`answer_started`: the question is answered and the answer step carrying it has started, so the answer can no longer change; `invalid_state`: the question's line is accepted or cancelled (nothing would read the answer), or the question is still being judged or repeats another (answer that one)", body = ApiErrorBody),
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
    if let Err(refused) = answer::answer(&st, &q, &text).await? {
        return Err(refused_error(&id, &refused));
    }
    let q = store::questions::get(&mut *st.store.conn().await?, &id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no question {id}")))?;
    Ok(Json(q.to_api()))
}

/// The 409 of a refused answer or take-back, with its code.
fn refused_error(id: &str, refused: &AnswerRefused) -> ApiError {
    let code = match refused {
        AnswerRefused::Started => ErrorCode::AnswerStarted,
        _ => ErrorCode::InvalidState,
    };
    ApiError::conflict(code, format!("question {id}: {refused}"))
}

/// Takes Anton's answer back while the `answer` step that would carry it has not started; the
/// question is as it was before the answer (validated, or decided by default), and a line that
/// went back to work for it waits again.
#[utoipa::path(delete, operation_id = "take_back_answer", path = "/api/questions/{id}/answer", params(QuestionId),
    responses((status = 200, body = Question, description = "The question as before the answer"),
        (status = 404, description = "`not_found`: no question has that id", body = ApiErrorBody),
        (status = 409, description = "`answer_started`: the answer step carrying it has started; `invalid_state`: the question has no answer", body = ApiErrorBody)))]
async fn take_back(
    State(st): State<AppState>,
    Path(QuestionId { id }): Path<QuestionId>,
) -> Result<Json<Question>, ApiError> {
    let Some(q) = store::questions::get(&mut *st.store.conn().await?, &id).await? else {
        return Err(ApiError::not_found(format!("no question {id}")));
    };
    if let Err(refused) = answer::take_back(&st, &q).await? {
        return Err(refused_error(&id, &refused));
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
