//! The daemon as a library: [`start`] opens the database, recovers from a crash, binds the API
//! and starts the scheduler; the returned [`ServerHandle`] stops it all. One
//! `CancellationToken` is the root of shutdown; the tasks live in a `JoinSet` that is drained.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use conveyor_api::{EventKind, LineState, StepState};
use tokio::sync::Notify;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::budget::Budget;
use crate::config::{Config, RootMode};
use crate::events::{EventBody, Events};
use crate::git::{Identity, Locks};
use crate::store::{self, Store};
use crate::{Error, Result, api, recovery, scheduler};

/// Everything the scheduler, the line flow and the API share.
#[derive(Debug)]
pub struct Shared {
    pub cfg: Config,
    pub store: Store,
    pub events: Events,
    pub locks: Locks,
    pub budget: Budget,
    pub token: String,
    /// Wakes the scheduler (a line was added, a slot freed, …).
    pub wake: Notify,
    pub shutdown: CancellationToken,
    /// Lines being advanced now, with a token that cancels just that line's run.
    // std Mutex: never held across an await.
    pub running: Mutex<HashMap<String, CancellationToken>>,
    /// The budget's estimates of the steps of lines being advanced, counted as running from
    /// their admission (before their run is recorded) until the line's task ends.
    // std Mutex: never held across an await.
    pub admitted: Mutex<HashMap<String, f64>>,
    /// `GET /api/lines` answers by query, with the event generation they were made at.
    // std Mutex: never held across an await.
    pub list_cache: Mutex<HashMap<String, CachedList>>,
    /// One `GET /api/lines` recomputation at a time; the others wait and take its answer.
    pub list_refresh: tokio::sync::Mutex<()>,
    /// The user the agent runs as, when the root mode says so.
    pub agent_user: Option<crate::exec::AgentUser>,
    pub root_mode: RootMode,
}

impl Shared {
    pub fn identity(&self) -> Identity {
        Identity {
            name: self.cfg.git_name.clone(),
            email: self.cfg.git_email.clone(),
        }
    }

    pub fn line_dir(&self, line_id: &str) -> PathBuf {
        self.cfg.data_dir.join("lines").join(line_id)
    }

    /// The value of [`crate::exec::DAEMON_MARKER`] in the environment of every child this
    /// daemon starts for a line: its data folder, absolute.
    pub fn marker(&self) -> String {
        std::path::absolute(&self.cfg.data_dir)
            .unwrap_or_else(|_| self.cfg.data_dir.clone())
            .to_string_lossy()
            .into_owned()
    }

    /// The environment that marks a line's commands (checks, regression) as this daemon's.
    pub fn command_env(&self, line_id: &str) -> std::collections::BTreeMap<String, String> {
        let mut env = std::collections::BTreeMap::new();
        env.insert(crate::exec::DAEMON_MARKER.into(), self.marker());
        env.insert("CONVEYOR_LINE".into(), line_id.into());
        env
    }

    pub fn worktree_path(&self, line_id: &str) -> PathBuf {
        self.cfg.data_dir.join("worktrees").join(line_id)
    }

    /// Changes a line's state and tells the subscribers; a cancelled line stays cancelled.
    ///
    /// # Errors
    /// Database errors.
    pub async fn set_line_state(
        &self,
        line_id: &str,
        state: LineState,
        reason: Option<&str>,
        park_until: Option<i64>,
    ) -> Result<()> {
        if !self
            .store
            .set_line_state(line_id, state, reason, park_until)
            .await?
        {
            tracing::debug!(
                line = line_id,
                state = state.as_str(),
                "line cancelled: state kept"
            );
            return Ok(());
        }
        tracing::info!(line = line_id, state = state.as_str(), reason, "line state");
        self.events.emit(
            EventKind::Line,
            EventBody {
                line_id: Some(line_id.into()),
                state: Some(state.into()),
                detail: reason.map(str::to_string),
                ..EventBody::default()
            },
        );
        Ok(())
    }

