//! Starting the bridge before its message is ready (Linux only).
//!
//! A bridge call is a Node start-up (about 0.1 s here, module loading included) before the
//! bridge does anything with the message. A run knows that a step's message will be sent
//! before the message is ready — step 1 at the run's start, step n + 1 as soon as answer n
//! asks for something — so the bridge is started then, with `--file` naming a named pipe
//! (FIFO): Node starts up while deepwork walks the folder or runs FIND and LIST, and its
//! `fs.readFile` of `--file` blocks in `open(2)` until deepwork opens the pipe, writes the
//! message and closes it (the end of the file). The command line is exactly the bridge's own.
//!
//! Why Linux only: a bridge waiting for its message must not outlive deepwork, and only Linux
//! has `PR_SET_PDEATHSIG` (see `exec::spawn`), which kills it even when deepwork is killed with
//! `kill -9`. On macOS or a BSD such a bridge would wait on its pipe forever, so there (and on
//! Windows, whose named pipes are not files) the bridge starts when its message is ready.
//!
//! What we cannot see is how the bridge reads its `--file`: a reader that opens it twice
//! would wait for a second message that never comes (until the timeout), one that checks
//! that it is a regular file would refuse it. The second is handled: a bridge that exits
//! without having opened the pipe has read nothing, so the step is sent again the old way.
//! The first is why the `prespawn` key exists.

use std::fs::File;
use std::io::{ErrorKind, Write};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::thread;
use std::time::{Duration, Instant};

use crate::exec::{self, Cancel, Running};

/// A bridge started for step `n`, blocked on reading its pipe.
#[derive(Debug)]
pub(super) struct Waiting {
    /// The step it was started for.
    pub n: usize,
    /// The process; dropping it kills the bridge's group.
    pub running: Running,
    /// Its `--file`.
    pub fifo: PathBuf,
}

/// How handing the message over ended.
#[derive(Debug)]
pub(super) enum Delivery {
    /// The bridge opened the pipe and the message went in whole, or the bridge closed the pipe
    /// before reading it all (then it is ending: its exit tells what happened).
    Sent,
    /// The bridge exited without ever opening the pipe: it read nothing.
    Unread(ExitStatus),
    /// The cancel flag was set first.
    Cancelled,
    /// The deadline passed first.
    TimedOut,
}

/// Makes `fifo` a named pipe and starts `cmd`, whose `--file` it is.
///
/// # Errors
/// When the pipe cannot be made or the process cannot be started.
pub(super) fn start(n: usize, cmd: Command, fifo: &Path) -> std::io::Result<Waiting> {
    match std::fs::remove_file(fifo) {
        Err(e) if e.kind() != ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    mkfifo(fifo)?;
    let running = exec::spawn(cmd)?;
    Ok(Waiting {
        n,
        running,
        fifo: fifo.to_owned(),
    })
}

impl Waiting {
    /// Opens the pipe once the bridge reads it, writes `message` and closes the pipe, watching
    /// the bridge, the deadline and the cancel flag all along: opening a pipe for writing waits
    /// for a reader, so it is tried without waiting (`O_NONBLOCK`) until it works or the bridge
    /// has exited.
    ///
    /// # Errors
    /// When the pipe cannot be opened or written for another reason than a missing reader.
    pub(super) fn deliver(
        &mut self,
        message: &str,
        deadline: Instant,
        cancel: &Cancel,
    ) -> std::io::Result<Delivery> {
        let mut pipe = loop {
            match std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&self.fifo)
            {
                Ok(pipe) => break pipe,
                // No reader yet: Node is still starting.
                Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {}
                Err(e) => return Err(e),
            }
            if let Some(status) = self.running.exited()? {
                return Ok(Delivery::Unread(status));
            }
            if let Some(stop) = stopped(deadline, cancel) {
                return Ok(stop);
            }
            thread::sleep(Duration::from_millis(2));
        };
        let mut rest = message.as_bytes();
        while !rest.is_empty() {
            match pipe.write(rest) {
                Ok(k) => rest = &rest[k..],
                // The pipe is full: wait until the bridge reads some of it.
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    wait_writable(&pipe, Duration::from_millis(20))?;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                // The bridge closed its end: it is ending; its exit says how.
                Err(e) if e.kind() == ErrorKind::BrokenPipe => return Ok(Delivery::Sent),
                Err(e) => return Err(e),
            }
            if let Some(stop) = stopped(deadline, cancel) {
                return Ok(stop);
            }
        }
        // Closing the pipe is the end of the file for the bridge.
        drop(pipe);
        Ok(Delivery::Sent)
    }
}

