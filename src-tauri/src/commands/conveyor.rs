//! The conveyor pages' commands: each one call of the daemon's API through the connection's
//! client (embedded or remote alike), its errors mapped to stable codes.

use conveyor_api::{
    Answer, Budget, Decision, Level, Line, LineDetail, LineDiff, NewLine, NewProject, Outbox,
    OutboxItem, Preflight, Project, Question, Review, Run, Transcript,
};
use tauri::{AppHandle, Runtime, State};
use tauri_plugin_notification::NotificationExt as _;

use crate::conveyor::{ConnectRequest, ConnectionStatus, ConnectionView, Conveyor, Notice};
use crate::error::{AppError, ErrorCode};

#[tauri::command]
pub fn conveyor_status(conveyor: State<'_, Conveyor>) -> ConnectionStatus {
    conveyor.status()
}

#[tauri::command]
pub fn conveyor_connection(conveyor: State<'_, Conveyor>) -> Result<ConnectionView, AppError> {
    conveyor.view()
}

#[tauri::command]
pub async fn conveyor_connect<R: Runtime>(
    app: AppHandle<R>,
    conveyor: State<'_, Conveyor>,
    request: ConnectRequest,
) -> Result<ConnectionStatus, AppError> {
    conveyor.connect(&app, request).await
}

#[tauri::command]
pub async fn conveyor_projects(conveyor: State<'_, Conveyor>) -> Result<Vec<Project>, AppError> {
    Ok(conveyor.client()?.projects().await?)
}

#[tauri::command]
pub async fn conveyor_create_project(
    conveyor: State<'_, Conveyor>,
    project: NewProject,
) -> Result<Project, AppError> {
    Ok(conveyor.client()?.create_project(&project).await?)
}

/// Every line, all pages of the list.
#[tauri::command]
pub async fn conveyor_lines(conveyor: State<'_, Conveyor>) -> Result<Vec<Line>, AppError> {
    Ok(conveyor.client()?.lines(None, None).await?)
}

#[tauri::command]
pub async fn conveyor_line(
    conveyor: State<'_, Conveyor>,
    id: String,
) -> Result<LineDetail, AppError> {
    Ok(conveyor.client()?.line(&id).await?)
}

#[tauri::command]
pub async fn conveyor_line_diff(
    conveyor: State<'_, Conveyor>,
    id: String,
) -> Result<LineDiff, AppError> {
    Ok(conveyor.client()?.line_diff(&id).await?)
}

#[tauri::command]
pub async fn conveyor_line_runs(
    conveyor: State<'_, Conveyor>,
    id: String,
) -> Result<Vec<Run>, AppError> {
    Ok(conveyor.client()?.line_runs(&id).await?)
}

/// A page of a run's conversation after `after` (pult asks again on each `run_event`).
#[tauri::command]
pub async fn conveyor_transcript(
    conveyor: State<'_, Conveyor>,
    run_id: i64,
    after: u64,
) -> Result<Transcript, AppError> {
    Ok(conveyor.client()?.transcript(run_id, after).await?)
}

#[tauri::command]
pub async fn conveyor_create_line(
    conveyor: State<'_, Conveyor>,
    line: NewLine,
) -> Result<Line, AppError> {
    Ok(conveyor.client()?.create_line(&line).await?)
}

#[tauri::command]
pub async fn conveyor_set_priority(
    conveyor: State<'_, Conveyor>,
    id: String,
    priority: i32,
) -> Result<Line, AppError> {
    Ok(conveyor.client()?.set_priority(&id, priority).await?)
}

/// Puts the queued lines `ids` in this order, first to start first (one `PUT
/// /api/lines/order`): the lines come back in it with their new priorities. An id listed twice
/// is refused with `duplicate_line`, an unknown one with `unknown_line` (both the app's `daemon`
/// code, the daemon's beside it), a line that is no longer queued with `invalid_state`.
#[tauri::command]
pub async fn conveyor_reorder(
    conveyor: State<'_, Conveyor>,
    ids: Vec<String>,
) -> Result<Vec<Line>, AppError> {
    Ok(conveyor.client()?.reorder(&ids).await?)
}

