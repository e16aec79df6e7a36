//! `[telegram]` of `conveyor.toml` (the test account and the tools the checks run with) and of
//! a project's `.conveyor.toml` (which bot is the test one and which is production).

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The daemon's `[telegram]`: the test account's user client and the mini-app browser. The
/// session folder and the API id and hash live in the vault, never in a project, and no agent
/// run can see them (the sandbox hides the vault; the checks run in the daemon, outside it).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TelegramConfig {
    /// The test account's Pyrogram session folder (`conveyord telegram-login` fills it once).
    #[serde(default)]
    pub session_dir: Option<PathBuf>,
    /// A file holding the test account's `api_id` (my.telegram.org).
    #[serde(default)]
    pub api_id_file: Option<PathBuf>,
    /// A file holding its `api_hash`.
    #[serde(default)]
    pub api_hash_file: Option<PathBuf>,
    /// A file holding the test bot's token: mini-apps' `initData` is signed with it.
    #[serde(default)]
    pub test_bot_token_file: Option<PathBuf>,
    /// The Python that has `kurigram` (the venv `conveyord telegram-setup` makes).
    #[serde(default = "default_python")]
    pub python: PathBuf,
    /// Node.js, for the mini-app runner.
    #[serde(default = "default_node")]
    pub node: PathBuf,
    /// A `node_modules` folder that holds `playwright-core`.
    #[serde(default)]
    pub node_modules: Option<PathBuf>,
    /// The system's Chromium (Debian's `chromium`): Playwright downloads no browser.
    #[serde(default = "default_chromium")]
    pub chromium: PathBuf,
    /// A loopback fake Telegram (`tests/fixtures/mock-telegram.mjs`) instead of the test
    /// account: the tests' transport. Never set on a real daemon.
    #[serde(default)]
    pub fake_api: Option<String>,
    /// The fake's chat with the bot (the test user's id).
    #[serde(default)]
    pub fake_chat: Option<i64>,
}

fn default_python() -> PathBuf {
    "python3".into()
}
fn default_node() -> PathBuf {
    "node".into()
}
fn default_chromium() -> PathBuf {
    "chromium".into()
}

impl TelegramConfig {
    /// Resolves the relative paths against the config file's folder.
    pub(crate) fn resolve(&mut self, base: &Path) {
        for p in [
            &mut self.session_dir,
            &mut self.api_id_file,
            &mut self.api_hash_file,
            &mut self.test_bot_token_file,
            &mut self.node_modules,
        ]
        .into_iter()
        .flatten()
        {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        }
    }

    /// What is wrong with the values themselves (not with the files they name).
    pub(crate) fn invalid(&self) -> Option<(&'static str, &'static str)> {
        match (&self.fake_api, self.fake_chat) {
            (Some(u), _) if !u.starts_with("http://127.0.0.1:") => Some((
                "telegram.fake_api",
                "must be a loopback URL (http://127.0.0.1:<port>): it is the tests' fake",
            )),
            (Some(_), None) => Some(("telegram.fake_chat", "is required with fake_api")),
            _ => None,
        }
    }
}

/// A project's `[telegram]` in `.conveyor.toml`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ProjectTelegram {
    /// The bot the scenarios talk to (`@shop_test_bot`).
    pub test_bot: Option<String>,
    /// The production bot: a scenario aimed at it is refused before anything is sent.
    pub prod_bot: Option<String>,
}
