//! The daemon as a library: [`start`] opens the database, recovers from a crash, binds the API
//! and starts the scheduler; the returned [`ServerHandle`] stops it all. One
//! `CancellationToken` (the shared state's `shutdown`) is the root of shutdown; the tasks live
//! in a `JoinSet` that is drained. This is the one module that knows every other: the state it
//! assembles ([`crate::state`]) knows none of them.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::config::{Config, RootMode};
use crate::state::Shared;
use crate::store::Store;
use crate::{
    api,
    error::{Error, Result},
    recovery, scheduler,
};

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
        self.shared.store.close().await;
    }

    /// Waits until the daemon stops (after `shutdown` is cancelled).
    pub async fn wait(mut self) {
        while self.tasks.join_next().await.is_some() {}
        self.shared.store.close().await;
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
    let store = Store::open(&cfg.data_dir.join("conveyor.db")).await?;
    let token = cfg.token_or_create()?;
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
    let shared = Arc::new(Shared::new(cfg, store, token, agent_user, root_mode));
    let shutdown = shared.shutdown.clone();
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
        let pre = shared.clone();
        tasks.spawn(async move { scheduler::preflight(pre).await });
        // Telling Anton: the Catcher's queue and its presses, PlanFix's queue (each returns
        // at once when its channel is not configured).
        let tg = shared.clone();
        tasks.spawn(async move { crate::notify::send::telegram(tg).await });
        let updates = shared.clone();
        tasks.spawn(async move { crate::notify::poll::run(updates).await });
        let pf = shared.clone();
        tasks.spawn(async move { crate::notify::planfix::run(pf).await });
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
