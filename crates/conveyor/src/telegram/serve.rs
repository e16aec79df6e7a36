//! The tester's way to the Telegram checks from inside its sandbox. The test account's session
//! must never be readable by an agent, so the run cannot hold it: `conveyord telegram-check`
//! inside the sandbox connects to a Unix socket bound into the run (as the proxy's is), and the
//! daemon runs the scenarios outside with the vault's session and answers what the command
//! prints. One request a connection: a JSON line `{"scenario": <path or null>}`; the answer is
//! the report's text, then a last line `exit <code>`.
//!
//! What the request may name is narrow: a scenario file under the run's own worktree's
//! `.conveyor/telegram/` (so the daemon never reads another file for an agent), and the
//! project's `[telegram]` bots come from fresh main, never the line's branch (so a line cannot
//! point the check at the production bot by editing its own `.conveyor.toml`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
#[cfg(unix)]
use tokio::net::{UnixListener, UnixStream};
// Off Unix (pult's embedded daemon on Windows) there is no sandbox to reach into: the socket
// cannot be made, and the stand-ins say so (`crate::no_unix`).
#[cfg(not(unix))]
use crate::no_unix::{UnixListener, UnixStream};
use tokio_util::sync::CancellationToken;

use super::{SCENARIO_DIR, SessionMemo, Setup, TelegramError, check, render, session_file};
use crate::config::{ProjectTelegram, TelegramConfig};

/// What a tester's run may have the daemon check.
#[derive(Debug, Clone)]
pub struct Job {
    pub config: TelegramConfig,
    /// The project's bots, from fresh main.
    pub project: ProjectTelegram,
    /// The run's worktree.
    pub worktree: PathBuf,
    /// Where screenshots are kept (outside the sandbox, with the run).
    pub out: PathBuf,
    /// The run the checks are for.
    pub run_id: i64,
    /// Where a check that could not run for the account's sake is told.
    pub held: Arc<Held>,
    /// The preflight's memory of the session: a check that finds it signed out says so there.
    pub memo: Arc<SessionMemo>,
}

/// The checks that could not run for the test account's or the machine's sake, by run, and how
/// many times each step's run was held so: the line code takes them when the run ends. In
/// memory: a restart ends every run, and the preflight then asks Telegram itself.
#[derive(Debug, Default)]
pub struct Held {
    // std Mutex: never held across an await.
    runs: Mutex<HashMap<i64, String>>,
    steps: Mutex<HashMap<String, u32>>,
}

impl Held {
    fn record(&self, run_id: i64, why: String) {
        self.runs.lock().expect("held poisoned").insert(run_id, why);
    }

    /// Why a check of `run_id` could not run, if one could not (taken once).
    pub fn take(&self, run_id: i64) -> Option<String> {
        self.runs.lock().expect("held poisoned").remove(&run_id)
    }

    /// Counts one more held run of `step_id`; how many so far.
    pub fn again(&self, step_id: &str) -> u32 {
        let mut steps = self.steps.lock().expect("held poisoned");
        let n = steps.entry(step_id.to_string()).or_default();
        *n += 1;
        *n
    }
}

#[derive(Deserialize)]
struct Request {
    #[serde(default)]
    scenario: Option<String>,
}

/// Serves the socket until `stop`; checks run one at a time.
pub(crate) async fn serve(listener: UnixListener, job: Job, stop: CancellationToken) {
    loop {
        let conn = tokio::select! {
            () = stop.cancelled() => return,
            c = listener.accept() => c,
        };
        let Ok((stream, _)) = conn else { continue };
        tokio::select! {
            () = stop.cancelled() => return,
            () = answer(stream, &job) => {}
        }
    }
}

async fn answer(stream: UnixStream, job: &Job) {
    let (read, mut write) = stream.into_split();
    let mut line = String::new();
    if BufReader::new(read).read_line(&mut line).await.is_err() {
        return;
    }
    let (text, code) = match run(&line, job).await {
        Ok((text, pass)) => (text, i32::from(!pass)),
        Err(e) if e.is_the_accounts() => {
            if let TelegramError::ExpiredSession { detail, .. } = &e
                && let Some(dir) = &job.config.session_dir
            {
                job.memo.signed_out(&session_file(dir), detail.clone());
            }
            job.held.record(job.run_id, e.to_string());
            (
                format!(
                    "error: {e}\nThe check could not run, for the test account's sake, not the \
                     line's: the line waits until it can. Say nothing of Telegram in your \
                     verdict.\n"
                ),
                2,
            )
        }
        Err(e) => (format!("error: {e}\n"), 2),
    };
    let _ = write
        .write_all(format!("{text}exit {code}\n").as_bytes())
        .await;
    let _ = write.shutdown().await;
}

