//! The HTTP API (axum): one router per resource, merged here with the bearer-token layer
//! (every route but [`openapi::PUBLIC`]: `/api/health` and the document). Errors are JSON `{code, message}` with stable codes.

mod auth;
mod budget;
mod cache;
mod error;
mod events;
mod health;
mod lines;
mod openapi;
mod outbox;
mod preflight;
mod projects;
mod queue;
mod review;
mod runs;
mod state;

use std::sync::Arc;

use axum::Router;
use axum::middleware;

pub use error::ApiError;
use state::ApiState;

use crate::state::Shared;

/// The whole API over the daemon's shared state.
pub fn app(shared: Arc<Shared>) -> Router {
    let state = ApiState {
        shared,
        lists: Arc::default(),
    };
    let protected = Router::new()
        .merge(projects::router())
        .merge(queue::router())
        .merge(lines::router())
        .merge(runs::router())
        .merge(review::router())
        .merge(budget::router())
        .merge(events::router())
        .merge(preflight::router())
        .merge(outbox::router())
        .route_layer(middleware::from_fn_with_state(state.clone(), auth::auth));
    Router::new()
        .merge(health::router())
        .merge(openapi::router())
        .merge(protected)
        .fallback(|| async { ApiError::not_found("no such route") })
        .with_state(state)
}
