//! `/api/lines/{id}…`: one line, its diff, and Anton's verbs on it (priority, accept,
//! remarks, level, cancel).

use std::path::PathBuf;

use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use conveyor_api::{
    ApiErrorBody, ErrorCode, EventKind, Line, LineBudget, LineDetail, LineDiff, LinePatch,
    LineState, ReasonCode, Remarks, SetLevel, StepKind, Tokens, has_text,
};
use serde::Deserialize;

use super::error::ApiError;
use super::state::{ApiState, AppState};
use crate::events::EventBody;
use crate::git;
use crate::store::{self, LineRow, StepWithCost};

pub fn router() -> Router<ApiState> {
    Router::new()
        .route("/api/lines/{id}", get(one).patch(patch))
        .route("/api/lines/{id}/diff", get(diff))
        .route("/api/lines/{id}/accept", post(accept))
        .route("/api/lines/{id}/remarks", post(remarks))
        .route("/api/lines/{id}/cancel", post(cancel))
        .route("/api/lines/{id}/level", post(raise_level))
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