    /// Changes a step's state and tells the subscribers.
    ///
    /// # Errors
    /// Database errors.
    pub async fn set_step_state(
        &self,
        line_id: &str,
        step_id: &str,
        n: i64,
        state: StepState,
        error: Option<&str>,
    ) -> Result<()> {
        self.store.set_step_state(step_id, state, error).await?;
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

/// One cached `GET /api/lines` answer: valid while no event happened since and for at most
/// [`LIST_CACHE_TTL`] (a safety net for writes that emit no event, such as a run's cost).
#[derive(Debug, Clone)]
pub struct CachedList {
    pub generation: u64,
    pub made: std::time::Instant,
    pub body: axum::body::Bytes,
    /// How many lines the page holds.
    pub shown: i64,
    /// How many lines match the filters, over all pages (`X-Total-Count`).
    pub total: i64,
}

/// How long a cached list answer may live without an event.
pub const LIST_CACHE_TTL: std::time::Duration = std::time::Duration::from_millis(1000);

/// A running daemon.
#[derive(Debug)]
pub struct ServerHandle {
    /// Where the API listens.
    pub addr: SocketAddr,
    /// Cancel to stop everything (or call [`ServerHandle::stop`]).
    pub shutdown: CancellationToken,
    shared: Arc<Shared>,
    tasks: JoinSet<()>,
}

impl ServerHandle {
    /// The shared state (for embedding and tests).
    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Stops the API and the scheduler, stopping running agents, and waits for them.
    pub async fn stop(mut self) {
        self.shutdown.cancel();
        while self.tasks.join_next().await.is_some() {}
        self.shared.store.pool.close().await;
    }

    /// Waits until the daemon stops (after `shutdown` is cancelled).
    pub async fn wait(mut self) {
        while self.tasks.join_next().await.is_some() {}
        self.shared.store.pool.close().await;
    }
}

/// Opens everything and starts serving.
///
/// # Errors
/// Config, database, recovery or bind errors.
pub async fn start(cfg: Config) -> Result<ServerHandle> {
    for d in ["lines", "worktrees", "scratch"] {
        let p = cfg.data_dir.join(d);
        std::fs::create_dir_all(&p).map_err(|e| Error::io(&p, e))?;
    }
    let pool = store::open(&cfg.data_dir.join("conveyor.db")).await?;
    let token = cfg.read_token()?;
    let root_mode = cfg.effective_root_mode();
    let agent_user = match &root_mode {
        RootMode::User(name) => Some(
            crate::exec::lookup_user(name)
                .ok_or_else(|| cfg.error(format!("root_mode: no user {name:?} in /etc/passwd")))?,
        ),
        _ => None,
    };
    match &root_mode {
        RootMode::Sandbox => tracing::info!(
            permission_mode = %cfg.permission_mode,
            "agent runs as this user with IS_SANDBOX=1 (the CLI's root guard is lifted; the machine is the sandbox)"
        ),
        RootMode::User(u) => {
            let au = agent_user.as_ref().expect("looked up above");
            tracing::info!(
                user = %u,
                uid = au.uid,
                gid = au.gid,
                home = %au.home.display(),
                permission_mode = %cfg.permission_mode,
                "agent runs as a non-root user (HOME from /etc/passwd; the line's worktree and folder are given to it)"
            );
            // The agent must reach its worktree and its line folder, not the database.
            for d in ["", "lines", "worktrees", "scratch"] {
                let p = cfg.data_dir.join(d);
                crate::exec::make_traversable(&p)?;
            }
            #[cfg(unix)]
            for f in ["conveyor.db", "conveyor.db-wal", "conveyor.db-shm"] {
                use std::os::unix::fs::PermissionsExt;
                let p = cfg.data_dir.join(f);
                if p.exists() {
                    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600))
                        .map_err(|e| Error::io(&p, e))?;
                }
            }
            if let Ok(abs) = std::fs::canonicalize(&cfg.data_dir) {
                for a in abs.ancestors().skip(1) {
                    if !crate::exec::others_can_traverse(a) {
                        tracing::warn!(
                            folder = %a.display(),
                            user = %u,
                            "a folder above data_dir cannot be traversed by other users: the agent will not reach its worktree"
                        );
                    }
                }
            }
        }
        RootMode::None => tracing::info!(
            root = crate::exec::is_root(),
            permission_mode = %cfg.permission_mode,
            allowed_tools = ?cfg.allowed_tools,
            "agent runs as this user, no root handling"
        ),
    }
    let shutdown = CancellationToken::new();
    let shared = Arc::new(Shared {
        budget: Budget::new(cfg.budget.clone()),
        store: Store { pool },
        events: Events::default(),
        locks: Locks::default(),
        token,
        wake: Notify::new(),
        shutdown: shutdown.clone(),
        running: Mutex::new(HashMap::new()),
        admitted: Mutex::new(HashMap::new()),
        list_cache: Mutex::new(HashMap::new()),
        list_refresh: tokio::sync::Mutex::new(()),
        agent_user,
        root_mode,
        cfg,
    });
    recovery::recover(&shared).await?;

    let listener = tokio::net::TcpListener::bind(shared.cfg.listen)
        .await
        .map_err(|source| Error::Bind {
            addr: shared.cfg.listen,
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| Error::Bind {
        addr: shared.cfg.listen,
        source,
    })?;
    tracing::info!(%addr, data_dir = %shared.cfg.data_dir.display(), "conveyor listening");
    let mut tasks = JoinSet::new();
    let app = api::app(shared.clone());
    let stop = shutdown.clone();
    tasks.spawn(async move {
        if let Err(e) = axum::serve(listener, app)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await
        {
            tracing::error!(error = %e, "API server failed");
        }
    });
    if shared.cfg.run_lines {
        let sched = shared.clone();
        tasks.spawn(async move { scheduler::run(sched).await });
    } else {
        tracing::info!("run_lines = false: serving the API only");
    }
    Ok(ServerHandle {
        addr,
        shutdown,
        shared,
        tasks,
    })
}

/// A daemon on a temporary data folder that serves the API only (no scheduler), for unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    pub async fn start(data: &std::path::Path, extra: &str) -> ServerHandle {
        let cfg = data.with_extension("toml");
        std::fs::write(
            &cfg,
            format!(
                "listen = \"127.0.0.1:0\"\ndata_dir = {:?}\ntoken = \"t\"\nrun_lines = false\n{extra}\n",
                data.display().to_string()
            ),
        )
        .unwrap();
        super::start(Config::load(&cfg).unwrap()).await.unwrap()
    }
}
