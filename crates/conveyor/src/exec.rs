//! Every child process of the daemon goes through here: explicit folder and environment, piped
//! output, its own process group (so the whole tree can be stopped), a timeout, kill on drop
//! and on shutdown, and stderr kept for the error message.
//!
//! Also finds process groups left over from a daemon that was killed: an agent's environment
//! carries `CONVEYOR_STEP=<step id>`, which `/proc/<pid>/environ` shows.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::{Child, Command};
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};

/// What to run.
#[derive(Debug, Clone)]
pub struct Spec {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    /// Added to (or replacing) the daemon's environment.
    pub env: BTreeMap<String, String>,
    /// Removed from the daemon's environment.
    pub env_remove: Vec<String>,
    /// Run as this uid/gid (Unix).
    pub user: Option<(u32, u32)>,
    /// Start from an empty environment (only `PATH` kept) instead of the daemon's.
    pub clear_env: bool,
    /// On a timeout or a cancellation the group gets SIGTERM and this long to end before
    /// SIGKILL; zero (the default) kills at once. Git needs it to remove its lock files.
    pub stop_grace: Duration,
    /// A file given as the child's stdin (none: `/dev/null`).
    pub stdin: Option<PathBuf>,
}

impl Spec {
    /// `program args…` in `cwd`.
    pub fn new(program: impl Into<PathBuf>, cwd: impl Into<PathBuf>) -> Spec {
        Spec {
            program: program.into(),
            args: Vec::new(),
            cwd: cwd.into(),
            env: BTreeMap::new(),
            env_remove: Vec::new(),
            user: None,
            clear_env: false,
            stop_grace: Duration::ZERO,
            stdin: None,
        }
    }

