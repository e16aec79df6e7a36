//! The cache of `GET /api/lines` answers: what the API keeps beside the daemon's shared
//! state, below the handlers that use it and the state that holds it.

use std::collections::HashMap;

/// `GET /api/lines` answers by query, with the event generation they were made at: the list
/// is what a UI polls, so answers are cached until the next event (every state change emits
/// one) or for at most [`LIST_CACHE_TTL`].
#[derive(Debug, Default)]
pub(crate) struct ListCache {
    // std Mutex: never held across an await.
    answers: std::sync::Mutex<HashMap<String, CachedList>>,
    /// One recomputation at a time; the others wait and take its answer.
    pub(super) refresh: tokio::sync::Mutex<()>,
}

/// One cached `GET /api/lines` answer: valid while no event happened since and for at most
/// [`LIST_CACHE_TTL`] (a safety net for writes that emit no event, such as a run's cost).
#[derive(Debug, Clone)]
pub(super) struct CachedList {
    pub(super) generation: u64,
    pub(super) made: std::time::Instant,
    pub(super) body: axum::body::Bytes,
    /// How many lines the page holds.
    pub(super) shown: i64,
    /// How many lines match the filters, over all pages (`X-Total-Count`).
    pub(super) total: i64,
}

/// How long a cached list answer may live without an event.
const LIST_CACHE_TTL: std::time::Duration = std::time::Duration::from_millis(1000);

/// The most answers kept (then the cache starts over).
const LIST_CACHE_MAX: usize = 256;

impl ListCache {
    /// The answer to `key` made at `generation`, if still fresh: (body, shown, total).
    pub(super) fn get(&self, key: &str, generation: u64) -> Option<(axum::body::Bytes, i64, i64)> {
        self.answers
            .lock()
            .expect("cache poisoned")
            .get(key)
            .filter(|c| c.generation == generation && c.made.elapsed() < LIST_CACHE_TTL)
            .map(|c| (c.body.clone(), c.shown, c.total))
    }

    pub(super) fn put(&self, key: String, answer: CachedList) {
        let mut cache = self.answers.lock().expect("cache poisoned");
        if cache.len() > LIST_CACHE_MAX {
            cache.clear();
        }
        cache.insert(key, answer);
    }
}
