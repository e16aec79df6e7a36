//! The bubblewrap command line of one agent run (DESIGN.md, "Containment: what an agent can
//! reach"): the system read-only, the run's own namespaces, the paths it may write bound back
//! over what is hidden, and its only way out bridged in. The daemon finds the paths; this file
//! only orders them, so what a run sees is decided in one place and tested without a machine.
//!
//! What each choice guards against was tried with bwrap 0.8 and the real CLI; the findings are
//! in docs/conveyor.md, "What bubblewrap does here".

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Where the daemon's proxy socket appears inside the sandbox.
pub const PROXY_SOCKET: &str = "/run/conveyor/proxy.sock";
/// Where the API forward's socket appears inside the sandbox (a loopback API only).
pub const API_SOCKET: &str = "/run/conveyor/api.sock";
/// Where a tester's Telegram-check socket appears inside the sandbox: `conveyord
/// telegram-check` asks the daemon through it to run the scenarios outside, with the test
/// account's session the run itself cannot see.
pub const TELEGRAM_SOCKET: &str = "/run/conveyor/telegram.sock";
/// The bridge's proxy address inside: what `HTTPS_PROXY` names.
pub const PROXY_LISTEN: &str = "127.0.0.1:3128";

/// The options every run's bwrap starts with, before its own paths: what the preflight's probe
/// tries too, so a machine that passes the probe can start a run.
pub const BASE: &[&str] = &[
    // Everything of the run dies with the daemon's end of it, and nothing it starts
    // outlives the run (its own PID namespace; `nohup … &` included).
    "--die-with-parent",
    "--unshare-all",
    // As root, bwrap keeps root's capabilities in the new namespace, and with them an
    // agent can `umount` a hiding tmpfs or remount `/` writable: drop them all.
    "--cap-drop",
    "ALL",
    // No `TIOCSTI` into the daemon's terminal.
    "--new-session",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    // A fresh /tmp (the run's temp folder) and /run (the host's sockets: dbus, a
    // database's, docker's, are reachable across network namespaces).
    "--tmpfs",
    "/tmp",
    "--tmpfs",
    "/run",
    "--dir",
    "/run/conveyor",
];

/// One path of the run's view, beyond the read-only system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mount {
    /// A folder replaced by an empty one: the daemon's data, a key folder, another project.
    HideDir(PathBuf),
    /// A file that cannot be read (bound to `/dev/null`, which `nodev` makes unreadable).
    HideFile(PathBuf),
    /// Visible read-only again below something hidden (the line's folder, the vault).
    ReadOnly(PathBuf),
    /// Writable: the worktree, the git folders a commit needs, the CLI home, the run's folder.
    Writable(PathBuf),
}

impl Mount {
    fn path(&self) -> &Path {
        match self {
            Mount::HideDir(p) | Mount::HideFile(p) | Mount::ReadOnly(p) | Mount::Writable(p) => p,
        }
    }

    /// Hides go before binds of the same depth: a bind is never covered by a hide.
    fn rank(&self) -> u8 {
        match self {
            Mount::HideDir(_) | Mount::HideFile(_) => 0,
            Mount::ReadOnly(_) => 1,
            Mount::Writable(_) => 2,
        }
    }
}

/// The API's loopback port forwarded inside, for a base URL on the daemon's own machine (the
/// tests' mock): the CLI then connects directly, as it would without a sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Forward {
    pub port: u16,
}

/// One run's sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub bwrap: PathBuf,
    /// `conveyord`, which runs `bridge` inside.
    pub bridge: PathBuf,
    pub mounts: Vec<Mount>,
    /// The proxy's socket outside.
    pub proxy_socket: PathBuf,
    /// The API forward's socket outside, with the port it serves inside.
    pub forward: Option<(PathBuf, Forward)>,
    /// The Telegram-check socket outside (a tester's run of a daemon with `[telegram]`).
    pub telegram_socket: Option<PathBuf>,
    /// The run's working folder (its worktree).
    pub chdir: PathBuf,
}

/// A plan that cannot be a command line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("sandbox path {0:?} is not absolute")]
    Relative(PathBuf),
    #[error("sandbox path {0:?} hides the whole system")]
    Root(PathBuf),
}

