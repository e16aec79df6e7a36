//! The HTTP API (axum): one router per resource, merged here with the bearer-token layer
//! (every route but [`openapi::PUBLIC`]: `/api/health` and the document). Errors are JSON `{code, message}` with stable codes.

mod budget;
mod error;
mod events;
mod lines;
mod openapi;
mod outbox;
mod preflight;
mod projects;
mod review;

use std::sync::Arc;

use axum::extract::{FromRef, Request, State};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::get;
use axum::{Json, Router};

pub use error::ApiError;

use crate::state::Shared;

/// The daemon's shared state, as most handlers take it.
pub(crate) type AppState = Arc<Shared>;

/// The router's state: the daemon's shared state, and what only the API keeps (the cache of
/// list answers). Each handler takes just the part it needs (axum's `FromRef`).
#[derive(Clone)]
pub(crate) struct ApiState {
    shared: AppState,
    lists: Arc<lines::ListCache>,
}

impl FromRef<ApiState> for AppState {
    fn from_ref(s: &ApiState) -> AppState {
        s.shared.clone()
    }
}

impl FromRef<ApiState> for Arc<lines::ListCache> {
    fn from_ref(s: &ApiState) -> Arc<lines::ListCache> {
        s.lists.clone()
    }
}

/// The whole API over the daemon's shared state.
pub fn app(shared: Arc<Shared>) -> Router {
    let state = ApiState {
        shared,
        lists: Arc::default(),
    };
    let protected = Router::new()
        .merge(projects::router())
        .merge(lines::router())
        .merge(review::router())
        .merge(budget::router())
        .merge(events::router())
        .merge(preflight::router())
        .merge(outbox::router())
        .route_layer(middleware::from_fn_with_state(state.clone(), auth));
    Router::new()
        .route("/api/health", get(health))
        .merge(openapi::router())
        .merge(protected)
        .fallback(|| async { ApiError::not_found("no such route") })
        .with_state(state)
}

/// Whether the daemon answers, and its version (a client checks it is compatible).
#[utoipa::path(get, operation_id = "health", path = "/api/health", responses((status = 200, body = conveyor_api::Health)))]
async fn health() -> Json<conveyor_api::Health> {
    Json(conveyor_api::Health {
        status: "ok".into(),
        version: env!("CARGO_PKG_VERSION").into(),
    })
}

/// `Authorization: Bearer <token>`, compared in constant time.
async fn auth(State(st): State<AppState>, req: Request, next: Next) -> Result<Response, ApiError> {
    let given = req
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    if !constant_eq(given.as_bytes(), st.token.as_bytes()) {
        return Err(ApiError::unauthorized());
    }
    Ok(next.run(req).await)
}

fn constant_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
