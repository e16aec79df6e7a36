//! One agent run's sandbox put together and taken down (DESIGN.md, "Containment"): the paths
//! found on this machine for [`conveyor_core::sandbox::Plan`], the run's proxy and API forward
//! served outside, the refs read before; afterwards what the run was refused: the hosts the
//! proxy turned away, the writes its tool results report, the refs put back.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use conveyor_api::RefusalKind;
use conveyor_core::sandbox::{Egress, Forward, Mount, Plan, proxy_env, refused_writes};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

#[cfg(not(unix))]
use super::no_unix::UnixListener;
use super::proxy::{ApiForward, ProxyBuilder};
use crate::error::{Error, Result};
use crate::git::refs::{self, Refs};
use crate::state::Shared;
#[cfg(unix)]
use tokio::net::UnixListener;

/// Something a run's sandbox refused it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub kind: RefusalKind,
    /// The path, `host:port`, or `refs/heads/x: <old> -> <new>`.
    pub what: String,
    pub at_ms: i64,
}

/// What the runner knows of one run.
#[derive(Debug, Clone)]
pub struct Setup<'a> {
    pub run_id: i64,
    pub worktree: &'a Path,
    /// The project's repository (its checkout): read-only, its `.git` writable where the
    /// line's commits need it.
    pub repo: &'a Path,
    /// The line's branch: the one ref the run may move.
    pub branch: &'a str,
    pub line_id: &'a str,
    /// The project's `[sandbox] allow_hosts`.
    pub allow_hosts: &'a [String],
    /// Every other project's repository: hidden.
    pub other_repos: Vec<PathBuf>,
    /// The run decides (plan, build, fix, answer, judge): it sees the vault, read-only.
    pub needs_memory: bool,
    /// The run's environment (its `HOME`, `ANTHROPIC_BASE_URL`), as it will be given.
    pub env: &'a BTreeMap<String, String>,
    /// A tester's run with `[telegram]` configured: the project's bots (from fresh main), for
    /// the check socket bound into the run.
    pub telegram: Option<crate::config::ProjectTelegram>,
}

/// A run's sandbox while the run goes on.
pub struct Sandbox {
    prefix: Vec<OsString>,
    stop: CancellationToken,
    served: JoinSet<()>,
    hosts: Arc<Mutex<Vec<Found>>>,
    refs: Refs,
    repo: PathBuf,
    branch: String,
    /// The refs the run can write: `refs/heads/line/`.
    scope: String,
    sockets: PathBuf,
    clock: Arc<dyn crate::clock::Clock>,
}

impl std::fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sandbox")
            .field("prefix", &self.prefix)
            .field("sockets", &self.sockets)
            .finish_non_exhaustive()
    }
}

/// Where a secret usually is in a home folder: keys, cloud and registry credentials.
const HOME_SECRETS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".config/gh",
    ".config/hub",
    ".config/gcloud",
    ".config/doctl",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".yarnrc.yml",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".pgpass",
    ".my.cnf",
    ".vault-token",
    ".terraform.d",
    // Another user's CLI login and transcripts (the run's own CLI home is bound back).
    ".claude",
    ".claude.json",
];