    /// A shell command line: `sh -c` on Unix, `cmd /C` on Windows.
    pub fn shell(cmd: &str, cwd: impl Into<PathBuf>) -> Spec {
        let mut s = if cfg!(windows) {
            Spec::new("cmd", cwd)
        } else {
            Spec::new("sh", cwd)
        };
        s.args = if cfg!(windows) {
            vec!["/C".into(), cmd.into()]
        } else {
            vec!["-c".into(), cmd.into()]
        };
        s
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Spec
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets one environment variable.
    pub fn env(mut self, k: impl Into<String>, v: impl Into<String>) -> Spec {
        self.env.insert(k.into(), v.into());
        self
    }

    /// Sets [`Spec::stop_grace`].
    pub fn stop_grace(mut self, grace: Duration) -> Spec {
        self.stop_grace = grace;
        self
    }

    fn command(&self) -> Command {
        let mut c = Command::new(&self.program);
        c.args(&self.args)
            .current_dir(&self.cwd)
            .stdin(
                self.stdin
                    .as_ref()
                    .and_then(|p| std::fs::File::open(p).ok())
                    .map_or_else(Stdio::null, Stdio::from),
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if self.clear_env {
            c.env_clear();
            if let Some(p) = std::env::var_os("PATH") {
                c.env("PATH", p);
            }
        }
        for k in &self.env_remove {
            c.env_remove(k);
        }
        c.envs(&self.env);
        #[cfg(unix)]
        {
            c.process_group(0);
            if let Some((uid, gid)) = self.user {
                c.uid(uid).gid(gid);
            }
        }
        c
    }

    /// Starts the process in its own group.
    ///
    /// # Errors
    /// [`Error::Spawn`] when it cannot start (e.g. the program is missing).
    pub fn spawn(&self) -> Result<Child> {
        self.command().spawn().map_err(|source| Error::Spawn {
            program: self.program.display().to_string(),
            source,
        })
    }
}

/// How a finished command ended.
#[derive(Debug, Clone)]
pub struct Output {
    /// The exit code; `None` when killed by a signal, a timeout or shutdown.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
    pub cancelled: bool,
}

impl Output {
    /// The last `n` characters of stdout and stderr together, for messages.
    pub fn tail(&self, n: usize) -> String {
        let all = format!("{}{}", self.stdout, self.stderr);
        tail(&all, n)
    }
}

/// The last `n` characters of `s`.
pub fn tail(s: &str, n: usize) -> String {
    let count = s.chars().count();
    if count <= n {
        s.to_string()
    } else {
        s.chars().skip(count - n).collect()
    }
}

/// Runs a command to its end (or its timeout, or `cancel`), capturing its output.
///
/// # Errors
/// [`Error::Spawn`] when it cannot start.
pub async fn run(spec: &Spec, timeout: Duration, cancel: &CancellationToken) -> Result<Output> {
    let mut child = spec.spawn()?;
    let pid = child.id();
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let read_out = tokio::spawn(async move {
        let mut b = Vec::new();
        let _ = out.read_to_end(&mut b).await;
        b
    });
    let read_err = tokio::spawn(async move {
        let mut b = Vec::new();
        let _ = err.read_to_end(&mut b).await;
        b
    });
    let (code, timed_out, cancelled) = tokio::select! {
        st = child.wait() => (st.ok().and_then(|s| s.code()), false, false),
        () = tokio::time::sleep(timeout) => {
            stop(pid, &mut child, spec.stop_grace).await;
            (None, true, false)
        }
        () = cancel.cancelled() => {
            stop(pid, &mut child, spec.stop_grace).await;
            (None, false, true)
        }
    };
    // The group may hold children that keep the pipes open: stop them too.
    kill_group(pid);
    let stdout = String::from_utf8_lossy(&read_out.await.unwrap_or_default()).into_owned();
    let stderr = String::from_utf8_lossy(&read_err.await.unwrap_or_default()).into_owned();
    Ok(Output {
        code,
        stdout,
        stderr,
        timed_out,
        cancelled,
    })
}

/// Ends `child` (the leader of group `pid`): SIGTERM and up to `grace` to exit when `grace`
/// is not zero, then SIGKILL.
async fn stop(pid: Option<u32>, child: &mut Child, grace: Duration) {
    #[cfg(unix)]
    if !grace.is_zero() {
        signal_group(pid, nix::sys::signal::Signal::SIGTERM);
        if tokio::time::timeout(grace, child.wait()).await.is_ok() {
            return;
        }
    }
    // No process groups off Unix: end the child itself, or the wait below would last as long
    // as it does (its own children outlive it there; docs/conveyor.md says so).
    #[cfg(not(unix))]
    {
        let _ = grace;
        let _ = child.start_kill();
    }
    kill_group(pid);
    let _ = child.wait().await;
}

/// Stops a process group started by [`Spec::spawn`] (its leader's pid is the group id).
pub fn kill_group(pid: Option<u32>) {
    #[cfg(unix)]
    signal_group(pid, nix::sys::signal::Signal::SIGKILL);
    #[cfg(not(unix))]
    let _ = pid;
}

#[cfg(unix)]
fn signal_group(pid: Option<u32>, signal: nix::sys::signal::Signal) {
    if let Some(pid) = pid
        && let Ok(pid) = i32::try_from(pid)
        && pid > 1
    {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), signal);
    }
}

/// Whether the daemon runs as root.
pub fn is_root() -> bool {
    #[cfg(unix)]
    {
        nix::unistd::Uid::effective().is_root()
    }
    #[cfg(not(unix))]
    {
        false
    }
}

/// Whether users other than the owner may pass through `dir` (`o+x`).
pub fn others_can_traverse(dir: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(dir).is_ok_and(|m| m.permissions().mode() & 0o001 != 0)
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        true
    }
}

/// A user the agent runs as (`root_mode = { user = "…" }`), from `/etc/passwd`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentUser {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    /// The home folder (the CLI keeps its transcripts under `$HOME/.claude`).
    pub home: PathBuf,
}

/// A user's uid, gid and home from `/etc/passwd`.
pub fn lookup_user(name: &str) -> Option<AgentUser> {
    let text = std::fs::read_to_string("/etc/passwd").ok()?;
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        if f.len() < 6 || f[0] != name {
            return None;
        }
        Some(AgentUser {
            name: name.to_string(),
            uid: f[2].parse().ok()?,
            gid: f[3].parse().ok()?,
            home: PathBuf::from(f[5]),
        })
    })
}

