//! How the bot scenarios reach a bot: the chat as it is now, a message, a button press. The
//! real transport is the test account's Pyrogram client (`user_client.py`, a child process
//! speaking JSON lines); the tests' is a loopback fake Telegram (`mock-telegram.mjs`), which is
//! also the Bot API the bot under test polls. Both answer the same questions, so the runner
//! (`bot.rs`) cannot tell them apart.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};

use super::TelegramError;
use crate::config::TelegramConfig;

/// One inline button.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Button {
    pub text: String,
    /// Its `callback_data`; none for a URL or web-app button, which cannot be pressed here.
    #[serde(default)]
    pub data: Option<String>,
}

/// A message of the chat with the bot, as it is now (after its edits).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Message {
    pub id: i64,
    pub from_bot: bool,
    pub text: String,
    #[serde(default)]
    pub buttons: Vec<Vec<Button>>,
}

/// A way to talk to a bot as a person would.
pub trait Transport {
    /// The chat with `bot` as it is now, oldest first (the newest few dozen messages).
    fn chat(
        &mut self,
        bot: &str,
    ) -> impl Future<Output = Result<Vec<Message>, TelegramError>> + Send;
    /// Writes `text` to `bot`.
    fn send(
        &mut self,
        bot: &str,
        text: &str,
    ) -> impl Future<Output = Result<(), TelegramError>> + Send;
    /// Presses the button with `data` under message `id`; whether the bot answered the
    /// callback (`answerCallbackQuery`) within `timeout`.
    fn press(
        &mut self,
        bot: &str,
        id: i64,
        data: &str,
        timeout: Duration,
    ) -> impl Future<Output = Result<bool, TelegramError>> + Send;
    /// How often a waiting step looks at the chat again: the fake answers at once, Telegram
    /// limits how often a user may read history.
    fn poll_every(&self) -> Duration;
}

/// Telegram's usernames compare without `@` and case.
fn same_bot(a: &str, b: &str) -> bool {
    a.trim_start_matches('@')
        .eq_ignore_ascii_case(b.trim_start_matches('@'))
}

mod fake;
mod user_client;

pub use fake::Fake;
pub(super) use user_client::write_script;
pub use user_client::{UserClient, login, session_file};

/// The transport a check uses: the fake when the config names one, else the test account.
#[derive(Debug)]
pub(super) enum Any {
    Fake(Fake),
    // Boxed: one per check, and the child's pipes make it the larger by far.
    User(Box<UserClient>),
}

pub(super) async fn open(cfg: &TelegramConfig, out: &Path) -> Result<Any, TelegramError> {
    match (&cfg.fake_api, cfg.fake_chat) {
        (Some(base), Some(chat)) => Ok(Any::Fake(Fake::connect(base, chat).await?)),
        _ => Ok(Any::User(Box::new(UserClient::start(cfg, out).await?))),
    }
}

impl Any {
    pub(super) async fn close(self) {
        if let Any::User(u) = self {
            (*u).close().await;
        }
    }
}

impl Transport for Any {
    async fn chat(&mut self, bot: &str) -> Result<Vec<Message>, TelegramError> {
        match self {
            Any::Fake(t) => t.chat(bot).await,
            Any::User(t) => t.chat(bot).await,
        }
    }
    async fn send(&mut self, bot: &str, text: &str) -> Result<(), TelegramError> {
        match self {
            Any::Fake(t) => t.send(bot, text).await,
            Any::User(t) => t.send(bot, text).await,
        }
    }
    async fn press(
        &mut self,
        bot: &str,
        id: i64,
        data: &str,
        timeout: Duration,
    ) -> Result<bool, TelegramError> {
        match self {
            Any::Fake(t) => t.press(bot, id, data, timeout).await,
            Any::User(t) => t.press(bot, id, data, timeout).await,
        }
    }
    fn poll_every(&self) -> Duration {
        match self {
            Any::Fake(t) => t.poll_every(),
            Any::User(t) => t.poll_every(),
        }
    }
}
