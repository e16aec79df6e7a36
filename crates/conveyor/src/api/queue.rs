//! `/api/lines` as a whole: the queue, listed a page at a time (cached until the next
//! event), a new line queued, the queued lines put in order.

use std::sync::Arc;

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, put};
use axum::{Json, Router};
use conveyor_api::{
    ApiErrorBody, ErrorCode, EventKind, Line, LineOrder, LineState, NewLine, ORDER_MAX_LINES,
    has_text,
};
use serde::Deserialize;

use super::cache::{CachedList, ListCache};
use super::error::ApiError;
use super::state::{ApiState, AppState};
use crate::events::EventBody;
use crate::store::{self, LineRow, now_ms};

pub fn router() -> Router<ApiState> {
    Router::new()
        .route("/api/lines", get(list).post(create))
        .route("/api/lines/order", put(reorder))
}

/// Filters of `GET /api/lines`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Only lines in this state.
    state: Option<LineState>,
    /// Only lines of this project (id).
    project: Option<String>,
    /// At most this many per page (default 200). The response's `X-Total-Count` says how many
    /// match in all; `X-Next-Offset` and `Link: <…>; rel="next"` name the next page while there
    /// is one.
    #[serde(default, deserialize_with = "conveyor_api::integral_i64_opt")]
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<i64>,
    /// Skip this many (paging; the order is priority, then age, then id). Past the end, the
    /// page is empty.
    #[serde(default, deserialize_with = "conveyor_api::integral_i64_opt")]
    #[param(minimum = 0, maximum = 9007199254740991_i64)]
    offset: Option<i64>,
}

/// The default page size of `GET /api/lines`.
pub const LIST_DEFAULT_LIMIT: i64 = 200;
/// The largest page `GET /api/lines` serves.
pub const LIST_MAX_LIMIT: i64 = 1000;
/// The largest `offset` (2^53 − 1: exact in every JSON client).
pub const LIST_MAX_OFFSET: i64 = 9_007_199_254_740_991;

impl ListQuery {
    /// The page asked for, or a 400 naming the parameter out of its documented bounds.
    fn page(&self) -> Result<(i64, i64), ApiError> {
        let limit = self.limit.unwrap_or(LIST_DEFAULT_LIMIT);
        if !(1..=LIST_MAX_LIMIT).contains(&limit) {
            return Err(ApiError::bad_request(format!(
                "limit must be 1 to {LIST_MAX_LIMIT}, not {limit}"
            )));
        }
        let offset = self.offset.unwrap_or(0);
        if !(0..=LIST_MAX_OFFSET).contains(&offset) {
            return Err(ApiError::bad_request(format!(
                "offset must be 0 to {LIST_MAX_OFFSET}, not {offset}"
            )));
        }
        Ok((limit, offset))
    }
}

/// Percent-encodes a query value (everything but RFC 3986's unreserved characters).
fn query_escape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for b in v.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The list answer with its paging headers.
fn list_response(
    q: &ListQuery,
    limit: i64,
    offset: i64,
    shown: i64,
    total: i64,
    body: axum::body::Bytes,
) -> Response {
    let mut headers = axum::http::HeaderMap::new();
    headers.insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("application/json"),
    );
    headers.insert("x-total-count", total.into());
    let next = offset + shown;
    if shown > 0 && next < total {
        headers.insert("x-next-offset", next.into());
        let mut url = format!("/api/lines?limit={limit}&offset={next}");
        if let Some(s) = q.state {
            url.push_str(&format!("&state={}", s.as_str()));
        }
        if let Some(p) = &q.project {
            url.push_str(&format!("&project={}", query_escape(p)));
        }
        if let Ok(v) = axum::http::HeaderValue::from_str(&format!("<{url}>; rel=\"next\"")) {
            headers.insert(axum::http::header::LINK, v);
        }
    }
    (headers, body).into_response()
}

