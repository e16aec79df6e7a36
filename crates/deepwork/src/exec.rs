//! Running a child process the way deepwork needs: its own process group, a deadline, a
//! cancel flag, and the tail of its stderr kept for the error message.
//!
//! The bridge starts a browser connection and may start children of its own; stopping only
//! the `node` process would leave them behind, so the whole tree is stopped: its process group
//! on Unix, its job object on Windows. On Linux a child is also killed by the kernel when
//! deepwork dies (`PR_SET_PDEATHSIG`), and on Windows by the job when deepwork's handle to it
//! closes, so not even a hard kill of deepwork leaves a bridge behind; on macOS a `kill -9`
//! leaves the running bridge to finish its call by itself.

use std::io::Read;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::thread::{self, JoinHandle};
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
pub(crate) fn run(cmd: Command, timeout: Duration, cancel: &Cancel) -> std::io::Result<Finished> {
    let mut running = spawn(cmd)?;
    running.wait(Instant::now() + timeout, cancel)
}

/// Starts `cmd` in its own process group with stdin closed and stdout/stderr piped (read on
/// threads of their own, so a chatty child never blocks on a full pipe). On Linux the child
/// is also killed when the thread that started it ends — deepwork killed with `kill -9`
/// included — so call this from the thread that will wait for the child (a run's thread).
pub(crate) fn spawn(mut cmd: Command) -> std::io::Result<Running> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    #[cfg(target_os = "linux")]
    die_with_parent(&mut cmd);
    let mut child = cmd.spawn()?;
    // From here on, whatever happens, the group does not outlive the `Running`.
    let group = match Group::of(&child) {
        Ok(g) => g,
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(e);
        }
    };
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
    // The stderr reader's end (its sender dropped) tells `wait` that the child is exiting.
    let (closed_tx, stderr_closed) = mpsc::channel::<()>();
    let err_thread = thread::spawn(move || {
        let _closed = closed_tx;
        let mut buf = Vec::new();
        if let Some(s) = stderr.as_mut() {
            let _ = s.read_to_end(&mut buf);
        }
        buf
    });
    Ok(Running {
        child,
        group,
        readers: Some((out_thread, err_thread)),
        stderr_closed: Some(stderr_closed),
        reaped: false,
    })
}

/// The threads that read a child's stdout (its head) and stderr (all of it).
type Readers = (JoinHandle<Vec<u8>>, JoinHandle<Vec<u8>>);

/// A started child. Dropping it kills its whole group and reaps it.
#[derive(Debug)]
pub(crate) struct Running {
    child: Child,
    group: Group,
    /// The threads reading stdout and stderr; taken when the child is reaped.
    readers: Option<Readers>,
    /// Disconnected once the child's stderr is closed; `None` after that was seen.
    stderr_closed: Option<mpsc::Receiver<()>>,
    reaped: bool,
}

impl Running {
    /// The child's status if it has exited (without waiting).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn exited(&mut self) -> std::io::Result<Option<ExitStatus>> {
        self.child.try_wait()
    }

    /// Waits for the child to exit by itself, the deadline to pass or the cancel flag to be
    /// set (then the group is killed), and collects its output.
    pub(crate) fn wait(&mut self, deadline: Instant, cancel: &Cancel) -> std::io::Result<Finished> {
        // Looks every 20 ms (the cancel flag and the deadline need it), but wakes at once
        // when the child closes its stderr, as it does when it exits: a finished step is seen
        // within a millisecond or so, not up to 20 ms late, which is a tenth of a whole
        // benchmark run's budget. A child that closes its stderr and lives on is looked at
        // every millisecond for a while, then every 20 ms again.
        const LOOK: Duration = Duration::from_millis(20);
        const QUICK: Duration = Duration::from_millis(1);
        let mut quick_looks = 0u32;
        let ended = loop {
            if let Some(status) = self.child.try_wait()? {
                break Ended::Exited(status);
            }
            if cancel.is_cancelled() {
                break Ended::Cancelled;
            }
            if Instant::now() >= deadline {
                break Ended::TimedOut;
            }
            match &self.stderr_closed {
                Some(rx) => match rx.recv_timeout(LOOK) {
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    _ => self.stderr_closed = None,
                },
                None if quick_looks < 200 => {
                    quick_looks += 1;
                    thread::sleep(QUICK);
                }
                None => thread::sleep(LOOK),
            }
        };
        Ok(self.finish(ended))
    }

    /// Kills the group (when the child has not exited by itself), reaps the child and collects
    /// its output.
    pub(crate) fn finish(&mut self, ended: Ended) -> Finished {
        if !matches!(ended, Ended::Exited(_)) {
            self.group.stop();
            let _ = self.child.kill();
        }
        // A grandchild may still hold the pipes open: end the group before reading them
        // (once: after a timeout or a cancel it is already stopped).
        self.group.stop();
        let _ = self.child.wait();
        self.reaped = true;
        let (stdout, stderr) = match self.readers.take() {
            Some((out, err)) => (
                out.join().unwrap_or_default(),
                err.join().unwrap_or_default(),
            ),
            None => Default::default(),
        };
        Finished {
            ended,
            stdout_head: String::from_utf8_lossy(&stdout).into_owned(),
            stderr_tail: tail(&stderr, STDERR_TAIL),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.reaped {
            self.group.stop();
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Asks the kernel to SIGKILL the child when the thread that started it ends (`kill -9` of
/// deepwork included): a bridge waiting for its message must not outlive us. The signal
/// reaches the child only, not grandchildren (those the group kill reaches while we live).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn die_with_parent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: getpid(2) has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the closure runs in the forked child before exec and calls only prctl(2) and
    // getppid(2), both async-signal-safe; it allocates nothing and touches no shared state.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            // We may have died between fork and prctl: then no signal would ever come.
            if libc::getppid() != parent {
                return Err(std::io::Error::other(
                    "deepwork ended before its child started",
                ));
            }
            Ok(())
        });
    }
}

