//! The state every part of the daemon shares — the config, the store, the event broadcaster,
//! the budget, the lines being advanced now — and the transitions that change a line or a
//! step and tell the subscribers. Like mini-redis's `db.rs` it knows nothing of who assembles
//! it: it imports neither the API, the scheduler nor recovery (those import it), so the flow
//! of a line, the handlers and the start-up wiring all meet here without a circle.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use conveyor_api::{EventKind, LineState, ReasonCode, StepState};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::budget::Budget;
use crate::clock::{Clock, SystemClock};
use crate::config::{Config, RootMode};
use crate::error::Result;
use crate::events::{EventBody, Events};
use crate::git::{Identity, Locks};
use crate::preflight::Report;
use crate::store::{self, Store};

/// Everything the scheduler, the line flow and the API share.
#[derive(Debug)]
pub struct Shared {
    pub(crate) cfg: Config,
    pub(crate) store: Store,
    pub(crate) events: Events,
    pub(crate) locks: Locks,
    pub(crate) budget: Budget,
    /// What time it is (tests drive it).
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) token: String,
    /// Wakes the scheduler (a line was added, a slot freed, …).
    pub(crate) wake: Notify,
    /// Wakes the outbox's senders (a message was written).
    pub(crate) outbox_wake: Notify,
    pub(crate) shutdown: CancellationToken,
    /// Lines being advanced now, by id.
    // std Mutex: never held across an await.
    advancing: Mutex<HashMap<String, Advancing>>,
    /// The commit each line's gate checks were last green at: the roles do not change the
    /// code, so the gate after a checking round does not run the suite again. In memory: a
    /// restart runs it once more.
    // std Mutex: never held across an await.
    pub(crate) green_at: Mutex<HashMap<String, String>>,
    /// Whether a command was red on a project's main at a commit: `(main sha, command)`. A
    /// command red on main too is someone else's, and main's result does not change.
    // std Mutex: never held across an await.
    pub(crate) red_on_main: Mutex<HashMap<(String, String), bool>>,
    /// When the vault's check last ran (unix ms).
    // std Mutex: never held across an await.
    pub(crate) vault_checked: Mutex<Option<i64>>,
    /// The user the agent runs as, when the root mode says so.
    pub(crate) agent_user: Option<crate::exec::AgentUser>,
    pub(crate) root_mode: RootMode,
    /// The last preflight, and one run at a time.
    preflight: PreflightHolder,
    /// Whether the Telegram test account's session works, as the preflight last asked (or a
    /// check at night found).
    pub(crate) telegram_session: Arc<crate::telegram::SessionMemo>,
    /// The testers' Telegram checks that could not run for the account's sake, by run.
    pub(crate) telegram_held: Arc<crate::telegram::serve::Held>,
}

#[derive(Debug, Default)]
struct PreflightHolder {
    // std RwLock: never held across an await.
    last: std::sync::RwLock<Option<Report>>,
    /// Single flight: a request that waited takes the report the run before it made.
    running: tokio::sync::Mutex<()>,
    /// Set once the first report exists.
    first: Notify,
}

/// A line being advanced: from its admission by the scheduler until its task ends.
#[derive(Debug, Clone)]
pub(crate) struct Advancing {
    /// Cancels just this line's run (Anton cancelled the line).
    pub cancel: CancellationToken,
    /// The budget's estimate of its step, counted as running from the admission on (before
    /// the run is recorded); 0 for the gate and the merge.
    pub estimate_usd: f64,
}

impl Shared {
    pub(crate) fn new(
        cfg: Config,
        store: Store,
        token: String,
        agent_user: Option<crate::exec::AgentUser>,
        root_mode: RootMode,
    ) -> Shared {
        Shared {
            budget: Budget::new(cfg.budget.clone()),
            clock: Arc::new(SystemClock),
            store,
            events: Events::default(),
            locks: Locks::default(),
            token,
            wake: Notify::new(),
            outbox_wake: Notify::new(),
            shutdown: CancellationToken::new(),
            advancing: Mutex::new(HashMap::new()),
            green_at: Mutex::new(HashMap::new()),
            red_on_main: Mutex::new(HashMap::new()),
            vault_checked: Mutex::new(None),
            agent_user,
            root_mode,
            cfg,
            preflight: PreflightHolder::default(),
            telegram_session: Arc::default(),
            telegram_held: Arc::default(),
        }
    }

