//! `GET /api/budget`: the pools, the kinds' estimates, the misses and the server's last word.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

use super::step::StepKind;

wire! {
    /// `GET /api/budget`.
    pub struct Budget {
        /// Every configured pool, in the order window, weekly, monthly.
        pub pools: Vec<BudgetPool>,
        /// Estimates of the steps running now (counted against every pool).
        pub running_estimate_usd: f64,
        /// The steps running now: what each was admitted at, has spent so far and is counted
        /// for.
        pub running: Vec<RunningStep>,
        /// Per step kind: what history says a step costs.
        pub kinds: Vec<KindStats>,
        /// Steps cut by a usage limit or by their `--max-budget-usd` cap.
        pub misses: Misses,
        /// No step starts before this (a usage limit of the account).
        pub park_until: Option<String>,
        pub last_rate_limit: Option<RateLimit>,
    }
}

wire! {
    /// Which pool.
    pub enum PoolKind {
        /// The rolling window (5 hours by default).
        Window,
        /// The last 7 days.
        Weekly,
        /// The calendar month's credit in USD (`claude -p` on subscription plans).
        Monthly,
    }
}

wire! {
    /// One budget pool.
    pub struct BudgetPool {
        pub kind: PoolKind,
        /// The pool's span in seconds (the calendar month: its length).
        pub span_secs: u32,
        pub spent_usd: f64,
        pub threshold_usd: f64,
        /// When the pool next has room again (the oldest spending leaves a rolling pool, or
        /// the month turns); none when nothing is spent.
        pub resets_at: Option<String>,
        /// The server's own utilisation of this pool (0..1), when a `rate_limit_event` said.
        pub utilization: Option<f64>,
        /// The pool's real size as the server's utilisation shows it; none for a pool the
        /// server reports no utilisation of (the month).
        pub calibration: Option<Calibration>,
    }
}

wire! {
    /// One running step's claim on the pools.
    pub struct RunningStep {
        pub line_id: String,
        pub step_n: u32,
        pub kind: StepKind,
        /// What it was admitted at.
        pub estimate_usd: f64,
        /// What it has spent so far, from the usage the CLI reports as the run goes (the
        /// turn's output tokens counted from its text until the run's result gives the
        /// exact cost).
        pub live_usd: f64,
        /// What the budget counts for it: the larger of its estimate and what steps of its
        /// kind that spent as much went on to cost.
        pub claim_usd: f64,
    }
}

wire! {
    /// What the server's utilisation says a pool really holds: each `rate_limit_event` that
    /// gave a utilisation of the pool is one observation, our spending in the pool at that
    /// moment ÷ the utilisation. A lower bound when the account is also used elsewhere.
    pub struct Calibration {
        /// The median of the observations.
        pub observed_size_usd: f64,
        /// The threshold the daemon proposes (used when config says `threshold_usd = "auto"`,
        /// within its floor and ceiling).
        pub proposed_usd: f64,
        /// How far the observations scatter around it (1.4826 × their median absolute
        /// deviation: one standard deviation for normal scatter).
        pub spread_usd: f64,
        /// How many observations it rests on.
        pub observations: u32,
    }
}

wire! {
    /// What a step of one kind costs, from history.
    pub struct KindStats {
        pub kind: StepKind,
        /// Finished runs counted.
        pub count: u32,
        pub median_usd: Option<f64>,
        /// The high quantile (p90) of the finished runs' cost.
        pub high_usd: Option<f64>,
        /// The estimate the policy uses now for a step of this kind (margin included).
        pub estimate_usd: f64,
    }
}

wire! {
    /// Steps cut by a limit.
    pub struct Misses {
        pub total: u32,
        /// In the last 24 hours.
        pub recent: u32,
        /// Set when misses are frequent ("steps too large: cut them finer").
        pub advice: Option<String>,
    }
}

wire! {
    /// The last `rate_limit_event` the CLI reported.
    pub struct RateLimit {
        pub status: String,
        pub resets_at: Option<String>,
        pub rate_limit_type: Option<String>,
        pub utilization: Option<f64>,
        pub observed_at: String,
    }
}
