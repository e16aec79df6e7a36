//! `/api/projects`.

use std::path::PathBuf;

use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use conveyor_api::{ApiErrorBody, EventKind, NewProject, Project, has_text};

use super::error::ApiError;
use super::state::{ApiState, AppState};
use crate::events::EventBody;
use crate::git;
use crate::store::{self, ProjectRow, now_ms};
use conveyor_api::ErrorCode;

pub fn router() -> Router<ApiState> {
    Router::new().route("/api/projects", get(list).post(create))
}

/// Every project.
#[utoipa::path(get, operation_id = "list_projects", path = "/api/projects", responses((status = 200, body = Vec<Project>)))]
async fn list(State(st): State<AppState>) -> Result<Json<Vec<Project>>, ApiError> {
    Ok(Json(
        store::projects::all(&mut *st.store.conn().await?)
            .await?
            .iter()
            .map(ProjectRow::to_api)
            .collect(),
    ))
}

/// Adds a project: a git repository on the daemon's machine that lines fork from and merge into.
#[utoipa::path(post, operation_id = "create_project", path = "/api/projects", request_body = NewProject,
    responses((status = 201, body = Project),
        (status = 400, description = "`bad_request`: a malformed body or a blank `name`", body = ApiErrorBody),
        (status = 409, description = "`exists`: a project by that name exists", body = ApiErrorBody),
        (status = 422, description = "`not_a_repository`: `repo_path` is not an absolute path to a git repository with `main_branch`", body = ApiErrorBody)))]
async fn create(
    State(st): State<AppState>,
    body: Result<Json<NewProject>, JsonRejection>,
) -> Result<(StatusCode, Json<Project>), ApiError> {
    let Json(p) = body?;
    if !has_text(&p.name) {
        return Err(ApiError::bad_request("name is blank"));
    }
    let repo = PathBuf::from(&p.repo_path);
    if !repo.is_absolute() {
        return Err(ApiError::unprocessable(
            ErrorCode::NotARepository,
            format!("repo_path {:?} is not absolute", p.repo_path),
        ));
    }
    let main = p.main_branch.clone().unwrap_or_else(|| "main".into());
    if git::branch_head(&repo, &main).await.is_err() {
        return Err(ApiError::unprocessable(
            ErrorCode::NotARepository,
            format!(
                "{} is not a git repository with a branch {main}",
                repo.display()
            ),
        ));
    }
    let row = ProjectRow {
        id: uuid::Uuid::new_v4().to_string(),
        name: p.name.trim().to_string(),
        repo_path: p.repo_path,
        main_branch: main,
        created_at: now_ms(),
    };
    if let Err(e) = store::projects::insert(&mut *st.store.conn().await?, &row).await {
        if store::projects::is_unique_violation(&e) {
            return Err(ApiError::conflict(
                ErrorCode::Exists,
                format!("a project named {} exists", row.name),
            ));
        }
        return Err(e.into());
    }
    st.events.emit(
        EventKind::Project,
        EventBody {
            project_id: Some(row.id.clone()),
            detail: Some("created".into()),
            ..EventBody::default()
        },
    );
    Ok((StatusCode::CREATED, Json(row.to_api())))
}
