//! The daemon's configuration (`conveyor.toml`) and a project's checklist (`.conveyor.toml`).

mod checklist;
mod daemon;
mod invalid;
mod load;
mod notify;
mod secret;
mod telegram;
mod token;

pub use checklist::{Checklist, Hooks as ProjectHooks, ProjectSandbox};
pub use conveyor_core::budget::{BudgetConfig, Price, Threshold};
pub use conveyor_core::plan::Check;
pub use conveyor_core::roles::Roles;
pub use daemon::{Config, RootMode, SandboxConfig, SandboxMode};
pub use invalid::{Invalid, NotYetRead};
pub use notify::{CatcherConfig, Lang, PlanfixConfig, VaultConfig};
pub use secret::{read_secret, token_in};
pub use telegram::{ProjectTelegram, TelegramConfig};
