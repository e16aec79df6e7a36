//! The real transport: the test account's Pyrogram client (`user_client.py`, kurigram), a
//! child process speaking JSON lines, and the one-time sign-in that makes its session.

use super::*;

/// The file Pyrogram keeps the test account's session in, inside the session folder.
#[must_use]
pub fn session_file(session_dir: &Path) -> PathBuf {
    session_dir.join(format!("{}.session", USER_CLIENT_NAME))
}

/// The Pyrogram client's name: its session is `<session_dir>/conveyor_test.session`.
const USER_CLIENT_NAME: &str = "conveyor_test";

/// The user client script, written beside the run's output when used.
pub(super) const USER_CLIENT_PY: &str = include_str!("../../../telegram/user_client.py");

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
pub(in crate::telegram) fn write_script(
    out: &Path,
    name: &str,
    text: &str,
) -> Result<PathBuf, TelegramError> {
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
