//! `conveyor.toml`: the daemon's configuration, its defaults, and what makes a parsed one
//! unusable. Reading it from a file is `load`'s; its token, `token`'s.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;

use serde::Deserialize;

use super::invalid::{Invalid, NotYetRead};
use super::notify::{self, CatcherConfig, PlanfixConfig, VaultConfig};
use crate::clock::Night;
use conveyor_core::budget::BudgetConfig;

use crate::error::Error;

/// How the agent gets past the CLI's refusal to bypass permissions as root.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RootMode {
    /// Set `IS_SANDBOX=1` in the agent's environment (the machine is the sandbox).
    Sandbox,
    /// Run the agent as this non-root user (uid/gid looked up in `/etc/passwd`).
    User(String),
    /// Do nothing special: for a daemon that is not root, or a non-bypass `permission_mode`
    /// with an allow-list (`allowed_tools`).
    None,
}

/// `[sandbox]` of `conveyor.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxConfig {
    /// `required` (the default): every agent run starts inside `bwrap`, and a machine that
    /// cannot (no `bwrap`, user namespaces off) is a preflight blocker. `off`: runs start as
    /// plain processes, and the preflight and pult's banner say so loudly.
    #[serde(default)]
    pub mode: SandboxMode,
    /// The `bwrap` binary; by default the one on `PATH`.
    #[serde(default = "default_bwrap")]
    pub bwrap: PathBuf,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            mode: SandboxMode::default(),
            bwrap: default_bwrap(),
        }
    }
}

/// `[sandbox] mode`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SandboxMode {
    #[default]
    Required,
    Off,
}

fn default_bwrap() -> PathBuf {
    PathBuf::from("bwrap")
}

/// `conveyor.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Where the API listens (`127.0.0.1:0` picks a free port).
    #[serde(default = "default_listen")]
    pub listen: SocketAddr,
    /// SQLite, worktrees, journals, logs.
    pub data_dir: PathBuf,
    /// The bearer token file (one line). Ignored when `token` is set.
    #[serde(default)]
    pub token_file: Option<PathBuf>,
    /// The bearer token itself (embedding and tests).
    #[serde(default)]
    pub token: Option<String>,
    /// Lines run at once (each in its own project).
    #[serde(default = "default_slots")]
    pub slots: usize,
    /// The agent CLI.
    #[serde(default = "default_claude")]
    pub claude_bin: PathBuf,
    /// Hours in which nothing is sent to Anton (`"22:00-08:00"`, `HH:MM[:SS]` either end); the
    /// morning list freezes when the night ends, and a fork written by day is decided by
    /// default unless irreversible and expensive. None: no day at all (nothing freezes, every
    /// entry is judged).
    #[serde(default)]
    pub night: Option<String>,
    /// The IANA time zone `night` is read in (`"Europe/Moscow"`); the server's when absent.
    #[serde(default)]
    pub timezone: Option<String>,
    /// Anton's vault: a folder of notes that counts as every project's memory too (the judge
    /// reads it, and a question from a step that read no memory is sent back). `vault =
    /// "/srv/brain"`, or `[vault] path, check` where `check` says whether it is open: closed,
    /// steps that need memory wait.
    #[serde(default)]
    pub vault: Option<VaultConfig>,
    /// The Catcher (Anton's Telegram chat with a bot); nothing is sent when absent.
    #[serde(default)]
    pub catcher: Option<CatcherConfig>,
    /// PlanFix, for the report of a line that names a task; none is written when absent.
    #[serde(default)]
    pub planfix: Option<PlanfixConfig>,
    /// The Telegram checks' test account and tools (`conveyord telegram-check`); none: a
    /// project with scenarios is told what to set.
    #[serde(default)]
    pub telegram: Option<super::TelegramConfig>,
    /// The `conveyord` binary whose `hook verdict` checks a judge's verdict in its Stop hook;
    /// by default the running one, or one beside it or on `PATH`.
    #[serde(default)]
    pub hook_bin: Option<PathBuf>,
    /// `--permission-mode` of every run.
    #[serde(default = "default_permission_mode")]
    pub permission_mode: String,
    /// `--allowedTools` of every run (for the non-bypass modes).
    #[serde(default)]
    pub allowed_tools: Vec<String>,
    /// How the root guard is handled; by default `sandbox` when the daemon runs as root.
    #[serde(default)]
    pub root_mode: Option<RootMode>,
    /// `--model` of every run, when set.
    #[serde(default)]
    pub model: Option<String>,
    /// Extra environment for the agent on top of the daemon's own.
    #[serde(default)]
    pub agent_env: BTreeMap<String, String>,
    /// Whether the agent inherits the daemon's environment (then `agent_env` on top); `false`
    /// gives it only `PATH` and `agent_env`.
    #[serde(default = "yes")]
    pub agent_env_inherit: bool,
    /// `false`: serve the API only and start no line (a read-only replica, tests).
    #[serde(default = "yes")]
    pub run_lines: bool,
    /// A step's run is stopped after this long.
    #[serde(default = "default_step_timeout")]
    pub step_timeout_secs: u64,
    /// Commands from `.conveyor.toml` (checks, regression) are stopped after this long.
    #[serde(default = "default_command_timeout")]
    pub command_timeout_secs: u64,
    /// Wait after a generic 429 that carries no reset time (an API-key login).
    #[serde(default = "default_limit_retry")]
    pub limit_retry_secs: u64,
    /// Attempts of a step before its line needs Anton (usage limits and interruptions aside).
    #[serde(default = "default_step_attempts")]
    pub step_attempts: u32,
    /// Stop-hook blocks per step before it fails with what stayed red.
    #[serde(default = "default_hook_rounds")]
    pub hook_rounds: u32,
    /// Identity for checkpoint and merge commits when the repository has none.
    #[serde(default = "default_git_name")]
    pub git_name: String,
    #[serde(default = "default_git_email")]
    pub git_email: String,
    #[serde(default)]
    pub budget: BudgetConfig,
    /// `[sandbox]`: whether every agent run lives inside bubblewrap (DESIGN.md, "Containment").
    #[serde(default)]
    pub sandbox: SandboxConfig,
    /// How often the preflight runs again (it also runs at start and on `GET /api/preflight`).
    #[serde(default = "default_preflight_interval")]
    pub preflight_interval_secs: u64,
    /// How often the scheduler looks at the queue when nothing woke it, in milliseconds.
    #[serde(default = "default_tick")]
    pub tick_ms: u64,
    /// The file this config was read from (not a key of it); `None` for a config built in
    /// code ([`Config::new`]). Errors found after loading (the token file, `root_mode`) name it.
    #[serde(skip)]
    pub file: Option<PathBuf>,
}

