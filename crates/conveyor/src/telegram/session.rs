//! Whether the test account's session still works, for the preflight.
//!
//! A session file that exists can still be signed out (Telegram ends sessions a person
//! terminates from another device, or that sat unused for months). Only Telegram knows, so the
//! preflight asks it through the same client a check uses, but not every time it runs (every
//! minute): the answer is kept until the session file changes (a `telegram-login` renewed it)
//! or it is [`RECHECK`] old. An answer that could not be had (no network, a broken venv) is
//! kept for [`RETRY`] only: it says nothing about the session.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use super::{TelegramError, UserClient};
use crate::config::TelegramConfig;

/// How long a "works" or "signed out" answer stands.
pub const RECHECK: Duration = Duration::from_secs(6 * 3600);
/// How long "could not ask" stands before the next preflight asks again.
pub const RETRY: Duration = Duration::from_secs(10 * 60);
/// How long the preflight waits for the client's first line (it connects to Telegram).
const ASK_TIMEOUT: Duration = Duration::from_secs(45);

/// What Telegram said of the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Signed in, as this account.
    Works { me: String },
    /// Signed out: a `telegram-login` is needed.
    SignedOut { detail: String },
    /// Telegram could not be asked; nothing is known.
    Unknown { why: String },
}

/// The file as it was when asked: a renewal changes its size or time.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    path: PathBuf,
    len: u64,
    modified: Option<SystemTime>,
}

impl Stamp {
    fn of(path: &Path) -> Stamp {
        let meta = std::fs::metadata(path).ok();
        Stamp {
            path: path.to_path_buf(),
            len: meta.as_ref().map_or(0, std::fs::Metadata::len),
            modified: meta.and_then(|m| m.modified().ok()),
        }
    }
}

#[derive(Debug)]
struct Seen {
    stamp: Stamp,
    at: Instant,
    verdict: Verdict,
}

/// The last answer, shared by every preflight of the daemon (one ask for all projects).
#[derive(Debug, Default)]
pub struct SessionMemo(Mutex<Option<Seen>>);

impl SessionMemo {
    /// The kept answer for `session` when it still stands at `now`.
    fn kept(&self, session: &Path, now: Instant) -> Option<Verdict> {
        let seen = self.0.lock().expect("session memo poisoned");
        let seen = seen.as_ref()?;
        let stands = match seen.verdict {
            Verdict::Unknown { .. } => RETRY,
            _ => RECHECK,
        };
        (seen.stamp == Stamp::of(session) && now.duration_since(seen.at) < stands)
            .then(|| seen.verdict.clone())
    }

    fn keep(&self, session: &Path, now: Instant, verdict: Verdict) {
        *self.0.lock().expect("session memo poisoned") = Some(Seen {
            stamp: Stamp::of(session),
            at: now,
            verdict,
        });
    }

    /// What Telegram says of the session at `session` (which exists), asked at most once per
    /// [`RECHECK`] unless the file changes. `out` is where the client's script is written.
    /// A check at night found the session signed out: the preflight says so from now on,
    /// without asking, until the session file changes (a new login).
    pub fn signed_out(&self, session: &Path, detail: String) {
        self.keep(session, Instant::now(), Verdict::SignedOut { detail });
    }

    pub async fn verdict(&self, cfg: &TelegramConfig, session: &Path, out: &Path) -> Verdict {
        if let Some(v) = self.kept(session, Instant::now()) {
            return v;
        }
        let verdict = ask(cfg, out).await;
        self.keep(session, Instant::now(), verdict.clone());
        verdict
    }
}

async fn ask(cfg: &TelegramConfig, out: &Path) -> Verdict {
    let started = tokio::time::timeout(ASK_TIMEOUT, UserClient::start(cfg, out)).await;
    match started {
        Ok(Ok(client)) => {
            let me = client.me().to_string();
            client.close().await;
            Verdict::Works { me }
        }
        Ok(Err(TelegramError::ExpiredSession { detail, .. })) => Verdict::SignedOut { detail },
        Ok(Err(e)) => Verdict::Unknown { why: e.to_string() },
        Err(_) => Verdict::Unknown {
            why: format!("no answer in {} s", ASK_TIMEOUT.as_secs()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_stands_until_the_file_changes_or_it_is_old() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("conveyor_test.session");
        std::fs::write(&f, "a").unwrap();
        let memo = SessionMemo::default();
        let t0 = Instant::now();
        let works = Verdict::Works {
            me: "tester".into(),
        };
        memo.keep(&f, t0, works.clone());
        assert_eq!(memo.kept(&f, t0 + RECHECK / 2), Some(works));
        assert_eq!(memo.kept(&f, t0 + RECHECK), None, "old: asked again");

        // A renewed session (another size) is asked about at once.
        std::fs::write(&f, "renewed").unwrap();
        assert_eq!(memo.kept(&f, t0 + Duration::from_secs(1)), None);
    }

    #[test]
    fn not_knowing_is_kept_briefly() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("conveyor_test.session");
        std::fs::write(&f, "a").unwrap();
        let memo = SessionMemo::default();
        let t0 = Instant::now();
        let unknown = Verdict::Unknown {
            why: "offline".into(),
        };
        memo.keep(&f, t0, unknown.clone());
        assert_eq!(memo.kept(&f, t0 + RETRY / 2), Some(unknown));
        assert_eq!(memo.kept(&f, t0 + RETRY), None);
    }
}
