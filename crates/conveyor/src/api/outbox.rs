//! `/api/outbox`: what the daemon has told, or will tell, Anton outside the app.

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use conveyor_api::{ApiErrorBody, ChannelStatus, ErrorCode, Outbox, OutboxItem};

use super::error::ApiError;
use super::state::{ApiState, AppState};
use crate::store::outbox;
use crate::tell::{self, text};

pub fn router() -> Router<ApiState> {
    Router::new()
        .route("/api/outbox", get(list))
        .route("/api/outbox/test", post(test))
}

/// The newest 200 rows, pending first.
const SHOWN: i64 = 200;

/// Whether the Catcher and PlanFix are configured (never their tokens), and the messages to
/// them: pending first (held ones wait for the night's end), then the newest sent and failed.
#[utoipa::path(get, operation_id = "get_outbox", path = "/api/outbox",
    responses((status = 200, body = Outbox)))]
async fn list(State(st): State<AppState>) -> Result<Json<Outbox>, ApiError> {
    let c = &mut *st.store.conn().await?;
    let rows = outbox::list(c, SHOWN).await?;
    let (pending, sent, failed) = outbox::counts(c).await?;
    let count = |n: i64| u32::try_from(n).unwrap_or(u32::MAX);
    Ok(Json(Outbox {
        catcher: ChannelStatus {
            configured: st.cfg.catcher.is_some(),
            target: st.cfg.catcher.as_ref().map(|c| c.chat_id.to_string()),
        },
        planfix: ChannelStatus {
            configured: st.cfg.planfix.is_some(),
            target: st.cfg.planfix.as_ref().map(|p| p.base_url.clone()),
        },
        items: rows.iter().map(preview).collect(),
        pending: count(pending),
        sent: count(sent),
        failed: count(failed),
    }))
}

/// A row with the first line of what it says, as text.
fn preview(r: &outbox::OutboxRow) -> OutboxItem {
    let body: tell::Body = serde_json::from_str(&r.body).unwrap_or_default();
    let plain = text::plain(&body.text);
    let first: String = plain
        .lines()
        .next()
        .unwrap_or("")
        .chars()
        .take(160)
        .collect();
    let shown = match (first.is_empty(), r.kind) {
        (false, _) => first,
        (true, conveyor_api::OutboxKind::Digest) => format!("{} messages", body.members.len()),
        (true, _) => r.target.clone().unwrap_or_default(),
    };
    r.to_api(shown)
}

/// Queues a test message to the Catcher, sent even at night: Settings' "send a test message".
#[utoipa::path(post, operation_id = "test_outbox", path = "/api/outbox/test",
    responses((status = 201, body = OutboxItem),
        (status = 409, description = "`catcher_off`: no `[catcher]` in the daemon's config", body = ApiErrorBody)))]
async fn test(State(st): State<AppState>) -> Result<(StatusCode, Json<OutboxItem>), ApiError> {
    let now = st.clock.now_ms();
    let c = &mut *st.store.conn().await?;
    let Some(id) = tell::test(c, &st.cfg, now).await? else {
        return Err(ApiError::conflict(
            ErrorCode::CatcherOff,
            "the Catcher is not configured: add [catcher] bot_token_file and chat_id to the daemon's config",
        ));
    };
    let row = outbox::get(c, id)
        .await?
        .ok_or_else(|| ApiError::not_found("the test message is gone"))?;
    st.told();
    Ok((StatusCode::CREATED, Json(preview(&row))))
}