fn stopped(deadline: Instant, cancel: &Cancel) -> Option<Delivery> {
    if cancel.is_cancelled() {
        Some(Delivery::Cancelled)
    } else if Instant::now() >= deadline {
        Some(Delivery::TimedOut)
    } else {
        None
    }
}

#[allow(unsafe_code)]
fn mkfifo(path: &Path) -> std::io::Result<()> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|e| std::io::Error::new(ErrorKind::InvalidInput, e))?;
    // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } == -1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Waits until `pipe` takes more bytes, its reader is gone, or `limit` passes.
#[allow(unsafe_code)]
fn wait_writable(pipe: &File, limit: Duration) -> std::io::Result<()> {
    let mut fd = libc::pollfd {
        fd: pipe.as_raw_fd(),
        events: libc::POLLOUT,
        revents: 0,
    };
    let ms = libc::c_int::try_from(limit.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: one valid pollfd for an open descriptor, which `pipe` keeps open during the call.
    if unsafe { libc::poll(&mut fd, 1, ms) } == -1 {
        let e = std::io::Error::last_os_error();
        if e.kind() != ErrorKind::Interrupted {
            return Err(e);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(script: &str, fifo: &Path) -> Command {
        let mut c = Command::new("sh");
        c.arg("-c").arg(script).arg("sh").arg(fifo);
        c
    }

    #[test]
    fn the_reader_gets_the_whole_message_then_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("step1.txt");
        let copy = dir.path().join("copy.txt");
        // Bigger than a pipe's buffer, so the writer has to wait for the reader.
        let message = "строка сообщения\n".repeat(20_000);
        let script = format!("cat \"$1\" > '{}'", copy.display());
        let mut w = start(1, shell(&script, &fifo), &fifo).unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        let sent = w.deliver(&message, deadline, &Cancel::new()).unwrap();
        assert!(matches!(sent, Delivery::Sent), "{sent:?}");
        let f = w.running.wait(deadline, &Cancel::new()).unwrap();
        assert!(
            matches!(f.ended, exec::Ended::Exited(s) if s.success()),
            "{f:?}"
        );
        assert_eq!(std::fs::read_to_string(&copy).unwrap(), message);
    }

    #[test]
    fn a_reader_that_exits_first_is_noticed_not_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("step1.txt");
        let mut w = start(1, shell("echo bad flag >&2; exit 2", &fifo), &fifo).unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        let sent = w.deliver("never read", deadline, &Cancel::new()).unwrap();
        assert!(
            matches!(sent, Delivery::Unread(s) if s.code() == Some(2)),
            "{sent:?}"
        );
        assert!(Instant::now() < deadline);
    }

    #[test]
    fn cancel_and_deadline_stop_the_wait_for_a_reader() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("step1.txt");
        // Never opens its --file.
        let mut w = start(1, shell("exec sleep 30", &fifo), &fifo).unwrap();
        let cancel = Cancel::new();
        cancel.cancel();
        let far = Instant::now() + Duration::from_secs(30);
        assert!(matches!(
            w.deliver("m", far, &cancel).unwrap(),
            Delivery::Cancelled
        ));
        let soon = Instant::now() + Duration::from_millis(50);
        assert!(matches!(
            w.deliver("m", soon, &Cancel::new()).unwrap(),
            Delivery::TimedOut
        ));
    }
}