impl Sandbox {
    /// Reads the refs, serves the proxy (and the API forward for a loopback API), and builds the
    /// command line the run starts with.
    ///
    /// # Errors
    /// The project's `allow_hosts` or the run's `ANTHROPIC_BASE_URL` that does not read, a
    /// socket that cannot be made, git errors reading the refs.
    pub async fn start(sh: &Shared, s: &Setup<'_>) -> Result<Sandbox> {
        let base_url = s.env.get("ANTHROPIC_BASE_URL").cloned().or_else(|| {
            sh.cfg
                .agent_env_inherit
                .then(|| std::env::var("ANTHROPIC_BASE_URL").ok())
                .flatten()
        });
        let egress = Egress::new(base_url.as_deref(), s.allow_hosts)
            .map_err(|e| sh.cfg.error(format!("sandbox of line {}: {e}", s.line_id)))?;
        let sockets = absolute(&sh.cfg.data_dir)
            .join("run")
            .join(s.run_id.to_string());
        std::fs::create_dir_all(&sockets).map_err(|e| Error::io(&sockets, e))?;
        let refs = refs::snapshot(s.repo).await?;

        let hosts: Arc<Mutex<Vec<Found>>> = Arc::default();
        let stop = CancellationToken::new();
        let mut served = JoinSet::new();
        let proxy_socket = sockets.join("proxy.sock");
        let seen = hosts.clone();
        let proxy = ProxyBuilder::new(s.run_id, egress.clone(), sh.clock.clone())
            .on_refusal(move |r| {
                let what = if r.host.contains(':') {
                    format!("[{}]:{}", r.host, r.port)
                } else {
                    format!("{}:{}", r.host, r.port)
                };
                let mut seen = seen.lock().expect("refusals poisoned");
                if !seen.iter().any(|f| f.what == what) {
                    seen.push(Found {
                        kind: RefusalKind::Host,
                        what,
                        at_ms: r.at_ms,
                    });
                }
            })
            .bind(&proxy_socket)?;
        served.spawn(proxy.serve(stop.clone()));
        let forward = if is_loopback_api(&egress) {
            let socket = sockets.join("api.sock");
            let f = ApiForward::bind(&socket, egress.api().clone())?;
            served.spawn(f.serve(stop.clone()));
            Some((
                socket,
                Forward {
                    port: egress.api().port,
                },
            ))
        } else {
            None
        };
        let telegram_socket = match (&s.telegram, &sh.cfg.telegram) {
            (Some(project), Some(config)) => {
                let socket = sockets.join("telegram.sock");
                let listener = UnixListener::bind(&socket).map_err(|e| Error::io(&socket, e))?;
                let job = crate::telegram::serve::Job {
                    config: config.clone(),
                    project: project.clone(),
                    worktree: s.worktree.to_path_buf(),
                    // Kept with the run, where the agent cannot reach it (the data folder).
                    out: absolute(&sh.cfg.data_dir)
                        .join("telegram")
                        .join(s.run_id.to_string()),
                    run_id: s.run_id,
                    held: sh.telegram_held.clone(),
                    memo: sh.telegram_session.clone(),
                };
                served.spawn(crate::telegram::serve::serve(listener, job, stop.clone()));
                Some(socket)
            }
            _ => None,
        };
        if let Some(u) = &sh.agent_user {
            crate::exec::chown_tree(&sockets, u.uid, u.gid)?;
        }

        let plan = Plan {
            bwrap: sh.cfg.sandbox.bwrap.clone(),
            bridge: crate::judge::hook_bin(&sh.cfg).ok_or_else(|| {
                sh.cfg.error(
                    "the sandbox needs `conveyord` (its bridge) and none was found: set hook_bin",
                )
            })?,
            mounts: mounts(sh, s)?,
            proxy_socket,
            forward,
            telegram_socket,
            chdir: s.worktree.to_path_buf(),
        };
        let prefix = plan
            .prefix()
            .map_err(|e| sh.cfg.error(format!("sandbox of line {}: {e}", s.line_id)))?;
        Ok(Sandbox {
            prefix,
            stop,
            served,
            hosts,
            refs,
            repo: s.repo.to_path_buf(),
            branch: format!("refs/heads/{}", s.branch),
            scope: ref_scope(s.branch),
            sockets,
            clock: sh.clock.clone(),
        })
    }

    /// `bwrap … -- conveyord bridge … --`: what goes before the agent's command line.
    pub fn prefix(&self) -> Vec<String> {
        self.prefix
            .iter()
            .map(|w| w.to_string_lossy().into_owned())
            .collect()
    }

    /// The run's environment inside: its traffic to the bridge, its temp folder the sandbox's
    /// own `/tmp`.
    pub fn env() -> BTreeMap<String, String> {
        let mut env: BTreeMap<String, String> = proxy_env()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        env.insert("TMPDIR".into(), "/tmp".into());
        env
    }

