//! `/api/review` (the morning page) and `/api/questions/{id}/answer`.

use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use conveyor_api::{
    Answer, AnswerOption, AnswerText, ApiErrorBody, ErrorCode, EventKind, LineState, Question,
    Review, ReviewProject, has_text,
};
use serde::Deserialize;

use super::{ApiError, ApiState, AppState};
use crate::events::EventBody;
use crate::store::{self, QuestionRow};

pub fn router() -> Router<ApiState> {
    Router::new()
        .route("/api/review", get(review))
        .route("/api/questions/{id}/answer", post(answer))
}

/// The path parameter of `/api/questions/{id}/answer`.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
struct QuestionId {
    /// The question's id, as `GET /api/review` lists it.
    id: String,
}

/// Until the judge exists, every open question is in the `unvalidated` bucket. Answered
/// questions stay listed (as answered) until their line is accepted or cancelled.
#[utoipa::path(get, operation_id = "get_review", path = "/api/review", responses((status = 200, body = Review)))]
async fn review(State(st): State<AppState>) -> Result<Json<Review>, ApiError> {
    let projects = store::projects::all(&mut *st.store.conn().await?).await?;
    let questions = store::questions::for_review(&mut *st.store.conn().await?).await?;
    let decided = store::journal::decided_of_open_lines(&mut *st.store.conn().await?).await?;
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

/// Records Anton's answer; the line's next step carries it to the agent in the same session.
#[utoipa::path(post, operation_id = "answer_question", path = "/api/questions/{id}/answer", params(QuestionId), request_body = Answer,
    responses((status = 200, body = Question),
        (status = 400, description = "`bad_request`: a malformed body: not exactly one of `option` and `text`, or blank `text`", body = ApiErrorBody),
        (status = 404, description = "`not_found`: no question has that id", body = ApiErrorBody),
        (status = 409, description = "`invalid_state`: the question's line is accepted or cancelled, so nothing would read the answer", body = ApiErrorBody),
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
    // An answer is carried by the line's next step: a finished line has none.
    if let Some(state @ (LineState::Accepted | LineState::Cancelled)) =
        store::lines::state_of(&mut *st.store.conn().await?, &q.line_id).await?
    {
        return Err(ApiError::conflict(
            ErrorCode::InvalidState,
            format!(
                "the question's line is {}: nothing would read the answer",
                state.as_str()
            ),
        ));
    }
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
    store::questions::answer(&mut *st.store.conn().await?, &id, &text).await?;
    st.events.emit(
        EventKind::Question,
        EventBody {
            line_id: Some(q.line_id.clone()),
            project_id: Some(q.project_id.clone()),
            state: Some(conveyor_api::QuestionStatus::Answered.into()),
            ..EventBody::default()
        },
    );
    let q = store::questions::get(&mut *st.store.conn().await?, &id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no question {id}")))?;
    Ok(Json(q.to_api()))
}