/// Raises the line's level (light → medium → full): more checking roles run before its merge.
/// A lower level is refused with `level_lower` (the app's `invalid_state`, the daemon's code
/// beside it), a line whose checks are over with `invalid_state`.
#[tauri::command]
pub async fn conveyor_raise_level(
    conveyor: State<'_, Conveyor>,
    id: String,
    level: Level,
) -> Result<Line, AppError> {
    Ok(conveyor.client()?.raise_level(&id, level).await?)
}

#[tauri::command]
pub async fn conveyor_cancel(conveyor: State<'_, Conveyor>, id: String) -> Result<Line, AppError> {
    Ok(conveyor.client()?.cancel(&id).await?)
}

/// «Принял»: refused with `unmerged` when the branch holds work main lacks.
#[tauri::command]
pub async fn conveyor_accept(conveyor: State<'_, Conveyor>, id: String) -> Result<Line, AppError> {
    Ok(conveyor.client()?.accept(&id).await?)
}

/// «Есть замечания»: the daemon resumes the line's session with the remarks.
#[tauri::command]
pub async fn conveyor_remarks(
    conveyor: State<'_, Conveyor>,
    id: String,
    text: String,
) -> Result<Line, AppError> {
    Ok(conveyor.client()?.remarks(&id, &text).await?)
}

#[tauri::command]
pub async fn conveyor_review(conveyor: State<'_, Conveyor>) -> Result<Review, AppError> {
    Ok(conveyor.client()?.review().await?)
}

#[tauri::command]
pub async fn conveyor_answer(
    conveyor: State<'_, Conveyor>,
    id: String,
    answer: Answer,
) -> Result<Question, AppError> {
    Ok(conveyor.client()?.answer(&id, &answer).await?)
}

/// Takes an answer back while its `answer` step has not started: the question as it was before
/// the answer. After the step started the daemon refuses with `answer_started` (the app's
/// `daemon` code, the daemon's code beside it).
#[tauri::command]
pub async fn conveyor_take_back(
    conveyor: State<'_, Conveyor>,
    id: String,
) -> Result<Question, AppError> {
    Ok(conveyor.client()?.take_back(&id).await?)
}

/// The "decided without Anton" catalogue, newest first: of one project (or of all), at most
/// `limit` entries (the daemon's 200 when absent; out of 1–1000 it refuses with
/// `bad_request`, the app's `daemon` code).
#[tauri::command]
pub async fn conveyor_decisions(
    conveyor: State<'_, Conveyor>,
    project: Option<String>,
    limit: Option<u32>,
) -> Result<Vec<Decision>, AppError> {
    Ok(conveyor
        .client()?
        .decisions(project.as_deref(), limit)
        .await?)
}

#[tauri::command]
pub async fn conveyor_budget(conveyor: State<'_, Conveyor>) -> Result<Budget, AppError> {
    Ok(conveyor.client()?.budget().await?)
}

/// What would stop a step now: the daemon runs its checks again and answers.
#[tauri::command]
pub async fn conveyor_preflight(conveyor: State<'_, Conveyor>) -> Result<Preflight, AppError> {
    Ok(conveyor.client()?.preflight().await?)
}

/// What the daemon tells Anton outside the app: whether the Catcher (Telegram) and PlanFix are
/// configured, where they go, and the outbox's messages with their counts.
#[tauri::command]
pub async fn conveyor_outbox(conveyor: State<'_, Conveyor>) -> Result<Outbox, AppError> {
    Ok(conveyor.client()?.outbox().await?)
}

/// Settings' "send a test message": queued at once and sent even at night. Without a
/// `[catcher]` the daemon refuses with `catcher_off` (the app's `daemon` code, the daemon's
/// beside it).
#[tauri::command]
pub async fn conveyor_outbox_test(conveyor: State<'_, Conveyor>) -> Result<OutboxItem, AppError> {
    Ok(conveyor.client()?.outbox_test().await?)
}

/// An OS notification; the page decides when (only "needs you" and "ready to accept").
#[tauri::command]
pub fn conveyor_notify<R: Runtime>(app: AppHandle<R>, notice: Notice) -> Result<(), AppError> {
    tracing::info!(title = %notice.title, body = %notice.body, "notification");
    app.notification()
        .builder()
        .title(&notice.title)
        .body(&notice.body)
        .show()
        .map_err(|e| AppError::new(ErrorCode::Internal, format!("notification: {e}")))
}
