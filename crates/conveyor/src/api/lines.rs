//! `/api/lines`: the queue, one line, and Anton's verbs on it (accept, remarks, cancel,
//! priority).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use conveyor_api::{
    ApiErrorBody, EventKind, Line, LineBudget, LineDetail, LineDiff, LineOrder, LinePatch,
    LineState, NewLine, ORDER_MAX_LINES, Remarks, SetLevel, StepKind, Tokens,
};
use serde::Deserialize;

use super::{ApiError, ApiState, AppState};
use crate::events::EventBody;
use crate::git;
use crate::store::{self, LineRow, StepWithCost, now_ms};
use conveyor_api::{ErrorCode, ReasonCode, has_text};

pub fn router() -> Router<ApiState> {
    Router::new()
        .route("/api/lines", get(list).post(create))
        .route("/api/lines/order", put(reorder))
        .route("/api/lines/{id}", get(one).patch(patch))
        .route("/api/lines/{id}/diff", get(diff))
        .route("/api/lines/{id}/accept", post(accept))
        .route("/api/lines/{id}/remarks", post(remarks))
        .route("/api/lines/{id}/cancel", post(cancel))
        .route("/api/lines/{id}/level", post(raise_level))
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

/// `GET /api/lines` answers by query, with the event generation they were made at: the list
/// is what a UI polls, so answers are cached until the next event (every state change emits
/// one) or for at most [`LIST_CACHE_TTL`].
#[derive(Debug, Default)]
pub(crate) struct ListCache {
    // std Mutex: never held across an await.
    answers: std::sync::Mutex<HashMap<String, CachedList>>,
    /// One recomputation at a time; the others wait and take its answer.
    refresh: tokio::sync::Mutex<()>,
}

/// One cached `GET /api/lines` answer: valid while no event happened since and for at most
/// [`LIST_CACHE_TTL`] (a safety net for writes that emit no event, such as a run's cost).
#[derive(Debug, Clone)]
struct CachedList {
    generation: u64,
    made: std::time::Instant,
    body: axum::body::Bytes,
    /// How many lines the page holds.
    shown: i64,
    /// How many lines match the filters, over all pages (`X-Total-Count`).
    total: i64,
}

/// How long a cached list answer may live without an event.
const LIST_CACHE_TTL: std::time::Duration = std::time::Duration::from_millis(1000);

/// The most answers kept (then the cache starts over).
const LIST_CACHE_MAX: usize = 256;

impl ListCache {
    /// The answer to `key` made at `generation`, if still fresh: (body, shown, total).
    fn get(&self, key: &str, generation: u64) -> Option<(axum::body::Bytes, i64, i64)> {
        self.answers
            .lock()
            .expect("cache poisoned")
            .get(key)
            .filter(|c| c.generation == generation && c.made.elapsed() < LIST_CACHE_TTL)
            .map(|c| (c.body.clone(), c.shown, c.total))
    }

    fn put(&self, key: String, answer: CachedList) {
        let mut cache = self.answers.lock().expect("cache poisoned");
        if cache.len() > LIST_CACHE_MAX {
            cache.clear();
        }
        cache.insert(key, answer);
    }
}

/// The path parameter of every `/api/lines/{id}…` route.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
struct LineId {
    /// The line's id, as `POST /api/lines` answered it.
    id: String,
}

/// The 404 of every `/api/lines/{id}…` route.
const NO_LINE: &str = "`not_found`: no line has that id";

/// How many journal entries `GET /api/lines/{id}` carries (the newest).
const JOURNAL_LIMIT: i64 = 500;

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
        serde_json::to_vec(&lines).map_err(|e| crate::Error::Internal(e.to_string()))?,
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

/// One line with its steps, its journal (the newest 500 entries), every fork and question of
/// it with where it stands, and what it has cost.
#[utoipa::path(get, operation_id = "get_line", path = "/api/lines/{id}", params(LineId),
    responses((status = 200, body = LineDetail), (status = 404, description = NO_LINE, body = ApiErrorBody)))]
