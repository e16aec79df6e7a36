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

/// The loopback fake Telegram of the tests: its `/test/*` endpoints are what the user does.
#[derive(Debug)]
pub struct Fake {
    http: reqwest::Client,
    base: String,
    chat: i64,
    bot: String,
}

impl Fake {
    /// Connects to the fake at `base` as the user of `chat`.
    ///
    /// # Errors
    /// The fake does not answer.
    pub async fn connect(base: &str, chat: i64) -> Result<Fake, TelegramError> {
        // The fake is on loopback: a proxy from the environment must not see the calls.
        let http = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(30))
            .build()
            .map_err(|e| fake_error(base, &e))?;
        let base = base.trim_end_matches('/').to_string();
        let me: Value = get(&http, &format!("{base}/test/bot")).await?;
        let bot = me["username"].as_str().unwrap_or_default().to_string();
        Ok(Fake {
            http,
            base,
            chat,
            bot,
        })
    }

    fn is_its_bot(&self, bot: &str) -> Result<(), TelegramError> {
        if same_bot(bot, &self.bot) {
            Ok(())
        } else {
            Err(TelegramError::Transport {
                what: format!("the fake Telegram at {}", self.base),
                message: format!("no bot {bot} there (its bot is @{})", self.bot),
            })
        }
    }

    async fn post(&self, path: &str, body: Value) -> Result<Value, TelegramError> {
        let url = format!("{}{path}", self.base);
        let r = self
            .http
            .post(&url)
            .json(&body)
            .send()
            .await
            .map_err(|e| fake_error(&url, &e))?;
        let status = r.status();
        let v: Value = r.json().await.map_err(|e| fake_error(&url, &e))?;
        if !status.is_success() {
            return Err(TelegramError::Transport {
                what: format!("POST {url}"),
                message: format!("{status}: {v}"),
            });
        }
        Ok(v)
    }
}

fn fake_error(what: &str, e: &reqwest::Error) -> TelegramError {
    TelegramError::Transport {
        what: what.to_string(),
        message: e.to_string(),
    }
}

async fn get(http: &reqwest::Client, url: &str) -> Result<Value, TelegramError> {
    let r = http
        .get(url)
        .send()
        .await
        .map_err(|e| fake_error(url, &e))?;
    let status = r.status();
    let v: Value = r.json().await.map_err(|e| fake_error(url, &e))?;
    if !status.is_success() {
        return Err(TelegramError::Transport {
            what: format!("GET {url}"),
            message: format!("{status}: {v}"),
        });
    }
    Ok(v)
}

/// A Bot API message as the fake stores it, as a [`Message`].
fn from_bot_api(m: &Value) -> Message {
    let buttons = m["reply_markup"]["inline_keyboard"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|row| {
                    row.as_array()
                        .into_iter()
                        .flatten()
                        .map(|b| Button {
                            text: b["text"].as_str().unwrap_or_default().to_string(),
                            data: b["callback_data"].as_str().map(str::to_string),
                        })
                        .collect()
                })
                .collect()
        })
        .unwrap_or_default();
    Message {
        id: m["message_id"].as_i64().unwrap_or_default(),
        from_bot: m["from"]["is_bot"].as_bool().unwrap_or(false),
        text: m["text"].as_str().unwrap_or_default().to_string(),
        buttons,
    }
}

impl Transport for Fake {
    async fn chat(&mut self, bot: &str) -> Result<Vec<Message>, TelegramError> {
        self.is_its_bot(bot)?;
        let v = get(
            &self.http,
            &format!("{}/test/messages?chat_id={}", self.base, self.chat),
        )
        .await?;
        Ok(v.as_array()
            .into_iter()
            .flatten()
            .map(from_bot_api)
            .collect())
    }

    async fn send(&mut self, bot: &str, text: &str) -> Result<(), TelegramError> {
        self.is_its_bot(bot)?;
        self.post("/test/reply", json!({"chat_id": self.chat, "text": text}))
            .await
            .map(drop)
    }