/// Kills the process group on drop, so an early return or a panic leaves nothing running.
/// On Windows the "group" is a job object the child is put in: its children join it as they
/// start, and terminating the job ends the whole tree.
#[derive(Debug)]
struct Group(Option<GroupHandle>);

#[cfg(not(windows))]
type GroupHandle = u32;
#[cfg(windows)]
type GroupHandle = job::Job;

impl Group {
    #[cfg(not(windows))]
    #[allow(clippy::unnecessary_wraps)]
    fn of(child: &Child) -> std::io::Result<Group> {
        Ok(Group(Some(child.id())))
    }

    #[cfg(windows)]
    fn of(child: &Child) -> std::io::Result<Group> {
        job::Job::holding(child).map(|j| Group(Some(j)))
    }

    fn stop(&mut self) {
        if let Some(handle) = self.0.take() {
            #[cfg(not(windows))]
            kill_group(handle);
            #[cfg(windows)]
            handle.terminate();
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

#[cfg(not(any(unix, windows)))]
fn kill_group(_pid: u32) {}

#[cfg(windows)]
#[allow(unsafe_code)]
mod job {
    use std::os::windows::io::AsRawHandle;
    use std::process::Child;

    use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
    use windows_sys::Win32::System::JobObjects::{
        AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
        JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectExtendedLimitInformation,
        SetInformationJobObject, TerminateJobObject,
    };

    /// A job object holding one child and, as they start, its children.
    #[derive(Debug)]
    pub(super) struct Job(HANDLE);

    // SAFETY: a job handle may be used and closed from any thread.
    unsafe impl Send for Job {}
    unsafe impl Sync for Job {}

    impl Job {
        /// A new job with `child` in it. The job is also set to kill everything in it when its
        /// last handle closes, so a deepwork that dies (its handles closed by Windows) leaves no
        /// bridge behind, as `PR_SET_PDEATHSIG` does on Linux.
        ///
        /// The child runs for a moment before it is put in the job (std starts it running, not
        /// suspended); a process it starts in that moment is outside the job. A bridge starts
        /// Node, which starts the browser's connection long after: no such process is missed.
        pub(super) fn holding(child: &Child) -> std::io::Result<Job> {
            // SAFETY: null attributes and name make an anonymous job with default security.
            let handle = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
            if handle.is_null() {
                return Err(std::io::Error::last_os_error());
            }
            let job = Job(handle);
            // SAFETY: an all-zero JOBOBJECT_EXTENDED_LIMIT_INFORMATION is a valid value
            // (no limits); we set one flag.
            let mut info: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
            info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
            // SAFETY: `info` is the structure the class names, and its size is passed.
            let ok = unsafe {
                SetInformationJobObject(
                    job.0,
                    JobObjectExtendedLimitInformation,
                    (&raw const info).cast(),
                    u32::try_from(std::mem::size_of_val(&info)).unwrap_or(u32::MAX),
                )
            };
            if ok == 0 {
                return Err(std::io::Error::last_os_error());
            }
            // SAFETY: both handles are open: the job's ours, the process's the `Child`'s.
            let ok = unsafe { AssignProcessToJobObject(job.0, child.as_raw_handle() as HANDLE) };
            if ok == 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(job)
        }

        /// Ends every process in the job.
        pub(super) fn terminate(&self) {
            // SAFETY: the handle is open until drop.
            unsafe {
                TerminateJobObject(self.0, 1);
            }
        }
    }

    impl Drop for Job {
        fn drop(&mut self) {
            // SAFETY: the handle is open and closed only here.
            unsafe {
                CloseHandle(self.0);
            }
        }
    }
}

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

    #[cfg(target_os = "linux")]
    #[test]
    fn a_child_dies_with_the_thread_that_started_it() {
        // What `kill -9` of deepwork does to a waiting bridge: the thread that started the
        // child ends without stopping it (here: the `Running` is leaked, so no drop kills it).
        let pid = thread::spawn(|| {
            let mut c = Command::new("sleep");
            c.arg("30");
            let running = spawn(c).unwrap();
            let pid = running.child.id();
            std::mem::forget(running);
            pid
        })
        .join()
        .unwrap();
        let pid = i32::try_from(pid).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while process_alive(pid) && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(10));
        }
        let alive = process_alive(pid);
        if alive {
            kill_group(pid as u32);
        }
        assert!(!alive, "child {pid} outlived the thread that started it");
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
