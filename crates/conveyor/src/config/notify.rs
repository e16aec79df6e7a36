//! `[catcher]`, `[planfix]` and `[vault]`: how the daemon tells Anton things outside the app,
//! and where his vault is and how to see that it is open.

use std::path::PathBuf;

use serde::Deserialize;

use super::invalid::Invalid;

/// The Catcher: Anton's Telegram chat with the daemon's bot (`[catcher]`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatcherConfig {
    /// A file holding the bot's token (one line, mode 0600). The token is never logged: it is
    /// part of every Bot API URL, so no URL is logged either.
    pub bot_token_file: PathBuf,
    /// Anton's chat with the bot: the only chat sent to, and the only one whose presses and
    /// replies are obeyed.
    pub chat_id: i64,
    /// The Bot API's base (tests point it at a mock on loopback).
    #[serde(default = "default_telegram")]
    pub api_base: String,
    /// The long poll's `timeout` for `getUpdates`, in seconds.
    #[serde(default = "default_poll")]
    pub poll_secs: u64,
    /// At least this long between two messages to the chat (Telegram allows about one a
    /// second per chat), in milliseconds.
    #[serde(default = "default_gap")]
    pub min_gap_ms: u64,
    /// The language of the messages: `ru` (default) or `en`.
    #[serde(default)]
    pub lang: Lang,
}

/// The language of what the Catcher and PlanFix are told.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lang {
    #[default]
    Ru,
    En,
}

fn default_telegram() -> String {
    "https://api.telegram.org".into()
}
fn default_poll() -> u64 {
    30
}
fn default_gap() -> u64 {
    1000
}

/// PlanFix, where a line with a task reports when done (`[planfix]`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanfixConfig {
    /// The account's address, e.g. `https://example.planfix.com` (the REST API is under
    /// `/rest/`).
    pub base_url: String,
    /// A file holding the REST API's bearer token (one line, mode 0600).
    pub token_file: PathBuf,
    /// The language of the report: `ru` (default) or `en`.
    #[serde(default)]
    pub lang: Lang,
}

/// Anton's vault (`vault = "/srv/brain"`, or `[vault] path, check`): a folder of notes that
/// counts as every project's memory. With a `check`, steps that need memory run only while it
/// passes.
#[derive(Debug, Clone, PartialEq)]
pub struct VaultConfig {
    pub path: PathBuf,
    /// A shell command that exits 0 while the vault is open (`mountpoint -q /srv/brain`).
    pub check: Option<String>,
    /// How often a closed vault is checked again, in seconds.
    pub recheck_secs: u64,
}

impl<'de> Deserialize<'de> for VaultConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Table {
            path: PathBuf,
            #[serde(default)]
            check: Option<String>,
            #[serde(default = "default_recheck")]
            recheck_secs: u64,
        }
        #[derive(Deserialize)]
        #[serde(untagged, expecting = "a path, or a table with `path` and `check`")]
        enum Either {
            Path(PathBuf),
            Table(Table),
        }
        Ok(match Either::deserialize(d)? {
            Either::Path(path) => VaultConfig {
                path,
                check: None,
                recheck_secs: default_recheck(),
            },
            Either::Table(t) => VaultConfig {
                path: t.path,
                check: t.check,
                recheck_secs: t.recheck_secs,
            },
        })
    }
}

fn default_recheck() -> u64 {
    60
}

pub(super) fn validate(
    catcher: Option<&CatcherConfig>,
    planfix: Option<&PlanfixConfig>,
    vault: Option<&VaultConfig>,
) -> Result<(), Invalid> {
    let bad = |field: &'static str, rule: &'static str| Err(Invalid::Field { field, rule });
    if let Some(c) = catcher {
        if !(c.api_base.starts_with("https://") || c.api_base.starts_with("http://")) {
            return bad("catcher.api_base", "must be an http(s) URL");
        }
        if c.poll_secs == 0 || c.poll_secs > 50 {
            return bad("catcher.poll_secs", "must be between 1 and 50");
        }
    }
    if let Some(p) = planfix
        && !(p.base_url.starts_with("https://") || p.base_url.starts_with("http://"))
    {
        return bad("planfix.base_url", "must be an http(s) URL");
    }
    if let Some(v) = vault {
        if v.check.as_deref().is_some_and(|c| c.trim().is_empty()) {
            return bad("vault.check", "must be a command, or left out");
        }
        if v.recheck_secs == 0 {
            return bad("vault.recheck_secs", "must be at least 1");
        }
    }
    Ok(())
}