    async fn press(
        &mut self,
        bot: &str,
        id: i64,
        data: &str,
        timeout: Duration,
    ) -> Result<bool, TelegramError> {
        self.is_its_bot(bot)?;
        let pressed = self
            .post(
                "/test/press",
                json!({"chat_id": self.chat, "message_id": id, "data": data}),
            )
            .await?;
        let query = pressed["callback_query_id"].clone();
        // The user's app shows a spinner until the bot answers the query, or gives up.
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let sent = get(&self.http, &format!("{}/test/sent", self.base)).await?;
            let answered = sent.as_array().into_iter().flatten().any(|s| {
                s["method"].as_str() == Some("answerCallbackQuery")
                    && s["callback_query_id"] == query
            });
            if answered {
                return Ok(true);
            }
            if tokio::time::Instant::now() >= deadline {
                return Ok(false);
            }
            tokio::time::sleep(self.poll_every()).await;
        }
    }

    fn poll_every(&self) -> Duration {
        Duration::from_millis(100)
    }
}

/// The file Pyrogram keeps the test account's session in, inside the session folder.
#[must_use]
pub fn session_file(session_dir: &Path) -> PathBuf {
    session_dir.join(format!("{}.session", USER_CLIENT_NAME))
}

/// The Pyrogram client's name: its session is `<session_dir>/conveyor_test.session`.
const USER_CLIENT_NAME: &str = "conveyor_test";

/// The user client script, written beside the run's output when used.
pub(super) const USER_CLIENT_PY: &str = include_str!("../../telegram/user_client.py");

/// The test account's Pyrogram client, a child process answering one JSON line per request.
#[derive(Debug)]
pub struct UserClient {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    session: PathBuf,
    me: String,
}

/// How long one request to the user client may take before the check gives up on it: a
/// stuck connection to Telegram must end the check at night, not hang it.
const USER_CLIENT_DEADLINE: Duration = Duration::from_secs(90);

