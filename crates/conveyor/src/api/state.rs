//! What the API's handlers take as state: the daemon's shared state, and what only the API
//! keeps (the cache of list answers). Each handler takes just the part it needs (axum's
//! `FromRef`).

use std::sync::Arc;

use axum::extract::FromRef;

use super::cache::ListCache;
use crate::state::Shared;

/// The daemon's shared state, as most handlers take it.
pub(crate) type AppState = Arc<Shared>;

/// The router's state: the daemon's shared state and the API's own.
#[derive(Clone)]
pub(crate) struct ApiState {
    pub(super) shared: AppState,
    pub(super) lists: Arc<ListCache>,
}

impl FromRef<ApiState> for AppState {
    fn from_ref(s: &ApiState) -> AppState {
        s.shared.clone()
    }
}

impl FromRef<ApiState> for Arc<ListCache> {
    fn from_ref(s: &ApiState) -> Arc<ListCache> {
        s.lists.clone()
    }
}