    pub(crate) fn identity(&self) -> Identity {
        Identity {
            name: self.cfg.git_name.clone(),
            email: self.cfg.git_email.clone(),
        }
    }

    /// The agent's environment that is the same for every run (its line's paths aside): the
    /// config's `agent_env`, the root guard's `IS_SANDBOX`, and the agent user's home and
    /// git ownership pass. Steps add their line's; the preflight runs the CLI with just this.
    pub(crate) fn agent_base_env(&self) -> BTreeMap<String, String> {
        let mut env = self.cfg.agent_env.clone();
        if self.root_mode == RootMode::Sandbox {
            env.insert("IS_SANDBOX".into(), "1".into());
        }
        if let Some(u) = &self.agent_user {
            // The user's own home (the CLI keeps its transcripts under `$HOME/.claude`), unless
            // the config's `agent_env` names one explicitly.
            env.entry("HOME".into())
                .or_insert_with(|| u.home.to_string_lossy().into_owned());
            env.insert("USER".into(), u.name.clone());
            env.insert("LOGNAME".into(), u.name.clone());
            // The worktree's git folder lives in the project's repository, owned by the
            // daemon's user: let the agent's own git calls through git's ownership check.
            if !env.contains_key("GIT_CONFIG_COUNT") {
                env.insert("GIT_CONFIG_COUNT".into(), "1".into());
                env.insert("GIT_CONFIG_KEY_0".into(), "safe.directory".into());
                env.insert("GIT_CONFIG_VALUE_0".into(), "*".into());
            }
        }
        env
    }

    /// The last preflight's report; `None` until the first has run.
    pub(crate) fn preflight(&self) -> Option<Report> {
        self.preflight
            .last
            .read()
            .expect("preflight poisoned")
            .clone()
    }

    /// Waits until the first preflight has run (the scheduler starts nothing before it).
    pub(crate) async fn first_preflight(&self) {
        loop {
            let notified = self.preflight.first.notified();
            if self.preflight().is_some() || self.shutdown.is_cancelled() {
                return;
            }
            tokio::select! {
                () = notified => {}
                () = self.shutdown.cancelled() => return,
            }
        }
    }

    /// Runs the preflight now and keeps its report; when its outcome changed, tells the
    /// subscribers (`preflight` event) and wakes the scheduler (a block may have cleared).
    ///
    /// # Errors
    /// Database errors.
    pub async fn refresh_preflight(&self) -> Result<Report> {
        let _one = self.preflight.running.lock().await;
        let cx = crate::preflight::Context {
            cfg: &self.cfg,
            root_mode: &self.root_mode,
            agent_user: self.agent_user.as_ref(),
            agent_env: self.agent_base_env(),
            store: &self.store,
            cancel: &self.shutdown,
            telegram_session: &self.telegram_session,
        };
        let report = crate::preflight::run(&cx).await?;
        let changed = {
            let mut last = self.preflight.last.write().expect("preflight poisoned");
            let changed = last.as_ref().is_none_or(|l| !l.same_outcome(&report));
            *last = Some(report.clone());
            changed
        };
        self.preflight.first.notify_waiters();
        if changed {
            let blocking = report
                .items
                .iter()
                .filter(|i| i.level == conveyor_api::PreflightLevel::Blocking)
                .map(|i| i.code.as_str())
                .collect::<Vec<_>>();
            tracing::info!(blocking = ?blocking, "preflight");
            self.events.emit(
                EventKind::Preflight,
                EventBody {
                    detail: Some(if blocking.is_empty() {
                        "clear".into()
                    } else {
                        format!("blocking: {}", blocking.join(", "))
                    }),
                    ..EventBody::default()
                },
            );
            self.wake.notify_one();
        }
        Ok(report)
    }

