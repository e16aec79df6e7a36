//! Time as the daemon sees it: a [`Clock`] in the shared state (tests drive it). The configured
//! [`Night`] is `conveyor_core::night`, pure: every function takes the time it is asked about.

use std::fmt;
use std::sync::atomic::{AtomicI64, Ordering};

pub use conveyor_core::night::{Night, NightError, Zone};

/// Where the time comes from.
pub trait Clock: fmt::Debug + Send + Sync {
    /// Milliseconds since the epoch, UTC.
    fn now_ms(&self) -> i64;
}

/// The system's clock.
#[derive(Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        chrono::Utc::now().timestamp_millis()
    }
}

/// A clock a test sets and moves.
#[derive(Debug)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    pub fn new(at_ms: i64) -> ManualClock {
        ManualClock(AtomicI64::new(at_ms))
    }

    pub fn set(&self, at_ms: i64) {
        self.0.store(at_ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manual_clock_moves_when_told() {
        let c = ManualClock::new(5);
        assert_eq!(c.now_ms(), 5);
        c.set(9);
        assert_eq!(c.now_ms(), 9);
    }
}
