//! `/api/projects`.

use std::path::PathBuf;

use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use conveyor_api::{EventKind, NewProject, Project};

use super::{ApiError, ApiState, AppState};
use crate::events::EventBody;
use crate::git;
use crate::store::{self, ProjectRow, now_ms};
use conveyor_api::ErrorCode;

pub fn router() -> Router<ApiState> {
    Router::new().route("/api/projects", get(list).post(create))
}

#[utoipa::path(get, path = "/api/projects", responses((status = 200, body = Vec<Project>)))]
async fn list(State(st): State<AppState>) -> Result<Json<Vec<Project>>, ApiError> {
    Ok(Json(
        store::projects::all(&mut *st.store.conn().await?)
            .await?
            .iter()
            .map(ProjectRow::to_api)
            .collect(),
    ))
}

#[utoipa::path(post, path = "/api/projects", request_body = NewProject,
    responses((status = 201, body = Project), (status = 400, body = conveyor_api::ApiErrorBody)))]
async fn create(
    State(st): State<AppState>,
    body: Result<Json<NewProject>, JsonRejection>,
) -> Result<(StatusCode, Json<Project>), ApiError> {
    let Json(p) = body?;
    if p.name.trim().is_empty() {
        return Err(ApiError::bad_request("name is empty"));
    }
    let repo = PathBuf::from(&p.repo_path);
    if !repo.is_absolute() {
        return Err(ApiError::bad_request("repo_path must be absolute"));
    }
    let main = p.main_branch.clone().unwrap_or_else(|| "main".into());
    if git::branch_head(&repo, &main).await.is_err() {
        return Err(ApiError::bad_request(format!(
            "{} is not a git repository with a branch {main}",
            repo.display()
        )));
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