    /// The API's bearer token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The line's own folder: its step logs, hook scripts and settings, and [`Self::agent_dir`].
    pub fn line_dir(&self, line_id: &str) -> PathBuf {
        self.cfg.data_dir.join("lines").join(line_id)
    }

    /// The part of the line's folder its agents write: the plan, the journal, a judge's
    /// verdict, the Stop hooks' rounds. The only part a sandboxed run may write; the rest of
    /// the line's folder (its hooks, settings and logs) it can read but not change.
    pub fn agent_dir(&self, line_id: &str) -> PathBuf {
        self.line_dir(line_id).join("agent")
    }

    /// The value of [`crate::exec::DAEMON_MARKER`] in the environment of every child this
    /// daemon starts for a line: its data folder, absolute.
    pub(crate) fn marker(&self) -> String {
        std::path::absolute(&self.cfg.data_dir)
            .unwrap_or_else(|_| self.cfg.data_dir.clone())
            .to_string_lossy()
            .into_owned()
    }

    /// The environment that marks a line's commands (checks, regression) as this daemon's.
    pub(crate) fn command_env(&self, line_id: &str) -> BTreeMap<String, String> {
        let mut env = BTreeMap::new();
        env.insert(crate::exec::DAEMON_MARKER.into(), self.marker());
        env.insert("CONVEYOR_LINE".into(), line_id.into());
        env
    }

    pub(crate) fn worktree_path(&self, line_id: &str) -> PathBuf {
        self.cfg.data_dir.join("worktrees").join(line_id)
    }

    /// The line is being advanced from now on; returns the token that cancels its run.
    pub(crate) fn start_advancing(&self, line_id: &str, estimate_usd: f64) -> CancellationToken {
        let cancel = self.shutdown.child_token();
        self.advancing
            .lock()
            .expect("advancing map poisoned")
            .insert(
                line_id.into(),
                Advancing {
                    cancel: cancel.clone(),
                    estimate_usd,
                },
            );
        cancel
    }

    /// The line's task ended.
    pub(crate) fn stop_advancing(&self, line_id: &str) {
        self.advancing
            .lock()
            .expect("advancing map poisoned")
            .remove(line_id);
    }

    /// The ids of the lines being advanced.
    pub(crate) fn advancing_ids(&self) -> Vec<String> {
        self.advancing
            .lock()
            .expect("advancing map poisoned")
            .keys()
            .cloned()
            .collect()
    }

    /// The budget's estimates of the steps of lines being advanced, by line (the gate and the
    /// merge claim nothing).
    pub(crate) fn admitted(&self) -> HashMap<String, f64> {
        self.advancing
            .lock()
            .expect("advancing map poisoned")
            .iter()
            .filter(|(_, a)| a.estimate_usd > 0.0)
            .map(|(id, a)| (id.clone(), a.estimate_usd))
            .collect()
    }

    /// Stops the line's run, if it is being advanced.
    pub(crate) fn cancel_run(&self, line_id: &str) {
        if let Some(a) = self
            .advancing
            .lock()
            .expect("advancing map poisoned")
            .get(line_id)
        {
            a.cancel.cancel();
        }
    }

    /// Changes a line's state and tells the subscribers; a cancelled line stays cancelled.
    ///
    /// # Errors
    /// Database errors.
    pub async fn set_line_state(
        &self,
        line_id: &str,
        state: LineState,
        reason: Option<(ReasonCode, &str)>,
        park_until: Option<i64>,
    ) -> Result<()> {
        let t = line_state_in(
            self,
            &mut *self.store.conn().await?,
            line_id,
            state,
            reason,
            park_until,
        )
        .await?;
        self.announce(t);
        Ok(())
    }

