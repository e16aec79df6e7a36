//! Every state change is broadcast to the `GET /api/events` subscribers (server-sent events).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use conveyor_api::{Event, EventKind, EventState};
use tokio::sync::broadcast;

use crate::store::{now_ms, rfc3339};

/// The broadcaster. A clone sends on the same channel and numbering (a run's signal handler,
/// which must own what it uses, holds one).
#[derive(Debug, Clone)]
pub struct Events {
    tx: broadcast::Sender<Event>,
    seq: Arc<AtomicU64>,
}

impl Events {
    /// Bumped by every event: read caches compare it to know they are stale.
    pub fn generation(&self) -> u64 {
        self.seq.load(Ordering::Acquire)
    }
}

impl Default for Events {
    fn default() -> Self {
        Events {
            tx: broadcast::channel(1024).0,
            seq: Arc::new(AtomicU64::new(0)),
        }
    }
}

/// The parts of an event other than its sequence number and time.
#[derive(Debug, Default, Clone)]
pub struct EventBody {
    pub line_id: Option<String>,
    pub project_id: Option<String>,
    pub step_n: Option<u32>,
    /// The new state, when the event is a state change.
    pub state: Option<EventState>,
    pub detail: Option<String>,
    /// A `run_event`'s run and transcript position.
    pub run: Option<conveyor_api::RunEvent>,
}

impl Events {
    /// Sends an event to whoever listens (nobody listening is fine).
    pub fn emit(&self, kind: EventKind, body: EventBody) {
        let ev = Event {
            seq: self.seq.fetch_add(1, Ordering::AcqRel) + 1,
            kind,
            line_id: body.line_id,
            project_id: body.project_id,
            step_n: body.step_n,
            state: body.state,
            detail: body.detail,
            at: rfc3339(now_ms()),
            run: body.run,
        };
        let _ = self.tx.send(ev);
    }

    /// A new subscription.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.tx.subscribe()
    }
}