    /// Stops the proxy, puts the refs back, and says what the run was refused: the hosts, the
    /// writes its log's tool results report, the refs it moved.
    pub async fn finish(mut self, log: &Path) -> Vec<Found> {
        self.stop.cancel();
        while self.served.join_next().await.is_some() {}
        let _ = std::fs::remove_dir_all(&self.sockets);
        let now = self.clock.now_ms();
        let mut found = std::mem::take(&mut *self.hosts.lock().expect("refusals poisoned"));
        match refs::restore(&self.repo, &self.refs, &self.scope, &self.branch).await {
            Ok(moved) => found.extend(moved.into_iter().map(|m| Found {
                kind: RefusalKind::Ref,
                what: m.to_string(),
                at_ms: now,
            })),
            Err(e) => {
                tracing::error!(repo = %self.repo.display(), error = %e, "putting refs back after a run failed");
            }
        }
        for path in writes_in(log) {
            found.push(Found {
                kind: RefusalKind::Write,
                what: path,
                at_ms: now,
            });
        }
        found
    }
}

/// The refused writes a run's stream-json reports, each once.
fn writes_in(log: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        for p in refused_writes(&v) {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// Whether the API is on the daemon's own machine (the tests' mock): then its port is
/// forwarded inside, since the proxy never admits a local address by name.
fn is_loopback_api(egress: &Egress) -> bool {
    match &egress.api().host {
        conveyor_core::sandbox::Host::Ip(ip) => ip.is_loopback(),
        conveyor_core::sandbox::Host::Name(n) => n == "localhost",
    }
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// What the run sees beyond the read-only system.
fn mounts(sh: &Shared, s: &Setup<'_>) -> Result<Vec<Mount>> {
    let mut m = Vec::new();
    let data = absolute(&sh.cfg.data_dir);
    m.push(Mount::HideDir(data));
    let mut secret_files: Vec<PathBuf> = vec![];
    secret_files.extend(sh.cfg.token_file.clone());
    secret_files.extend(sh.cfg.file.clone());
    secret_files.extend(sh.cfg.catcher.as_ref().map(|c| c.bot_token_file.clone()));
    secret_files.extend(sh.cfg.planfix.as_ref().map(|p| p.token_file.clone()));
    // The test account: its session and credentials are the daemon's to use, never a run's
    // (they usually sit in the vault, which a run that needs memory sees read-only).
    if let Some(t) = &sh.cfg.telegram {
        secret_files.extend(
            [
                &t.session_dir,
                &t.api_id_file,
                &t.api_hash_file,
                &t.test_bot_token_file,
            ]
            .into_iter()
            .flatten()
            .cloned(),
        );
    }
    for f in secret_files.iter().map(|f| absolute(f)) {
        if f.is_dir() {
            m.push(Mount::HideDir(f));
        } else if f.exists() {
            m.push(Mount::HideFile(f));
        }
    }
    if let Some(v) = &sh.cfg.vault
        && !s.needs_memory
        && v.path.is_dir()
    {
        m.push(Mount::HideDir(absolute(&v.path)));
    }
    for repo in &s.other_repos {
        if repo.is_dir() && !s.repo.starts_with(repo) {
            m.push(Mount::HideDir(absolute(repo)));
        }
    }
    // Key and credential folders in every home the run could look in.
    let run_home = s.env.get("HOME").map(PathBuf::from).or_else(|| {
        sh.cfg
            .agent_env_inherit
            .then(|| std::env::var_os("HOME").map(PathBuf::from))
            .flatten()
    });
    let mut homes: Vec<PathBuf> = vec![PathBuf::from("/root")];
    homes.extend(std::env::var_os("HOME").map(PathBuf::from));
    homes.extend(sh.agent_user.as_ref().map(|u| u.home.clone()));
    homes.extend(run_home.clone());
    homes.sort();
    homes.dedup();
    for home in homes.iter().filter(|h| h.is_absolute()) {
        // A run as the agent's user cannot look into a home closed to others (root's): bwrap
        // itself could not reach the path to hide it.
        if sh.agent_user.is_some() && !crate::exec::others_can_traverse(home) {
            continue;
        }
        for rel in HOME_SECRETS {
            let p = home.join(rel);
            if p.is_dir() {
                m.push(Mount::HideDir(p));
            } else if p.exists() {
                m.push(Mount::HideFile(p));
            }
        }
    }
    // The run's CLI home: its sessions (a `--resume` reads them) and its login.
    if let Some(home) = run_home.filter(|h| h.is_absolute()) {
        let dir = home.join(".claude");
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        m.push(Mount::Writable(dir));
        let json = home.join(".claude.json");
        if json.is_file() {
            m.push(Mount::Writable(json));
        }
    }
    // The CLI and the bridge, wherever they are (a fresh /tmp would hide a test's fake).
    for bin in [
        Some(sh.cfg.claude_bin.clone()),
        crate::judge::hook_bin(&sh.cfg),
    ]
    .into_iter()
    .flatten()
    .filter(|b| b.is_absolute())
    {
        // Their folders as they really are: bwrap cannot make a mount point through a symlink
        // (`node_modules` linked from elsewhere), and the link itself resolves through `/`.
        let real = std::fs::canonicalize(&bin).unwrap_or_else(|_| bin.clone());
        for dir in [bin.parent(), real.parent()]
            .into_iter()
            .flatten()
            .filter_map(|d| std::fs::canonicalize(d).ok())
        {
            if dir.parent().is_some() && dir.is_dir() {
                m.push(Mount::ReadOnly(dir));
            }
        }
    }
    // The line's folder: readable (its hooks, settings, the guard's context), and writable
    // only where its agents write (plan, journal, verdicts, the hooks' rounds).
    let line_dir = sh.line_dir(s.line_id);
    let agent_dir = sh.agent_dir(s.line_id);
    std::fs::create_dir_all(&agent_dir).map_err(|e| Error::io(&agent_dir, e))?;
    m.push(Mount::ReadOnly(absolute(&line_dir)));
    m.push(Mount::Writable(absolute(&agent_dir)));
    m.push(Mount::ReadOnly(absolute(s.repo)));
    let worktree = absolute(s.worktree);
    m.push(Mount::Writable(worktree.clone()));
    m.extend(git_mounts(&worktree, s.branch)?);
    Ok(m)
}

/// The folder of refs a run can write: its branch's (`refs/heads/line/` for `line/<id>`).
fn ref_scope(branch: &str) -> String {
    match branch.rsplit_once('/') {
        Some((dir, _)) => format!("refs/heads/{dir}/"),
        None => "refs/heads/".to_string(),
    }
}

/// What a commit on the line's branch writes in the repository's `.git`: the objects, the
/// `line/` branches and their logs, and the worktree's own folder (index, HEAD). The
/// worktree's `.git` file stays read-only: rewritten, it would send the daemon's own git to a
/// folder of the agent's choosing.
fn git_mounts(worktree: &Path, branch: &str) -> Result<Vec<Mount>> {
    let dot_git = worktree.join(".git");
    let text = std::fs::read_to_string(&dot_git).map_err(|e| Error::io(&dot_git, e))?;
    let gitdir = text
        .lines()
        .find_map(|l| l.strip_prefix("gitdir:"))
        .map(|d| worktree.join(d.trim()))
        .ok_or_else(|| {
            Error::io(
                &dot_git,
                std::io::Error::other("not a worktree's .git file (no `gitdir:`)"),
            )
        })?;
    let common = std::fs::read_to_string(gitdir.join("commondir"))
        .map(|c| absolute(&gitdir.join(c.trim())))
        .map_err(|e| Error::io(gitdir.join("commondir"), e))?;
    let common = std::fs::canonicalize(&common).unwrap_or(common);
    let mut m = vec![
        Mount::ReadOnly(dot_git),
        Mount::Writable(common.join("objects")),
        Mount::Writable(absolute(&gitdir)),
    ];
    // The folder of the branch's ref (`refs/heads/line/`) and of its log: a ref is written as
    // a lock file beside it and renamed. `git pack-refs` removes empty ones: made again first.
    let parent = PathBuf::from(ref_scope(branch).trim_end_matches('/'));
    for dir in [common.join(&parent), common.join("logs").join(&parent)] {
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        m.push(Mount::Writable(dir));
    }
    Ok(m)
}
