//! `/api/health`: whether the daemon answers, and its version. Public, like the document.

use axum::routing::get;
use axum::{Json, Router};

use super::state::ApiState;

pub fn router() -> Router<ApiState> {
    Router::new().route("/api/health", get(health))
}

/// Whether the daemon answers, and its version (a client checks it is compatible).
#[utoipa::path(get, operation_id = "health", path = "/api/health", responses((status = 200, body = conveyor_api::Health)))]
pub(super) async fn health() -> Json<conveyor_api::Health> {
    Json(conveyor_api::Health {
        status: "ok".into(),
        version: env!("CARGO_PKG_VERSION").into(),
    })
}
