//! What stops a Telegram check as a whole (a failed step is a finding, not an error).

use std::path::PathBuf;

use conveyor_core::telegram::ScenarioError;

/// What stops every scenario of a check.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TelegramError {
    #[error("{0}")]
    Scenario(#[from] ScenarioError),
    #[error("no Telegram scenarios at {}: scenarios are `.conveyor/telegram/*.toml`", path.display())]
    NoScenarios { path: PathBuf },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "conveyor.toml has no {what}: the Telegram checks need it (docs/conveyor.md, \"Telegram checks\")"
    )]
    NotConfigured { what: &'static str },
    #[error(".conveyor.toml has no [telegram] test_bot: a bot scenario needs the bot to talk to")]
    NoTestBot,
    #[error(
        "the test account has no session at {}: run `conveyord telegram-login` once (docs/conveyor.md, \"Telegram checks\")",
        path.display()
    )]
    NoSession { path: PathBuf },
    #[error(
        "the test account's session at {} no longer works ({detail}): run `conveyord telegram-login` again",
        path.display()
    )]
    ExpiredSession { path: PathBuf, detail: String },
    #[error("cannot start {program}: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("{what}: {message}")]
    Transport { what: String, message: String },
    #[error("the check's request: {message}")]
    BadRequest { message: String },
}

impl TelegramError {
    /// The check could not run for the machine's or the test account's sake (no config, no
    /// session or one signed out, no kurigram, Telegram out of reach), not for anything in the
    /// line's project: what a tester concludes from it is not the line's, and the line waits for
    /// the preflight instead of going to a fixer who cannot help.
    #[must_use]
    pub fn is_the_accounts(&self) -> bool {
        matches!(
            self,
            TelegramError::NotConfigured { .. }
                | TelegramError::NoSession { .. }
                | TelegramError::ExpiredSession { .. }
                | TelegramError::Spawn { .. }
                | TelegramError::Transport { .. }
        )
    }
}
