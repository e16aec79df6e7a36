//! `/api/events`: server-sent events of every state change.

use std::convert::Infallible;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::routing::get;
use futures_util::Stream;
use futures_util::StreamExt;
use tokio_stream::wrappers::BroadcastStream;

use super::state::{ApiState, AppState};

pub fn router() -> Router<ApiState> {
    Router::new().route("/api/events", get(events))
}

/// The SSE event name is the event's `kind`; the data is the JSON [`conveyor_api::Event`].
/// A subscriber too slow to keep up gets a `lagged` event and should reload.
#[utoipa::path(get, operation_id = "events", path = "/api/events", responses((status = 200,
    description = "Server-sent events, never ending: each event's name is its `kind` and its data one Event (a `lagged` event with `{}` means reload); a comment every 15 s keeps the stream alive",
    content_type = "text/event-stream", body = conveyor_api::Event)))]
async fn events(
    State(st): State<AppState>,
) -> Sse<impl Stream<Item = Result<SseEvent, Infallible>>> {
    let stop = st.shutdown.clone();
    let stream = BroadcastStream::new(st.events.subscribe())
        .map(|ev| {
            Ok(match ev {
                Ok(ev) => SseEvent::default()
                    .event(ev.kind.as_str())
                    .data(serde_json::to_string(&ev).unwrap_or_default()),
                Err(_) => SseEvent::default().event("lagged").data("{}"),
            })
        })
        .take_until(async move { stop.cancelled().await });
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}