async fn one(
    State(st): State<AppState>,
    Path(LineId { id }): Path<LineId>,
) -> Result<Json<LineDetail>, ApiError> {
    let Some(l) = store::lines::get(&mut *st.store.conn().await?, &id).await? else {
        return Err(ApiError::not_found(format!("no line {id}")));
    };
    let steps = store::steps::with_cost(&mut *st.store.conn().await?, &id).await?;
    let runs = store::runs::count_of_line(&mut *st.store.conn().await?, &id).await?;
    let budget = LineBudget {
        // From +0.0: `Sum` of no `f64` is -0.0.
        cost_usd: steps.iter().fold(0.0, |total, s| total + s.cost_usd),
        runs: u32::try_from(runs).unwrap_or(0),
        tokens: steps.iter().fold(Tokens::default(), |mut t, s| {
            let a = s.to_api().tokens;
            t.input += a.input;
            t.output += a.output;
            t.cache_read += a.cache_read;
            t.cache_write += a.cache_write;
            t
        }),
    };
    let journal = store::journal::recent(&mut *st.store.conn().await?, &id, JOURNAL_LIMIT)
        .await?
        .iter()
        .map(|j| j.to_api())
        .collect();
    let questions = store::questions::of_line(
        &mut *st.store.conn().await?,
        &id,
        conveyor_api::QuestionStatus::ALL,
    )
    .await?
    .iter()
    .map(store::QuestionRow::to_api)
    .collect();
    let mut line = [l.to_api(steps.iter().map(StepWithCost::to_api).collect())];
    store::line_view::with_aftermath(&mut *st.store.conn().await?, &mut line).await?;
    let [line] = line;
    Ok(Json(LineDetail {
        line,
        journal,
        questions,
        budget,
    }))
}

/// The line's branch against the main commit it forked from; empty once the branch is gone.
#[utoipa::path(get, operation_id = "get_line_diff", path = "/api/lines/{id}/diff", params(LineId),
    responses((status = 200, body = LineDiff), (status = 404, description = NO_LINE, body = ApiErrorBody)))]
async fn diff(
    State(st): State<AppState>,
    Path(LineId { id }): Path<LineId>,
) -> Result<Json<LineDiff>, ApiError> {
    let l = line_or_404(&st, &id).await?;
    let project = store::projects::get(&mut *st.store.conn().await?, &l.project_id)
        .await?
        .ok_or_else(|| ApiError::not_found("the line's project is gone"))?;
    let found = git::line_diff(
        &PathBuf::from(&project.repo_path),
        &project.main_branch,
        &l.branch,
        &st.shutdown,
    )
    .await?;
    Ok(Json(match found {
        Some((base, head, files)) => LineDiff {
            base: Some(base),
            head: Some(head),
            files,
        },
        None => LineDiff {
            base: None,
            head: None,
            files: Vec::new(),
        },
    }))
}

async fn line_or_404(st: &AppState, id: &str) -> Result<LineRow, ApiError> {
    store::lines::get(&mut *st.store.conn().await?, id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no line {id}")))
}

async fn answer_line(st: &AppState, id: &str) -> Result<Json<Line>, ApiError> {
    Ok(Json(
        store::line_view::get(&mut *st.store.conn().await?, id)
            .await?
            .ok_or_else(|| ApiError::not_found(format!("no line {id}")))?,
    ))
}

/// Changes the line's priority.
#[utoipa::path(patch, operation_id = "patch_line", path = "/api/lines/{id}", params(LineId), request_body = LinePatch,
    responses((status = 200, body = Line),
        (status = 400, description = "`bad_request`: a malformed body", body = ApiErrorBody),
        (status = 404, description = NO_LINE, body = ApiErrorBody)))]
async fn patch(
    State(st): State<AppState>,
    Path(LineId { id }): Path<LineId>,
    body: Result<Json<LinePatch>, JsonRejection>,
) -> Result<Json<Line>, ApiError> {
    let Json(p) = body?;
    line_or_404(&st, &id).await?;
    store::lines::set_priority(&mut *st.store.conn().await?, &id, p.priority).await?;
    st.events.emit(
        EventKind::Line,
        EventBody {
            line_id: Some(id.clone()),
            detail: Some(format!("priority {}", p.priority)),
            ..EventBody::default()
        },
    );
    st.wake.notify_one();
    answer_line(&st, &id).await
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

/// Anton accepts a line awaiting acceptance: its branch and worktree are removed.
#[utoipa::path(post, operation_id = "accept_line", path = "/api/lines/{id}/accept", params(LineId), responses((status = 200, body = Line),
    (status = 404, description = NO_LINE, body = ApiErrorBody),
    (status = 409, description = "`invalid_state`: the line is not awaiting acceptance; `unmerged_commits`: the branch holds commits main lacks", body = ApiErrorBody)))]
