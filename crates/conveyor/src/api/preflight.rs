//! `/api/preflight`: what would stop lines from running, checked now.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use conveyor_api::Preflight;

use super::error::ApiError;
use super::state::{ApiState, AppState};

pub fn router() -> Router<ApiState> {
    Router::new().route("/api/preflight", get(preflight))
}

/// Runs every check now (the agent CLI and its login, the root guard, git, the data folder and
/// its free space, each project's repository, main branch, checkout and own commands) and
/// answers what blocks; a block that clears lets waiting lines go on at once.
#[utoipa::path(get, operation_id = "get_preflight", path = "/api/preflight",
    responses((status = 200, body = Preflight)))]
async fn preflight(State(st): State<AppState>) -> Result<Json<Preflight>, ApiError> {
    Ok(Json(st.refresh_preflight().await?.to_api()))
}