#[utoipa::path(get, operation_id = "list_lines", path = "/api/lines", params(ListQuery), responses((status = 200, body = Vec<Line>,
    description = "One page of lines (`limit`, `offset`); follow `X-Next-Offset` until it is absent to get them all",
    headers(
        ("X-Total-Count" = i64, description = "How many lines match the filters, over all pages"),
        ("X-Next-Offset" = i64, description = "The `offset` of the next page; absent on the last page"),
        ("Link" = String, description = "`</api/lines?limit=…&offset=…>; rel=\"next\"` while there is a next page"),
    )),
    (status = 400, description = "`bad_request`: an unknown state, or `limit` or `offset` out of bounds", body = ApiErrorBody)))]
async fn list(
    State(st): State<AppState>,
    State(lists): State<Arc<ListCache>>,
    q: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(q) = q?;
    let state = q.state;
    let (limit, offset) = q.page()?;
    let key = format!("{:?}|{:?}|{limit}|{offset}", q.state, q.project);
    if let Some((body, shown, total)) = lists.get(&key, st.events.generation()) {
        return Ok(list_response(&q, limit, offset, shown, total, body));
    }
    // Single flight: whoever waited here takes the answer the one before it made.
    let _flight = lists.refresh.lock().await;
    let generation = st.events.generation();
    if let Some((body, shown, total)) = lists.get(&key, generation) {
        return Ok(list_response(&q, limit, offset, shown, total, body));
    }
    let rows = store::lines::page(
        &mut *st.store.conn().await?,
        state,
        q.project.as_deref(),
        limit,
        offset,
    )
    .await?;
    let total =
        store::lines::count(&mut *st.store.conn().await?, state, q.project.as_deref()).await?;
    let shown = i64::try_from(rows.len()).unwrap_or(i64::MAX);
    let lines = for_api(&st, &rows).await?;
    let body = axum::body::Bytes::from(
        serde_json::to_vec(&lines).map_err(|e| crate::error::Error::Internal(e.to_string()))?,
    );
    lists.put(
        key,
        CachedList {
            generation,
            made: std::time::Instant::now(),
            body: body.clone(),
            shown,
            total,
        },
    );
    Ok(list_response(&q, limit, offset, shown, total, body))
}

/// Queues a line; it starts when its project is free and the budget allows.
#[utoipa::path(post, operation_id = "create_line", path = "/api/lines", request_body = NewLine,
    responses((status = 201, body = Line),
        (status = 400, description = "`bad_request`: a malformed body, or a blank `title` or `task`", body = ApiErrorBody),
        (status = 409, description = "`duplicate_title`: the project has an open line (neither accepted nor cancelled) with that title (case and blanks aside)", body = ApiErrorBody),
        (status = 422, description = "`unknown_project`: no project has that id; `bad_planfix_task`: `planfix_task` is not a task number", body = ApiErrorBody)))]
async fn create(
    State(st): State<AppState>,
    body: Result<Json<NewLine>, JsonRejection>,
) -> Result<(StatusCode, Json<Line>), ApiError> {
    let Json(n) = body?;
    for (field, value) in [("title", &n.title), ("task", &n.task)] {
        if !has_text(value) {
            return Err(ApiError::bad_request(format!("{field} is blank")));
        }
    }
    let planfix_task = match n.planfix_task.as_deref().map(planfix_task) {
        None => None,
        Some(Some(t)) => Some(t),
        Some(None) => {
            return Err(ApiError::unprocessable(
                ErrorCode::BadPlanfixTask,
                format!(
                    "planfix_task {:?} is not a PlanFix task number (e.g. \"1234\" or \"#1234\")",
                    n.planfix_task.as_deref().unwrap_or("")
                ),
            ));
        }
    };
    if store::projects::get(&mut *st.store.conn().await?, &n.project_id)
        .await?
        .is_none()
    {
        return Err(ApiError::unprocessable(
            ErrorCode::UnknownProject,
            format!("no project {}", n.project_id),
        ));
    }
    // The evening queues lines from a conversation: the same line said twice is one line.
    if let Some(open) =
        store::lines::open_with_title(&mut *st.store.conn().await?, &n.project_id, &n.title).await?
    {
        return Err(ApiError::conflict(
            ErrorCode::DuplicateTitle,
            format!(
                "the project already has an open line titled {:?} ({}, {}): change its priority or cancel it instead",
                open.title,
                open.id,
                open.state.as_str()
            ),
        ));
    }
    // The session id is assigned now, before the first step.
    let mut row = LineRow::new(
        n.project_id,
        n.title,
        n.task,
        n.priority.unwrap_or(0),
        now_ms(),
    );
    row.planfix_task = planfix_task;
    store::lines::insert(&mut *st.store.conn().await?, &mut row).await?;
    st.events.emit(
        EventKind::Line,
        EventBody {
            line_id: Some(row.id.clone()),
            project_id: Some(row.project_id.clone()),
            state: Some(LineState::Queued.into()),
            detail: Some("created".into()),
            ..EventBody::default()
        },
    );
    st.wake.notify_one();
    Ok((StatusCode::CREATED, Json(row.to_api(Vec::new()))))
}

