//! Running a child process the way deepwork needs: its own process group, a deadline, a
//! cancel flag, and the tail of its stderr kept for the error message.
//!
//! The bridge starts a browser connection and may start children of its own; stopping only
//! the `node` process would leave them behind, so the whole group is stopped (on Unix; on
//! Windows the process itself is killed).

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// How much of a child's stderr is kept for error messages.
pub const STDERR_TAIL: usize = 2000;
/// How much of a child's stdout is kept (the rest is drained and dropped).
const STDOUT_HEAD: usize = 64 * 1024;

/// A flag to stop a run from another thread (the app's Stop button).
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// A flag that is not set.
    pub fn new() -> Cancel {
        Cancel::default()
    }
    /// Asks the run to stop; a running child is killed.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    /// Whether [`Cancel::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// How a child ended.
#[derive(Debug)]
pub(crate) enum Ended {
    /// It exited by itself.
    Exited(ExitStatus),
    /// The deadline passed; the group was killed.
    TimedOut,
    /// The cancel flag was set; the group was killed.
    Cancelled,
}

/// A finished child: how it ended, the start of its stdout and the tail of its stderr.
#[derive(Debug)]
pub(crate) struct Finished {
    pub ended: Ended,
    pub stdout_head: String,
    pub stderr_tail: String,
}

/// Starts `cmd` in its own process group with stdin closed and stdout/stderr piped, then
/// waits for it, the deadline, or the cancel flag.
pub(crate) fn run(
    mut cmd: Command,
    timeout: Duration,
    cancel: &Cancel,
) -> std::io::Result<Finished> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let mut child = cmd.spawn()?;
    // From here on, whatever happens, the group does not outlive this call.
    let mut group = Group(Some(child.id()));
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let out_thread = thread::spawn(move || {
        let mut head = Vec::new();
        if let Some(s) = stdout.as_mut() {
            let _ = s.by_ref().take(STDOUT_HEAD as u64).read_to_end(&mut head);
            let _ = std::io::copy(s, &mut std::io::sink());
        }
        head
    });
    let err_thread = thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(s) = stderr.as_mut() {
            let _ = s.read_to_end(&mut buf);
        }
        buf
    });
    let deadline = Instant::now() + timeout;
    let ended = loop {
        if let Some(status) = child.try_wait()? {
            break Ended::Exited(status);
        }
        if cancel.is_cancelled() {
            group.stop();
            let _ = child.kill();
            break Ended::Cancelled;
        }
        if Instant::now() >= deadline {
            group.stop();
            let _ = child.kill();
            break Ended::TimedOut;
        }
        thread::sleep(Duration::from_millis(20));
    };
    if !matches!(ended, Ended::Exited(_)) {
        let _ = child.wait();
    }
    // A grandchild may still hold the pipes open: end the group before reading them (once:
    // after a timeout or a cancel it is already stopped).
    group.stop();
    let stdout = out_thread.join().unwrap_or_default();
    let stderr = err_thread.join().unwrap_or_default();
    Ok(Finished {
        ended,
        stdout_head: String::from_utf8_lossy(&stdout).into_owned(),
        stderr_tail: tail(&stderr, STDERR_TAIL),
    })
}

/// Kills the process group on drop, so an early return or a panic leaves nothing running.
struct Group(Option<u32>);

impl Group {
    fn stop(&mut self) {
        if let Some(pid) = self.0.take() {
            kill_group(pid);
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(unix)]
#[allow(unsafe_code)]
fn kill_group(pid: u32) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    // SAFETY: kill(2) with a negative pid signals the process group we created with
    // process_group(0); it touches no memory of ours.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
}

#[cfg(not(unix))]
fn kill_group(_pid: u32) {}

/// The last `max` bytes of `bytes` as text, cut at a character boundary.
pub(crate) fn tail(bytes: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_end();
    if text.len() <= max {
        return text.to_owned();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("…{}", &text[start..])
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn exit_status_and_stderr_tail() {
        let mut c = Command::new("sh");
        c.args(["-c", "echo out; echo problem >&2; exit 4"]);
        let f = run(c, Duration::from_secs(10), &Cancel::new()).unwrap();
        assert!(matches!(f.ended, Ended::Exited(s) if s.code() == Some(4)));
        assert_eq!(f.stderr_tail, "problem");
        assert_eq!(f.stdout_head, "out\n");
    }

    #[test]
    fn timeout_kills_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let mut c = Command::new("sh");
        // A grandchild that would outlive a plain kill of `sh`.
        c.arg("-c")
            .arg(format!("sleep 30 & echo $! > {}; wait", pidfile.display()));
        let f = run(c, Duration::from_millis(300), &Cancel::new()).unwrap();
        assert!(matches!(f.ended, Ended::TimedOut));
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // SIGKILL is delivered asynchronously: wait (bounded) for the process to be gone.
        let deadline = Instant::now() + Duration::from_secs(5);
        while process_alive(pid) && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(10));
        }
        assert!(!process_alive(pid), "grandchild {pid} survived");
    }

    #[test]
    fn cancel_stops_the_child() {
        let cancel = Cancel::new();
        let c2 = cancel.clone();
        let t = thread::spawn(move || {
            let mut c = Command::new("sleep");
            c.arg("30");
            run(c, Duration::from_secs(60), &c2).unwrap()
        });
        cancel.cancel();
        assert!(matches!(t.join().unwrap().ended, Ended::Cancelled));
    }

    #[test]
    fn tail_keeps_the_end() {
        assert_eq!(tail("абвгд".as_bytes(), 4), "…гд");
        assert_eq!(tail(b"short\n", 100), "short");
    }

    #[allow(unsafe_code)]
    fn process_alive(pid: i32) -> bool {
        // A zombie still answers kill(0); check /proc for the state as well.
        // SAFETY: signal 0 only checks for existence.
        let exists = unsafe { libc::kill(pid, 0) } == 0;
        exists
            && std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|s| !s.contains(") Z "))
                .unwrap_or(false)
    }
}
