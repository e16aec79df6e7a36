//! The account a night runs on, and its window as the account itself counts it.

/// The account a night runs on: slots, the threshold (the account's real limit here) and its
/// window. The seeded nights use `main`'s constants; a trace sets them by flags.
#[derive(Debug, Clone, Copy)]
pub(super) struct Setup {
    pub(super) slots: usize,
    pub(super) threshold: f64,
    pub(super) window_min: i64,
    /// The account's real limit (the threshold unless `--calibrate` sets it apart).
    pub(super) real: f64,
    /// The account's window is a fixed block that opens with the first spending after the
    /// last one closed and empties all at once `window_min` later, as a subscription's
    /// five-hour window does (`--block`); else a rolling window.
    pub(super) block: bool,
}

impl Setup {
    pub(super) fn window_name(&self) -> &'static str {
        if self.block {
            "fixed block"
        } else {
            "rolling window"
        }
    }
}

/// The account's per-minute charges, and their sum over the window: the last `window_min`
/// minutes, or the block open now (`ends`: the minute it closes).
pub(super) struct Ledger {
    charges: std::collections::VecDeque<(i64, f64)>,
    pub(super) sum: f64,
    window_min: i64,
    block: bool,
    ends: Option<i64>,
}

impl Ledger {
    pub(super) fn new(window_min: i64, block: bool) -> Self {
        Ledger {
            charges: Default::default(),
            sum: 0.0,
            window_min,
            block,
            ends: None,
        }
    }

    pub(super) fn charge(&mut self, now: i64, usd: f64) {
        if self.block && self.ends.is_none() {
            self.ends = Some(now + self.window_min);
        }
        self.charges.push_back((now, usd));
        self.sum += usd;
    }

    /// When the window resets all at once (a block's close), as the server's `resetsAt` says.
    pub(super) fn resets_at(&self) -> Option<i64> {
        self.ends
    }

    pub(super) fn advance(&mut self, now: i64) {
        if self.block {
            if self.ends.is_some_and(|e| now >= e) {
                self.charges.clear();
                self.sum = 0.0;
                self.ends = None;
            }
            return;
        }
        while let Some((t, c)) = self.charges.front().copied() {
            if t > now - self.window_min {
                break;
            }
            self.sum -= c;
            self.charges.pop_front();
        }
    }

    /// When the window will have drained to `level` with no new charges (a block: when it
    /// closes, whatever `level`).
    pub(super) fn drained_to(&self, level: f64) -> i64 {
        if let Some(ends) = self.ends {
            return ends;
        }
        let mut left = self.sum;
        for (t, c) in &self.charges {
            left -= c;
            if left <= level {
                return t + self.window_min;
            }
        }
        self.charges.back().map_or(0, |(t, _)| t + self.window_min)
    }
}