/// A PlanFix task number as given (`1234`, `#1234`, spaces around): its digits; `None` when it
/// is not one. The daemon writes only to this task, so nothing but a number is taken.
fn planfix_task(s: &str) -> Option<String> {
    let t = s.trim();
    let t = t.strip_prefix('#').unwrap_or(t);
    (!t.is_empty() && t.len() <= 18 && t.bytes().all(|b| b.is_ascii_digit())).then(|| t.into())
}

/// Puts queued lines in the order they are to start, in one transaction: the listed lines get
/// priorities under which the daemon's order (priority, then age, then id — the scheduler's
/// and `GET /api/lines`') lists them exactly as given, as few of their priorities changed as
/// can be. Lines not listed keep their priorities (and their place beside every listed line
/// that kept its own): list a whole group, every queued line or every queued line of a
/// project, to decide its whole order. Only queued lines are reordered: a started line holds
/// its project already (`PATCH /api/lines/{id}` still sets its priority).
#[utoipa::path(put, operation_id = "reorder_lines", path = "/api/lines/order", request_body = LineOrder,
    responses((status = 200, body = Vec<Line>, description = "The listed lines in their new order, with their priorities"),
        (status = 400, description = "`bad_request`: a malformed body, no ids, or more than 1000", body = ApiErrorBody),
        (status = 409, description = "`invalid_state`: a listed line is not queued (the message names them and their states); nothing changed", body = ApiErrorBody),
        (status = 422, description = "`unknown_line`: no line has one of the ids (the message names them); `duplicate_line`: an id is listed more than once (which the schema's `uniqueItems` says too); nothing changed", body = ApiErrorBody)))]
async fn reorder(
    State(st): State<AppState>,
    body: Result<Json<LineOrder>, JsonRejection>,
) -> Result<Json<Vec<Line>>, ApiError> {
    use crate::line::order::OrderRefused as R;
    let Json(LineOrder { line_ids }) = body?;
    if line_ids.is_empty() || line_ids.len() > ORDER_MAX_LINES {
        return Err(ApiError::bad_request(format!(
            "line_ids must list 1 to {ORDER_MAX_LINES} lines, not {}",
            line_ids.len()
        )));
    }
    let rows = match crate::line::order::reorder(&st, &line_ids).await? {
        Ok(rows) => rows,
        Err(r @ R::Duplicate(_)) => {
            return Err(ApiError::unprocessable(
                ErrorCode::DuplicateLine,
                r.to_string(),
            ));
        }
        Err(r @ R::Unknown(_)) => {
            return Err(ApiError::unprocessable(
                ErrorCode::UnknownLine,
                r.to_string(),
            ));
        }
        Err(r @ R::NotQueued(_)) => {
            return Err(ApiError::conflict(ErrorCode::InvalidState, r.to_string()));
        }
    };
    Ok(Json(for_api(&st, &rows).await?))
}

/// Lines as the API shows them (their steps, denials and deploys).
async fn for_api(st: &AppState, rows: &[LineRow]) -> Result<Vec<Line>, ApiError> {
    Ok(store::line_view::of_rows(&mut *st.store.conn().await?, rows).await?)
}