async fn accept(
    State(st): State<AppState>,
    Path(LineId { id }): Path<LineId>,
) -> Result<Json<Line>, ApiError> {
    use crate::line::AcceptRefused as R;
    match crate::line::accept(&st, &id).await? {
        Ok(()) => {}
        Err(R::NoLine) => return Err(ApiError::not_found(format!("no line {id}"))),
        Err(r @ R::NoProject) => return Err(ApiError::not_found(r.to_string())),
        Err(r @ R::NotAwaiting(_)) => {
            return Err(ApiError::conflict(ErrorCode::InvalidState, r.to_string()));
        }
        Err(r @ R::Unmerged { .. }) => {
            return Err(ApiError::conflict(
                ErrorCode::UnmergedCommits,
                r.to_string(),
            ));
        }
    }
    answer_line(&st, &id).await
}

/// Anton's remarks on a finished or stopped line: a `remarks` step carries them to the agent
/// in the line's session, and the line is queued again.
#[utoipa::path(post, operation_id = "send_remarks", path = "/api/lines/{id}/remarks", params(LineId), request_body = Remarks,
    responses((status = 200, body = Line),
        (status = 400, description = "`bad_request`: a malformed body or blank `text`", body = ApiErrorBody),
        (status = 404, description = NO_LINE, body = ApiErrorBody),
        (status = 409, description = "`invalid_state`: the line is neither awaiting acceptance, needing Anton nor blocked", body = ApiErrorBody)))]
async fn remarks(
    State(st): State<AppState>,
    Path(LineId { id }): Path<LineId>,
    body: Result<Json<Remarks>, JsonRejection>,
) -> Result<Json<Line>, ApiError> {
    let Json(r) = body?;
    if !has_text(&r.text) {
        return Err(ApiError::bad_request("text is blank"));
    }
    let l = line_or_404(&st, &id).await?;
    if !matches!(
        l.state,
        LineState::AwaitingAcceptance | LineState::NeedsHuman | LineState::Blocked
    ) {
        return Err(ApiError::conflict(
            ErrorCode::InvalidState,
            format!(
                "remarks go to a finished or stopped line; this one is {}",
                l.state.as_str()
            ),
        ));
    }
    // Steps that failed are closed: the remarks step carries on from the checkpoint.
    let mut tx = st.store.begin().await?;
    store::steps::cancel_open(&mut tx, &id).await?;
    store::steps::add_in(&mut tx, &id, StepKind::Remarks, "Anton's remarks", &r.text).await?;
    store::lines::set_gate_failures(&mut tx, &id, 0).await?;
    tx.commit().await?;
    st.set_line_state(&id, LineState::Queued, None, None)
        .await?;
    st.wake.notify_one();
    answer_line(&st, &id).await
}

/// Raises the line's level (light → medium → full): more checking roles run before its merge.
/// The same level changes nothing; a lower one is refused.
#[utoipa::path(post, operation_id = "raise_level", path = "/api/lines/{id}/level", params(LineId), request_body = SetLevel,
    responses((status = 200, body = Line),
        (status = 400, description = "`bad_request`: a malformed body or an unknown level", body = ApiErrorBody),
        (status = 404, description = NO_LINE, body = ApiErrorBody),
        (status = 409, description = "`level_lower`: the line's level is higher already; `invalid_state`: the line has merged, or is accepted or cancelled", body = ApiErrorBody)))]
