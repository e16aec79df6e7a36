//! The budget's rule: may this step start now, and how much is it likely to cost.
//!
//! [`Policy`] decides from a [`Snapshot`] (the finished runs, the running steps' claims, the
//! server's last word, the account's park, and "now"); the daemon fills the snapshot from
//! SQLite, the night simulator from a virtual clock. Estimates ([`Estimate`]) come from the
//! kind's history, a claim ([`Reserve`]) is what a running step may still spend, a
//! [`Pool`] is one limit (rolling window, weekly cap, monthly credit), and [`calibration`]
//! reads a pool's size from the server's utilisation.

pub mod calibration;
mod claim;
mod config;
mod estimate;
pub mod policy;
mod pool;

pub use claim::Reserve;
pub use config::{BudgetConfig, InvalidBudget, Price, Threshold};
pub use estimate::{Estimate, History, SIZE_MIN_SAMPLES, quantile};
pub use policy::{
    Admitted, Class, DAY_MS, Decision, HOUR_MS, MINUTE_MS, Outcome, Policy, Run, ServerView,
    ServerWindow, Snapshot,
};
pub use pool::{Pool, month_bounds};
