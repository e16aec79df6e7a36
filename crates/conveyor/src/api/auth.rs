//! The bearer-token layer over every route but the public ones.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

use super::error::ApiError;
use super::state::AppState;

/// `Authorization: Bearer <token>`, compared in constant time.
pub(super) async fn auth(
    State(st): State<AppState>,
    req: Request,
    next: Next,
) -> Result<Response, ApiError> {
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