async fn run(line: &str, job: &Job) -> Result<(String, bool), TelegramError> {
    let req: Request = serde_json::from_str(line).map_err(|e| TelegramError::BadRequest {
        message: e.to_string(),
    })?;
    let only = req
        .scenario
        .map(|s| inside_scenarios(&job.worktree, Path::new(&s)))
        .transpose()?;
    let setup = Setup {
        config: &job.config,
        project: &job.project,
        out: &job.out,
    };
    let outcomes = check(setup, &job.worktree, only.as_deref()).await?;
    Ok((
        render(&outcomes),
        outcomes.iter().all(|o| o.findings.is_empty()),
    ))
}

/// The scenario file, if it is one of the worktree's (no `..`, no link out of it).
fn inside_scenarios(worktree: &Path, given: &Path) -> Result<PathBuf, TelegramError> {
    let folder = worktree.join(SCENARIO_DIR);
    let path = if given.is_relative() {
        worktree.join(given)
    } else {
        given.to_path_buf()
    };
    let real = path.canonicalize().ok();
    let root = folder.canonicalize().ok();
    match (real, root) {
        (Some(r), Some(root)) if r.starts_with(&root) && r.is_file() => Ok(r),
        _ => Err(TelegramError::NoScenarios { path }),
    }
}

/// `conveyord telegram-check` inside a sandbox: asks the daemon over `socket`, prints what it
/// answers, and gives its exit code.
///
/// # Errors
/// The socket cannot be reached or the daemon closed it without an answer.
#[cfg(unix)]
pub async fn ask(socket: &Path, scenario: Option<&Path>) -> Result<(String, i32), TelegramError> {
    let io = |e: std::io::Error| TelegramError::Io {
        path: socket.to_path_buf(),
        source: e,
    };
    let mut stream = UnixStream::connect(socket).await.map_err(io)?;
    let req = serde_json::json!({"scenario": scenario.map(|s| s.display().to_string())});
    stream
        .write_all(format!("{req}\n").as_bytes())
        .await
        .map_err(io)?;
    let mut text = String::new();
    let mut lines = BufReader::new(stream).lines();
    while let Some(l) = lines.next_line().await.map_err(io)? {
        if let Some(code) = l.strip_prefix("exit ").and_then(|c| c.parse().ok()) {
            return Ok((text, code));
        }
        text.push_str(&l);
        text.push('\n');
    }
    Err(TelegramError::Transport {
        what: format!("the daemon's Telegram socket {}", socket.display()),
        message: "closed without an answer".into(),
    })
}

/// Off Unix there is no socket to ask through (see `crate::no_unix`).
///
/// # Errors
/// Always: the check socket needs Linux.
#[cfg(not(unix))]
pub async fn ask(socket: &Path, _scenario: Option<&Path>) -> Result<(String, i32), TelegramError> {
    Err(TelegramError::Io {
        path: socket.to_path_buf(),
        source: crate::no_unix::unsupported(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request names a scenario of the run's own worktree or nothing: the daemon reads no
    /// other file for an agent (the session file as a "scenario" would quote it in an error).
    #[test]
    fn only_the_worktrees_scenarios_can_be_asked_for() {
        let wt = tempfile::tempdir().unwrap();
        let folder = wt.path().join(SCENARIO_DIR);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("pay.toml"), "target = \"bot\"\n").unwrap();
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("conveyor_test.session");
        std::fs::write(&secret, "x").unwrap();
        std::os::unix::fs::symlink(&secret, folder.join("link.toml")).unwrap();

        let ok = inside_scenarios(wt.path(), Path::new(".conveyor/telegram/pay.toml")).unwrap();
        assert_eq!(ok, folder.join("pay.toml").canonicalize().unwrap());
        for bad in [
            PathBuf::from(".conveyor/telegram/../../../etc/passwd"),
            secret.clone(),
            PathBuf::from(".conveyor/telegram/link.toml"),
            PathBuf::from(".conveyor/telegram"),
            PathBuf::from("a.txt"),
        ] {
            assert!(
                matches!(
                    inside_scenarios(wt.path(), &bad),
                    Err(TelegramError::NoScenarios { .. })
                ),
                "{} was let through",
                bad.display()
            );
        }
    }
}
