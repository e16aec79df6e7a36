//! The daemon's configuration (`conveyor.toml`) and a project's checklist (`.conveyor.toml`).

mod budget;
mod checklist;
mod daemon;
mod invalid;
mod load;
mod notify;
mod secret;
mod token;

pub use budget::{BudgetConfig, Price, Threshold};
pub use checklist::{Check, Checklist, Hooks as ProjectHooks, Roles};
pub use daemon::{Config, RootMode};
pub use invalid::{Invalid, NotYetRead};
pub use notify::{CatcherConfig, Lang, PlanfixConfig, VaultConfig};
pub use secret::{read_secret, token_in};