/// Gives `path` and everything under it to `uid:gid` (symbolic links themselves, never their
/// targets), so that an agent running as that user can write what the daemon created as root.
///
/// # Errors
/// [`Error::Io`] on the first entry that cannot be changed.
pub fn chown_tree(path: &Path, uid: u32, gid: u32) -> Result<()> {
    #[cfg(unix)]
    {
        let meta = match std::fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(Error::io(path, e)),
        };
        std::os::unix::fs::lchown(path, Some(uid), Some(gid)).map_err(|e| Error::io(path, e))?;
        if meta.is_dir() {
            for e in std::fs::read_dir(path).map_err(|e| Error::io(path, e))? {
                let e = e.map_err(|e| Error::io(path, e))?;
                chown_tree(&e.path(), uid, gid)?;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = (path, uid, gid);
    Ok(())
}

/// Gives a git worktree to `uid:gid`: its files and its git folder (`gitdir:` of its `.git`
/// file: index, HEAD), so that user's git works in it.
///
/// # Errors
/// [`Error::Io`].
pub fn chown_worktree(worktree: &Path, uid: u32, gid: u32) -> Result<()> {
    chown_tree(worktree, uid, gid)?;
    if let Ok(text) = std::fs::read_to_string(worktree.join(".git"))
        && let Some(gitdir) = text.trim().strip_prefix("gitdir:")
    {
        chown_tree(Path::new(gitdir.trim()), uid, gid)?;
    }
    Ok(())
}

impl AgentUser {
    /// Makes `spec` run as this user: uid, gid, and `HOME`, `USER`, `LOGNAME` (unless already
    /// set), and git's ownership check relaxed for the daemon's worktrees.
    pub fn apply(&self, spec: &mut Spec) {
        spec.user = Some((self.uid, self.gid));
        spec.env
            .entry("HOME".into())
            .or_insert_with(|| self.home.to_string_lossy().into_owned());
        spec.env.insert("USER".into(), self.name.clone());
        spec.env.insert("LOGNAME".into(), self.name.clone());
        if !spec.env.contains_key("GIT_CONFIG_COUNT") {
            spec.env.insert("GIT_CONFIG_COUNT".into(), "1".into());
            spec.env
                .insert("GIT_CONFIG_KEY_0".into(), "safe.directory".into());
            spec.env.insert("GIT_CONFIG_VALUE_0".into(), "*".into());
        }
    }
}

/// Lets other users pass through `dir` (adds `o+x`, and `g+x`), without listing it.
///
/// # Errors
/// [`Error::Io`].
pub fn make_traversable(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir)
            .map_err(|e| Error::io(dir, e))?
            .permissions()
            .mode();
        if mode & 0o011 != 0o011 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode | 0o011))
                .map_err(|e| Error::io(dir, e))?;
        }
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// The process groups whose members carry `KEY=VALUE` in their environment (Linux `/proc`).
pub fn groups_with_env(key: &str, value: &str) -> Vec<u32> {
    let needle = format!("{key}={value}");
    let mut groups = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return groups;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == std::process::id() {
            continue;
        }
        let Ok(env) = std::fs::read(e.path().join("environ")) else {
            continue;
        };
        if !env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()) {
            continue;
        }
        if let Some(pgid) = pgid_of(&e.path())
            && pgid > 1
            && !groups.contains(&pgid)
        {
            groups.push(pgid);
        }
    }
    groups
}