async fn raise_level(
    State(st): State<AppState>,
    Path(LineId { id }): Path<LineId>,
    body: Result<Json<SetLevel>, JsonRejection>,
) -> Result<Json<Line>, ApiError> {
    let Json(SetLevel { level }) = body?;
    let l = line_or_404(&st, &id).await?;
    if matches!(
        l.state,
        LineState::AwaitingAcceptance | LineState::Accepted | LineState::Cancelled
    ) {
        return Err(ApiError::conflict(
            ErrorCode::InvalidState,
            format!(
                "the line is {}: its checks are over, a level changes nothing",
                l.state.as_str()
            ),
        ));
    }
    if let Some(has) = l.level
        && crate::roles::rank(level) < crate::roles::rank(has)
    {
        return Err(ApiError::conflict(
            ErrorCode::LevelLower,
            format!("the line is {} already; a level only goes up", has.as_str()),
        ));
    }
    let raised = store::lines::raise_level(
        &mut *st.store.conn().await?,
        &id,
        level,
        "Anton raised it",
        st.clock.now_ms(),
    )
    .await?;
    if raised {
        st.events.emit(
            EventKind::Line,
            EventBody {
                line_id: Some(id.clone()),
                detail: Some(format!("level {}", level.as_str())),
                ..EventBody::default()
            },
        );
        st.wake.notify_one();
    }
    answer_line(&st, &id).await
}

/// Cancels the line and stops its running agent, if any.
#[utoipa::path(post, operation_id = "cancel_line", path = "/api/lines/{id}/cancel", params(LineId), responses((status = 200, body = Line),
    (status = 404, description = NO_LINE, body = ApiErrorBody),
    (status = 409, description = "`invalid_state`: the line is already accepted or cancelled", body = ApiErrorBody)))]
async fn cancel(
    State(st): State<AppState>,
    Path(LineId { id }): Path<LineId>,
) -> Result<Json<Line>, ApiError> {
    let l = line_or_404(&st, &id).await?;
    if matches!(l.state, LineState::Accepted | LineState::Cancelled) {
        return Err(ApiError::conflict(
            ErrorCode::InvalidState,
            format!("the line is already {}", l.state.as_str()),
        ));
    }
    let mut why = "cancelled by Anton".to_string();
    if l.state == LineState::RolledBack {
        // Its merge is on main though its deploy was rolled back: it is reverted with a revert
        // commit (never a history rewrite) before the line is let go.
        let sha = revert_merge(&st, &l).await?;
        why = format!("cancelled by Anton; its merge was reverted on main by {sha}");
    }
    st.set_line_state(
        &id,
        LineState::Cancelled,
        Some((ReasonCode::Cancelled, &why)),
        None,
    )
    .await?;
    st.cancel_run(&id);
    answer_line(&st, &id).await
}

/// Reverts a rolled-back line's merge on main; the revert commit.
async fn revert_merge(st: &AppState, l: &LineRow) -> Result<String, ApiError> {
    let project = store::projects::get(&mut *st.store.conn().await?, &l.project_id)
        .await?
        .ok_or_else(|| ApiError::not_found("the line's project is gone"))?;
    let deploys =
        store::deploys::of_lines(&mut *st.store.conn().await?, std::slice::from_ref(&l.id))
            .await?
            .remove(&l.id)
            .unwrap_or_default();
    let Some(last) = deploys.last() else {
        return Err(ApiError::conflict(
            ErrorCode::InvalidState,
            "the line is rolled back but has no deploy to say what it merged",
        ));
    };
    let repo = PathBuf::from(&project.repo_path);
    let scratch = st
        .cfg
        .data_dir
        .join("scratch")
        .join(format!("{}-revert", l.id));
    let merge = git::Merge {
        locks: &st.locks,
        repo: &repo,
        main: &project.main_branch,
        branch: &l.branch,
        scratch: &scratch,
        identity: &st.identity(),
        message: &format!(
            "Revert {} (cancelled after its deploy was rolled back): {}",
            l.branch, l.title
        ),
        cancel: &st.shutdown,
    };
    match git::revert_on_main(&merge, &last.commit).await? {
        git::Reverted::Yes { main } => Ok(main),
        git::Reverted::Conflict { detail } => Err(ApiError::conflict(
            ErrorCode::InvalidState,
            format!(
                "reverting the line's merge {} conflicts with later work on {}: revert it by hand, then cancel: {detail}",
                last.commit, project.main_branch
            ),
        )),
        git::Reverted::DirtyCheckout { detail } => Err(ApiError::conflict(
            ErrorCode::InvalidState,
            format!(
                "the checkout of {} has uncommitted changes; revert refused: {detail}",
                project.main_branch
            ),
        )),
    }
}