fn default_preflight_interval() -> u64 {
    60
}
fn default_listen() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 8790))
}
fn yes() -> bool {
    true
}
fn default_slots() -> usize {
    3
}
fn default_claude() -> PathBuf {
    PathBuf::from("claude")
}
fn default_permission_mode() -> String {
    "bypassPermissions".into()
}
fn default_step_timeout() -> u64 {
    3 * 3600
}
fn default_command_timeout() -> u64 {
    3600
}
fn default_limit_retry() -> u64 {
    900
}
fn default_step_attempts() -> u32 {
    2
}
fn default_hook_rounds() -> u32 {
    3
}
fn default_git_name() -> String {
    "conveyor".into()
}
fn default_git_email() -> String {
    "conveyor@localhost".into()
}
fn default_tick() -> u64 {
    1000
}

impl Config {
    /// The keys this config sets that no code reads yet.
    pub fn not_yet_read(&self) -> Vec<NotYetRead> {
        // Every key of the daemon's config is read today (`night` by the judge since it came).
        Vec::new()
    }

    pub(super) fn validate(&self) -> Result<(), Invalid> {
        if self.slots == 0 {
            return Err(Invalid::NoSlots);
        }
        self.budget.validate().map_err(|e| Invalid::Budget {
            field: e.field,
            rule: e.rule,
        })?;
        notify::validate(
            self.catcher.as_ref(),
            self.planfix.as_ref(),
            self.vault.as_ref(),
        )?;
        if let Some((field, rule)) = self.telegram.as_ref().and_then(|t| t.invalid()) {
            return Err(Invalid::Field { field, rule });
        }
        if self.token.is_none() && self.token_file.is_none() {
            return Err(Invalid::NoToken);
        }
        if let Some(spec) = &self.night {
            Night::parse(spec, self.timezone.as_deref())
                .map_err(|e| Invalid::Night(e.to_string()))?;
        } else if let Some(tz) = &self.timezone {
            tz.parse::<chrono_tz::Tz>().map_err(|_| {
                Invalid::Night(crate::clock::NightError::Zone(tz.clone()).to_string())
            })?;
        }
        Ok(())
    }

    /// The configured night (validated at load); `None` when there is none.
    pub fn night(&self) -> Option<Night> {
        Night::parse(self.night.as_deref()?, self.timezone.as_deref()).ok()
    }

    /// An [`Error::Config`] about this config, naming the file it was read from (for a config
    /// built in code, which has none: `(config built in code)`).
    pub(crate) fn error(&self, message: impl Into<String>) -> Error {
        Error::Config {
            path: self
                .file
                .clone()
                .unwrap_or_else(|| PathBuf::from("(config built in code)")),
            message: message.into(),
        }
    }

    /// The root handling in force: the configured one, else `sandbox` as root, else none.
    pub fn effective_root_mode(&self) -> RootMode {
        if let Some(m) = &self.root_mode {
            return m.clone();
        }
        if crate::exec::is_root() {
            RootMode::Sandbox
        } else {
            RootMode::None
        }
    }
}