impl UserClient {
    /// Starts the client with the vault's session; the session is checked (signed in, not
    /// expired) before this answers.
    ///
    /// # Errors
    /// No session (run `conveyord telegram-login`), an expired one, no `kurigram`, a missing
    /// API id or hash file.
    pub async fn start(cfg: &TelegramConfig, out: &Path) -> Result<UserClient, TelegramError> {
        let account = Account::of(cfg)?;
        let session_dir = account.session_dir;
        let session = session_file(session_dir);
        if !session.is_file() {
            return Err(TelegramError::NoSession { path: session });
        }
        let script = write_script(out, "user_client.py", USER_CLIENT_PY)?;
        let mut child = tokio::process::Command::new(&cfg.python)
            .arg(&script)
            .args(account.args("serve"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|source| TelegramError::Spawn {
                program: cfg.python.display().to_string(),
                source,
            })?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        let mut c = UserClient {
            child,
            stdin,
            stdout,
            session,
            me: String::new(),
        };
        // The script's first line says whether the session works, and as whom.
        let first = c.read().await?;
        c.me = first["me"].as_str().unwrap_or_default().to_string();
        Ok(c)
    }

    async fn read(&mut self) -> Result<Value, TelegramError> {
        let mut line = String::new();
        let read = tokio::time::timeout(USER_CLIENT_DEADLINE, self.stdout.read_line(&mut line))
            .await
            .map_err(|_| self.error("no answer in 90 s"))?
            .map_err(|e| self.error(&e.to_string()))?;
        if read == 0 {
            return Err(self.error("it exited (its error is in the log above)"));
        }
        let v: Value = serde_json::from_str(&line)
            .map_err(|e| self.error(&format!("{e}: {}", line.trim())))?;
        if v["ok"].as_bool() == Some(true) {
            return Ok(v["result"].clone());
        }
        let message = v["error"].as_str().unwrap_or("no error text").to_string();
        Err(match v["kind"].as_str() {
            Some("no_session") => TelegramError::NoSession {
                path: self.session.clone(),
            },
            Some("expired") => TelegramError::ExpiredSession {
                path: self.session.clone(),
                detail: message,
            },
            _ => self.error(&message),
        })
    }

    fn error(&self, message: &str) -> TelegramError {
        TelegramError::Transport {
            what: "the test account's client (user_client.py)".into(),
            message: message.to_string(),
        }
    }

    async fn request(&mut self, req: Value) -> Result<Value, TelegramError> {
        let mut line = req.to_string();
        line.push('\n');
        self.stdin
            .write_all(line.as_bytes())
            .await
            .map_err(|e| self.error(&e.to_string()))?;
        self.stdin
            .flush()
            .await
            .map_err(|e| self.error(&e.to_string()))?;
        self.read().await
    }

    /// The test account's username (or id), as Telegram said when the client started.
    pub fn me(&self) -> &str {
        &self.me
    }

    /// Ends the client (it disconnects when its input closes).
    pub async fn close(mut self) {
        drop(self.stdin);
        if tokio::time::timeout(Duration::from_secs(10), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

impl Transport for UserClient {
    async fn chat(&mut self, bot: &str) -> Result<Vec<Message>, TelegramError> {
        let v = self.request(json!({"op": "chat", "bot": bot})).await?;
        serde_json::from_value(v).map_err(|e| self.error(&e.to_string()))
    }

    async fn send(&mut self, bot: &str, text: &str) -> Result<(), TelegramError> {
        self.request(json!({"op": "send", "bot": bot, "text": text}))
            .await
            .map(drop)
    }

    async fn press(
        &mut self,
        bot: &str,
        id: i64,
        data: &str,
        timeout: Duration,
    ) -> Result<bool, TelegramError> {
        let v = self
            .request(json!({"op": "press", "bot": bot, "id": id, "data": data,
                "timeout": timeout.as_secs_f64()}))
            .await?;
        Ok(v["answered"].as_bool().unwrap_or(false))
    }

    fn poll_every(&self) -> Duration {
        // Reading history more than about once a second gets a user account FLOOD_WAIT.
        Duration::from_secs(1)
    }
}

/// `conveyord telegram-login`: the user client's one-time sign-in, asking at this terminal
/// (the script refuses to run without one). The session lands in `[telegram] session_dir`.
///
/// # Errors
/// `[telegram]` lacks the session folder or the API id/hash files, or Python cannot start.
pub fn login(
    cfg: &TelegramConfig,
    scratch: &Path,
) -> Result<std::process::ExitStatus, TelegramError> {
    let account = Account::of(cfg)?;
    let script = write_script(scratch, "user_client.py", USER_CLIENT_PY)?;
    std::process::Command::new(&cfg.python)
        .arg(&script)
        .args(account.args("login"))
        .status()
        .map_err(|source| TelegramError::Spawn {
            program: cfg.python.display().to_string(),
            source,
        })
}

/// The test account's files, as `user_client.py` takes them in both its modes.
struct Account<'a> {
    session_dir: &'a Path,
    id_file: &'a Path,
    hash_file: &'a Path,
}

impl<'a> Account<'a> {
    fn of(cfg: &'a TelegramConfig) -> Result<Account<'a>, TelegramError> {
        let need = |v: &'a Option<PathBuf>, what: &'static str| {
            v.as_deref().ok_or(TelegramError::NotConfigured { what })
        };
        Ok(Account {
            session_dir: need(&cfg.session_dir, "[telegram] session_dir")?,
            id_file: need(&cfg.api_id_file, "[telegram] api_id_file")?,
            hash_file: need(&cfg.api_hash_file, "[telegram] api_hash_file")?,
        })
    }

    /// `user_client.py <mode> --session-dir … --name … --api-id-file … --api-hash-file …`.
    fn args(&self, mode: &str) -> Vec<std::ffi::OsString> {
        vec![
            mode.into(),
            "--session-dir".into(),
            self.session_dir.into(),
            "--name".into(),
            USER_CLIENT_NAME.into(),
            "--api-id-file".into(),
            self.id_file.into(),
            "--api-hash-file".into(),
            self.hash_file.into(),
        ]
    }
}

/// Writes a runner script beside the run's output (they are built into the binary).
pub(super) fn write_script(out: &Path, name: &str, text: &str) -> Result<PathBuf, TelegramError> {
    let dir = out.join(".runner");
    let path = dir.join(name);
    std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(&path, text))
        .map_err(|source| TelegramError::Io {
            path: path.clone(),
            source,
        })?;
    Ok(path)
}

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
