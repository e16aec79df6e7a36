//! `conveyord bridge`: the sandbox's end of the way out. Inside the run's network namespace
//! only loopback exists; the bridge listens there on TCP and pipes every connection to a Unix
//! socket the daemon's [`super::Proxy`] (or [`super::ApiForward`]) serves outside and the
//! sandbox has bound in. It replaces `socat` (one less program to install and check) and
//! starts faster: plain threads, no runtime, a handful of connections at a time.
//!
//! Given a command (`conveyord bridge … -- claude -p …`) the bridge listens first and then runs
//! it, and exits with its code: the caller needs no readiness loop, and there is no moment in
//! which the agent could connect before the bridge listens. Without one it serves until
//! killed and prints nothing; a shell can wait for its port in `/proc/net/tcp`.

use std::ffi::OsString;
use std::io;
#[cfg(unix)]
use std::net::Shutdown;
use std::net::{SocketAddr, TcpListener, TcpStream};
#[cfg(unix)]
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Result};

/// One TCP address inside the sandbox piped to one Unix socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pipe {
    pub listen: SocketAddr,
    pub socket: PathBuf,
}

/// Listening sockets, not yet accepting.
#[derive(Debug)]
pub struct Bridge {
    listeners: Vec<(TcpListener, PathBuf)>,
}

impl Bridge {
    /// Listens on every pipe's address. Connections queue from here on, so whatever starts
    /// after this returns finds the ports open.
    ///
    /// # Errors
    /// [`Error::Bind`] naming the address.
    pub fn bind(pipes: &[Pipe]) -> Result<Bridge> {
        let listeners = pipes
            .iter()
            .map(|p| {
                TcpListener::bind(p.listen)
                    .map(|l| (l, p.socket.clone()))
                    .map_err(|source| Error::Bind {
                        addr: p.listen,
                        source,
                    })
            })
            .collect::<Result<_>>()?;
        Ok(Bridge { listeners })
    }

    /// Accepts on every address in threads of its own, for as long as the process lives.
    pub fn start(self) {
        for (listener, socket) in self.listeners {
            std::thread::spawn(move || accept(&listener, &socket));
        }
    }
}

fn accept(listener: &TcpListener, socket: &Path) {
    for conn in listener.incoming() {
        let Ok(tcp) = conn else { continue };
        let socket = socket.to_path_buf();
        std::thread::spawn(move || {
            if let Err(e) = pipe(tcp, &socket) {
                tracing::warn!(socket = %socket.display(), error = %e, "the bridge cannot reach the daemon's socket");
            }
        });
    }
}

/// Off Unix there is no sandbox to bridge (see `crate::no_unix`).
#[cfg(not(unix))]
fn pipe(_tcp: TcpStream, _socket: &Path) -> io::Result<()> {
    Err(super::no_unix::unsupported())
}

/// Copies both ways until both sides are done; each side's end of writing is passed on.
#[cfg(unix)]
fn pipe(tcp: TcpStream, socket: &Path) -> io::Result<()> {
    let unix = UnixStream::connect(socket)?;
    let (mut tcp_r, mut unix_w) = (tcp.try_clone()?, unix.try_clone()?);
    let up = std::thread::spawn(move || {
        let _ = io::copy(&mut tcp_r, &mut unix_w);
        let _ = unix_w.shutdown(Shutdown::Write);
    });
    let (mut unix_r, mut tcp_w) = (unix, tcp);
    let _ = io::copy(&mut unix_r, &mut tcp_w);
    let _ = tcp_w.shutdown(Shutdown::Write);
    let _ = up.join();
    Ok(())
}

/// Runs `command` (program and arguments) with the bridge's stdio and environment; its exit
/// code, or 128 + the signal that ended it, as a shell reports it.
///
/// # Errors
/// [`Error::Spawn`] when it cannot be started.
pub fn run(command: &[OsString]) -> Result<i32> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| Error::Internal("the bridge was given an empty command".into()))?;
    let status = Command::new(program)
        .args(args)
        .status()
        .map_err(|source| Error::Spawn {
            program: program.to_string_lossy().into_owned(),
            source,
        })?;
    #[cfg(unix)]
    let code = {
        use std::os::unix::process::ExitStatusExt as _;
        status.code().or_else(|| status.signal().map(|s| 128 + s))
    };
    #[cfg(not(unix))]
    let code = status.code();
    Ok(code.unwrap_or(1))
}