/// The process group id from `/proc/<pid>/stat` (field 5, after the parenthesised name).
fn pgid_of(proc_dir: &Path) -> Option<u32> {
    let stat = std::fs::read_to_string(proc_dir.join("stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // rest: state ppid pgrp …
    f.get(2)?.parse().ok()
}

/// The variable every child the daemon starts for a line carries (agents, checks, regression
/// runs), set to the daemon's data folder: after a `kill -9` the next start finds and kills the
/// groups its predecessor left.
pub const DAEMON_MARKER: &str = "CONVEYOR_DAEMON";

/// Kills every process group carrying `CONVEYOR_STEP=<step_id>` and waits (up to `wait`) until
/// none is left. Returns the groups found.
pub async fn kill_leftovers(step_id: &str, wait: Duration) -> Vec<u32> {
    kill_groups_with("CONVEYOR_STEP", step_id, wait).await
}

/// Kills every process group carrying `key=value` in its environment and waits (up to `wait`)
/// until none is left. Returns the groups found.
pub async fn kill_groups_with(key: &str, value: &str, wait: Duration) -> Vec<u32> {
    let (k, v) = (key.to_string(), value.to_string());
    let found = tokio::task::spawn_blocking(move || groups_with_env(&k, &v))
        .await
        .unwrap_or_default();
    if found.is_empty() {
        return found;
    }
    for g in &found {
        kill_group(Some(*g));
    }
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let (k, v) = (key.to_string(), value.to_string());
        let left = tokio::task::spawn_blocking(move || groups_with_env(&k, &v))
            .await
            .unwrap_or_default();
        if left.is_empty() || tokio::time::Instant::now() > deadline {
            for g in &left {
                kill_group(Some(*g));
            }
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn captures_exit_code_and_output() {
        let o = run(
            &Spec::shell("echo out; echo err >&2; exit 3", "."),
            Duration::from_secs(10),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
        assert_eq!(o.code, Some(3));
        assert_eq!(o.stdout.trim(), "out");
        assert_eq!(o.stderr.trim(), "err");
    }

    #[tokio::test]
    async fn timeout_kills_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let started = std::time::Instant::now();
        let o = run(
            &Spec::shell("(sleep 30; touch late) & sleep 30", dir.path()),
            Duration::from_millis(300),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
        assert!(o.timed_out);
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(!dir.path().join("late").exists());
    }

    #[tokio::test]
    async fn a_grace_lets_the_group_clean_up_before_it_is_killed() {
        let dir = tempfile::tempdir().unwrap();
        let ready = testing::fifo(&dir.path().join("ready"));
        let cancel = CancellationToken::new();
        let spec = Spec::shell(
            "trap 'echo done > cleaned; exit 1' TERM; echo > ready; sleep 30 & wait",
            dir.path(),
        )
        .stop_grace(Duration::from_secs(10));
        let run = tokio::spawn({
            let cancel = cancel.clone();
            async move { run(&spec, Duration::from_secs(60), &cancel).await }
        });
        testing::reached(&ready).await;
        cancel.cancel();
        let o = run.await.unwrap().unwrap();
        assert!(o.cancelled && !o.timed_out);
        assert!(dir.path().join("cleaned").exists(), "SIGTERM came first");
    }

    #[tokio::test]
    async fn leftovers_are_found_by_their_environment() {
        let id = format!("test-{}", uuid::Uuid::new_v4());
        let child = Spec::shell("sleep 30", ".")
            .env("CONVEYOR_STEP", &id)
            .spawn()
            .unwrap();
        let pid = child.id().unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while groups_with_env("CONVEYOR_STEP", &id).is_empty() {
            assert!(std::time::Instant::now() < deadline, "not found");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let found = kill_leftovers(&id, Duration::from_secs(5)).await;
        assert_eq!(found, vec![pid]);
        assert!(groups_with_env("CONVEYOR_STEP", &id).is_empty());
        drop(child);
    }

    #[test]
    fn missing_program_is_a_spawn_error() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let e = rt.block_on(async { Spec::new("/nonexistent/claude", ".").spawn() });
        assert!(matches!(e, Err(Error::Spawn { .. })));
    }
}

/// Test helpers: a child says it reached a point by writing to a named pipe, and the test
/// waits on the pipe (no polling).
#[cfg(test)]
pub(crate) mod testing {
    use std::path::{Path, PathBuf};
    use std::time::Duration;

    /// Makes a named pipe at `path` and returns `path`.
    pub fn fifo(path: &Path) -> PathBuf {
        let st = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap();
        assert!(st.success(), "mkfifo {}", path.display());
        path.to_path_buf()
    }

    /// Returns once something wrote to the pipe and closed it (at most 30 s: a child that
    /// died first fails the test instead of hanging it).
    pub async fn reached(fifo: &Path) {
        let p = fifo.to_path_buf();
        let mut read = tokio::task::spawn_blocking(move || std::fs::read(p));
        if tokio::time::timeout(Duration::from_secs(30), &mut read)
            .await
            .is_err()
        {
            // Be the writer ourselves, so the blocked reader ends with the test.
            drop(std::fs::OpenOptions::new().write(true).open(fifo));
            let _ = read.await;
            panic!("the child never reached {}", fifo.display());
        }
    }
}