    /// Tells the subscribers about a state change written by [`line_state_in`], once its
    /// transaction is committed.
    pub(crate) fn announce(&self, t: Transition) {
        let Some(t) = t.0 else {
            return;
        };
        if t.told {
            self.told();
        }
        tracing::info!(
            line = t.line_id,
            state = t.state.as_str(),
            reason_code = t.code.map(ReasonCode::as_str),
            reason = t.reason,
            "line state"
        );
        self.events.emit(
            EventKind::Line,
            EventBody {
                line_id: Some(t.line_id),
                state: Some(t.state.into()),
                detail: t.reason,
                ..EventBody::default()
            },
        );
    }

    /// Something was written to the outbox: wake its senders and tell the subscribers.
    pub(crate) fn told(&self) {
        self.outbox_wake.notify_waiters();
        self.outbox_wake.notify_one();
        self.events.emit(
            EventKind::Outbox,
            EventBody {
                detail: Some("written".into()),
                ..EventBody::default()
            },
        );
    }

    /// Tells the subscribers that the line's questions moved (sorted, judged, sent back,
    /// answered). `validated` of them now need Anton: only such an event carries the state
    /// `validated` (what the app notifies about); the others carry none.
    pub(crate) fn announce_questions(&self, line_id: &str, validated: usize) {
        self.events.emit(
            EventKind::Question,
            EventBody {
                line_id: Some(line_id.into()),
                state: (validated > 0).then(|| conveyor_api::QuestionStatus::Validated.into()),
                detail: (validated > 0).then(|| format!("{validated} validated")),
                ..EventBody::default()
            },
        );
    }

    /// Changes a step's state and tells the subscribers.
    ///
    /// # Errors
    /// Database errors.
    pub(crate) async fn set_step_state(
        &self,
        line_id: &str,
        step_id: &str,
        n: i64,
        state: StepState,
        error: Option<&str>,
    ) -> Result<()> {
        store::steps::set_state(&mut *self.store.conn().await?, step_id, state, error).await?;
        tracing::info!(
            line = line_id,
            step = n,
            state = state.as_str(),
            error,
            "step state"
        );
        self.events.emit(
            EventKind::Step,
            EventBody {
                line_id: Some(line_id.into()),
                step_n: u32::try_from(n).ok(),
                state: Some(state.into()),
                detail: error.map(str::to_string),
                ..EventBody::default()
            },
        );
        Ok(())
    }
}

/// A line's state change written in a transaction, to be announced ([`Shared::announce`])
/// after the commit: what a change reports (an event, an outbox row) is never ahead of it.
#[must_use = "announce the change once its transaction is committed"]
#[derive(Debug)]
pub(crate) struct Transition(Option<Changed>);

impl Transition {
    /// Whether the state was written (a cancelled line keeps its state).
    pub(crate) fn written(&self) -> bool {
        self.0.is_some()
    }
}

#[derive(Debug)]
struct Changed {
    line_id: String,
    state: LineState,
    code: Option<ReasonCode>,
    reason: Option<String>,
    /// A message to Anton was written with it.
    told: bool,
}

/// Changes a line's state on `c` (the caller's transaction, or a connection of its own), and
/// writes what Anton is told of it (ready, rolled back, cannot pass the gate) on the same
/// connection; a cancelled line stays cancelled.
///
/// # Errors
/// Database errors.
pub(crate) async fn line_state_in(
    sh: &Shared,
    c: &mut sqlx::SqliteConnection,
    line_id: &str,
    state: LineState,
    reason: Option<(ReasonCode, &str)>,
    park_until: Option<i64>,
) -> Result<Transition> {
    let from = store::lines::state_of(c, line_id).await?;
    if !store::lines::set_state(c, line_id, state, reason, park_until).await? {
        tracing::debug!(
            line = line_id,
            state = state.as_str(),
            "line cancelled: state kept"
        );
        return Ok(Transition(None));
    }
    let told = match from {
        Some(from) => {
            crate::tell::on_line_state(c, &sh.cfg, line_id, from, state, reason, sh.clock.now_ms())
                .await?
        }
        None => false,
    };
    let (code, text) = reason.unzip();
    Ok(Transition(Some(Changed {
        line_id: line_id.into(),
        state,
        code,
        reason: text.map(str::to_string),
        told,
    })))
}