impl Plan {
    /// `bwrap …options -- conveyord bridge …pipes --` : the program and the arguments that go
    /// before the agent's own command line.
    ///
    /// # Errors
    /// [`PlanError`] for a relative path or one that is `/`.
    pub fn prefix(&self) -> Result<Vec<OsString>, PlanError> {
        let mut mounts = self.mounts.clone();
        for m in &mounts {
            let p = m.path();
            if !p.is_absolute() {
                return Err(PlanError::Relative(p.to_path_buf()));
            }
            if p.parent().is_none() {
                return Err(PlanError::Root(p.to_path_buf()));
            }
        }
        for p in [&self.proxy_socket, &self.chdir] {
            if !p.is_absolute() {
                return Err(PlanError::Relative(p.clone()));
            }
        }
        // bwrap mounts in argument order, a later one over an earlier: a parent before its
        // children, so the worktree is writable inside a hidden data folder and its `.git` file
        // read-only inside the writable worktree. The same path twice: writable wins over
        // read-only, and either over hidden.
        mounts.sort_by(|a, b| a.path().cmp(b.path()).then(b.rank().cmp(&a.rank())));
        mounts.dedup_by(|later, earlier| later.path() == earlier.path());
        mounts.sort_by_key(|m| (m.path().components().count(), m.rank()));
        let mut a: Vec<OsString> = vec![self.bwrap.clone().into()];
        a.extend(BASE.iter().map(OsString::from));
        for m in &mounts {
            let p = m.path().as_os_str().to_os_string();
            let (what, from): (&str, OsString) = match m {
                Mount::HideDir(_) => {
                    a.extend(["--tmpfs".into(), p]);
                    continue;
                }
                Mount::HideFile(_) => ("--ro-bind", "/dev/null".into()),
                Mount::ReadOnly(_) => ("--ro-bind", p.clone()),
                Mount::Writable(_) => ("--bind", p.clone()),
            };
            a.extend([what.into(), from, p]);
        }
        a.extend([
            "--ro-bind".into(),
            self.proxy_socket.clone().into(),
            PROXY_SOCKET.into(),
        ]);
        if let Some((socket, _)) = &self.forward {
            a.extend(["--ro-bind".into(), socket.clone().into(), API_SOCKET.into()]);
        }
        if let Some(socket) = &self.telegram_socket {
            a.extend([
                "--ro-bind".into(),
                socket.clone().into(),
                TELEGRAM_SOCKET.into(),
            ]);
        }
        // A hidden folder is an empty tmpfs, writable until now (bwrap makes the mount points
        // of the binds below it there). Read-only from here: `echo x > ../x` from the worktree
        // is refused as on the system, not written to a scratch that vanishes unseen.
        for m in &mounts {
            if let Mount::HideDir(p) = m {
                a.extend(["--remount-ro".into(), p.clone().into()]);
            }
        }
        a.extend(["--remount-ro".into(), "/run".into()]);
        a.extend(["--chdir".into(), self.chdir.clone().into(), "--".into()]);
        a.extend([
            self.bridge.clone().into(),
            "bridge".into(),
            "--listen".into(),
            PROXY_LISTEN.into(),
            "--socket".into(),
            PROXY_SOCKET.into(),
        ]);
        if let Some((_, f)) = &self.forward {
            a.extend([
                "--forward".into(),
                format!("127.0.0.1:{}", f.port).into(),
                "--forward-socket".into(),
                API_SOCKET.into(),
            ]);
        }
        a.push("--".into());
        Ok(a)
    }
}

/// The environment that sends the run's traffic to the bridge: both spellings, since tools read
/// one or the other. Loopback stays inside (the agent's own test servers); the CLI reaches a
/// loopback API through the forward, an https one through the proxy.
pub fn proxy_env() -> Vec<(&'static str, String)> {
    let proxy = format!("http://{PROXY_LISTEN}");
    let local = "localhost,127.0.0.1,::1".to_string();
    vec![
        ("HTTPS_PROXY", proxy.clone()),
        ("https_proxy", proxy.clone()),
        ("HTTP_PROXY", proxy.clone()),
        ("http_proxy", proxy.clone()),
        ("ALL_PROXY", proxy.clone()),
        ("all_proxy", proxy),
        ("NO_PROXY", local.clone()),
        ("no_proxy", local),
    ]
}

#[cfg(test)]
mod tests;
