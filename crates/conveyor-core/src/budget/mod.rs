//! The budget's rule: may this step start now, and how much is it likely to cost.
//!
//! [`Policy`] decides from a [`Snapshot`] (the finished runs, the running steps' claims, the
//! server's last word, the account's park, and "now"); the daemon fills the snapshot from
//! SQLite, the night simulator from a virtual clock. Estimates ([`Estimate`]) come from the
//! kind's history, a claim ([`Reserve`]) is what a running step may still spend, a [`Pool`]
//! is one limit (rolling window, weekly cap, monthly credit), and [`calibration`] reads a
//! pool's size from the server's utilisation.
//!
//! From the bottom up: `time`, `quantile`, `config` and `snapshot` know nothing of the
//! policy; `policy` decides; `estimate`, `pool` and `claim` are the policy's parts, each an
//! `impl Policy` of its own.

pub mod calibration;
mod cap;
mod claim;
mod config;
mod estimate;
pub mod policy;
mod pool;
mod quantile;
mod risk;
mod snapshot;
mod time;

pub use config::{BudgetConfig, InvalidBudget, Price, Threshold};
pub use estimate::{Estimate, History, SIZE_MIN_SAMPLES};
pub use policy::{Admitted, Decision, Policy};
pub use pool::Pool;
pub use quantile::quantile;
pub use risk::Risk;
pub use snapshot::{
    Class, Outcome, Reserve, Run, ServerView, ServerWindow, Snapshot, TAIL_EDGES, TAIL_POINTS, Tail,
};
pub use time::{DAY_MS, HOUR_MS, MINUTE_MS, WEEK_MS, month_bounds};
