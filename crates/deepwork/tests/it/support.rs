//! Shared helpers: temp projects, the fake bridge, the mock server, and running `deepwork`.
//!
//! Every run gets its own HOME / XDG_CONFIG_HOME (empty temp dirs) and its own working
//! directory, so no real user config is ever read. Runs have a deadline; a run that outlives it
//! is killed and the test fails with whatever it printed.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;

/// How long one `deepwork` run may take before the test gives up on it.
pub const RUN_DEADLINE: Duration = Duration::from_secs(60);

pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

pub fn fake_bridge_path() -> PathBuf {
    let p = fixtures_dir().join("fake-bridge.mjs");
    assert!(p.is_file(), "fixture missing: {}", p.display());
    p
}

pub fn mock_server_path() -> PathBuf {
    let p = fixtures_dir().join("mock-server.mjs");
    assert!(p.is_file(), "fixture missing: {}", p.display());
    p
}

/// Writes `content` at `root/rel`, creating parent folders.
pub fn write(root: &Path, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
    let p = root.join(rel);
    if let Some(parent) = p.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    fs::write(&p, content).unwrap();
    p
}

// ---------------------------------------------------------------------------------------------
// Projects

/// A project folder inside its own temp dir (so `..` from the project is still ours).
#[derive(Debug)]
pub struct Project {
    _tmp: TempDir,
    pub root: PathBuf,
    /// The temp dir holding `root`; things "outside the project" go here.
    pub outside: PathBuf,
}

impl Project {
    pub fn new() -> Self {
        Self::named("proj")
    }

    pub fn named(name: &str) -> Self {
        let tmp = tempfile::Builder::new()
            .prefix("dw-proj")
            .tempdir()
            .unwrap();
        let outside = tmp.path().to_path_buf();
        let root = outside.join(name);
        fs::create_dir_all(&root).unwrap();
        Self {
            _tmp: tmp,
            root,
            outside,
        }
    }

    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> &Self {
        write(&self.root, rel, content);
        self
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    pub fn read(&self, rel: &str) -> Vec<u8> {
        fs::read(self.path(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
    }

    pub fn read_string(&self, rel: &str) -> String {
        String::from_utf8(self.read(rel)).unwrap()
    }

    pub fn exists(&self, rel: &str) -> bool {
        self.path(rel).symlink_metadata().is_ok()
    }

    /// All files under `rel` (recursively), as `/`-separated paths relative to `rel`.
    pub fn files_under(&self, rel: &str) -> Vec<String> {
        fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
            let Ok(rd) = fs::read_dir(dir) else { return };
            for e in rd {
                let e = e.unwrap();
                let p = e.path();
                if e.file_type().unwrap().is_dir() {
                    walk(base, &p, out);
                } else {
                    let rel = p.strip_prefix(base).unwrap();
                    let s: Vec<String> = rel
                        .components()
                        .map(|c| c.as_os_str().to_string_lossy().into_owned())
                        .collect();
                    out.push(s.join("/"));
                }
            }
        }
        let mut out = Vec::new();
        let base = self.path(rel);
        walk(&base, &base, &mut out);
        out.sort();
        out
    }
}

// ---------------------------------------------------------------------------------------------
// The fake bridge

/// A scenario for `tests/fixtures/fake-bridge.mjs` and the log it writes.
#[derive(Debug)]
pub struct Bridge {
    _tmp: TempDir,
    pub scenario: PathBuf,
    pub log: PathBuf,
}

impl Bridge {
    /// `steps` is the JSON array of scenario steps.
    pub fn new(steps: Value) -> Self {
        let tmp = tempfile::Builder::new()
            .prefix("dw-bridge")
            .tempdir()
            .unwrap();
        let scenario = tmp.path().join("scenario.json");
        let log = tmp.path().join("calls.jsonl");
        fs::write(
            &scenario,
            serde_json::to_vec_pretty(&json!({ "steps": steps })).unwrap(),
        )
        .unwrap();
        Self {
            _tmp: tmp,
            scenario,
            log,
        }
    }

    /// One plain answer per call.
    pub fn answers(answers: &[&str]) -> Self {
        Self::new(Value::Array(
            answers.iter().map(|a| json!({ "answer": a })).collect(),
        ))
    }

    pub fn dir(&self) -> &Path {
        self._tmp.path()
    }

    /// The calls logged so far (empty when the bridge was never run).
    pub fn calls(&self) -> Vec<Value> {
        match fs::read_to_string(&self.log) {
            Ok(s) => s
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| serde_json::from_str(l).unwrap())
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    /// The message text of each call (the content of its `--file`).
    pub fn inputs(&self) -> Vec<String> {
        self.calls()
            .iter()
            .map(|c| c["input"].as_str().unwrap().to_owned())
            .collect()
    }

    pub fn argv(&self, call: usize) -> Vec<String> {
        self.calls()[call]["argv"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_owned())
            .collect()
    }
}

// ---------------------------------------------------------------------------------------------
// The mock HTTP server

/// `tests/fixtures/mock-server.mjs`, killed on drop.
#[derive(Debug)]
pub struct MockServer {
    child: Child,
    _stdout: BufReader<ChildStdout>,
    _tmp: TempDir,
    pub port: u16,
    pub log: PathBuf,
    pub access_log: PathBuf,
}

impl MockServer {
    /// `scenario` is the whole scenario object (`{"steps": [...], "tabs": [...]}`).
    pub fn start(scenario: Value) -> Self {
        let tmp = tempfile::Builder::new()
            .prefix("dw-mock")
            .tempdir()
            .unwrap();
        let scenario_path = tmp.path().join("scenario.json");
        let log = tmp.path().join("requests.jsonl");
        let access_log = tmp.path().join("access.jsonl");
        fs::write(&scenario_path, serde_json::to_vec(&scenario).unwrap()).unwrap();
        let mut child = Command::new("node")
            .arg(mock_server_path())
            .arg("--scenario")
            .arg(&scenario_path)
            .arg("--log")
            .arg(&log)
            .arg("--access-log")
            .arg(&access_log)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn node mock-server.mjs");
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        // Blocks until the server prints its port (or dies: then read_line returns 0).
        stdout.read_line(&mut line).unwrap();
        let port = match line.trim().strip_prefix("listening ") {
            Some(p) => p.parse().expect("port number"),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("mock server did not print `listening <port>`, got {line:?}");
            }
        };
        Self {
            child,
            _stdout: stdout,
            _tmp: tmp,
            port,
            log,
            access_log,
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Chat completion requests received so far.
    pub fn requests(&self) -> Vec<Value> {
        read_jsonl(&self.log)
    }

    /// `(method, path)` of every request received so far.
    pub fn access(&self) -> Vec<(String, String)> {
        read_jsonl(&self.access_log)
            .into_iter()
            .map(|v| {
                (
                    v["method"].as_str().unwrap().to_owned(),
                    v["path"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_jsonl(p: &Path) -> Vec<Value> {
    match fs::read_to_string(p) {
        Ok(s) => s
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// A 127.0.0.1 port that nothing listens on (bound, then released).
pub fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

// ---------------------------------------------------------------------------------------------
// Running deepwork

/// A `deepwork` invocation under construction.
#[derive(Debug)]
pub struct Dw {
    args: Vec<OsString>,
    env: BTreeMap<OsString, OsString>,
    home: TempDir,
    cwd: PathBuf,
}

pub fn deepwork() -> Dw {
    let home = tempfile::Builder::new()
        .prefix("dw-home")
        .tempdir()
        .unwrap();
    let cwd = home.path().join("cwd");
    fs::create_dir_all(&cwd).unwrap();
    let config_home = home.path().join("xdg-config");
    fs::create_dir_all(&config_home).unwrap();
    let mut env = BTreeMap::new();
    env.insert("HOME".into(), home.path().as_os_str().to_owned());
    env.insert("XDG_CONFIG_HOME".into(), config_home.into_os_string());
    env.insert(
        "APPDATA".into(),
        home.path().join("appdata").into_os_string(),
    );
    env.insert("NO_COLOR".into(), "1".into());
    Dw {
        args: Vec::new(),
        env,
        home,
        cwd,
    }
}

impl Dw {
    pub fn arg(mut self, a: impl Into<OsString>) -> Self {
        self.args.push(a.into());
        self
    }

    pub fn args<I, S>(mut self, it: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(it.into_iter().map(Into::into));
        self
    }

    pub fn env(mut self, k: impl Into<OsString>, v: impl Into<OsString>) -> Self {
        self.env.insert(k.into(), v.into());
        self
    }

    /// `--dir <project>`.
    pub fn dir(self, p: &Project) -> Self {
        self.arg("--dir").arg(&p.root)
    }

    /// `--bridge <fake-bridge.mjs>` plus the scenario/log environment.
    pub fn bridge(self, b: &Bridge) -> Self {
        self.bridge_env(b).arg("--bridge").arg(fake_bridge_path())
    }

    /// Only the scenario/log environment (for runs whose bridge comes from a config file).
    pub fn bridge_env(self, b: &Bridge) -> Self {
        self.env("FAKE_BRIDGE_SCENARIO", &b.scenario)
            .env("FAKE_BRIDGE_LOG", &b.log)
    }

    pub fn current_dir(mut self, p: &Path) -> Self {
        self.cwd = p.to_path_buf();
        self
    }

    /// The child's HOME (an empty temp dir).
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// The child's `$XDG_CONFIG_HOME`.
    pub fn config_home(&self) -> PathBuf {
        self.home.path().join("xdg-config")
    }

    /// Writes `$XDG_CONFIG_HOME/deepwork/config.json` with the given text.
    pub fn xdg_config_text(self, text: &str) -> Self {
        write(&self.config_home(), "deepwork/config.json", text);
        self
    }

    /// Writes `value` to a config file in the temp home and passes `--config FILE`.
    pub fn config(self, value: Value) -> Self {
        let p = write(
            self.home.path(),
            "cfg/config.json",
            serde_json::to_vec_pretty(&value).unwrap(),
        );
        self.arg("--config").arg(p)
    }

    pub fn run(self) -> Out {
        run_with_deadline(self, RUN_DEADLINE)
    }

    /// Starts the run and returns at once (its output is dropped); the temp home lives as
    /// long as the returned guard.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub fn spawn(self) -> (Child, TempDir) {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_deepwork"));
        cmd.args(&self.args)
            .current_dir(&self.cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        (cmd.spawn().expect("spawn deepwork"), self.home)
    }
}

/// What a finished run printed.
#[derive(Debug)]
pub struct Out {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
    pub cmdline: String,
    /// The run's HOME, kept alive so tests can look into it afterwards.
    pub home: TempDir,
}

impl Out {
    pub fn dump(&self) -> String {
        format!(
            "command: {}\nexit: {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}\n---",
            self.cmdline, self.code, self.stdout, self.stderr
        )
    }

    #[track_caller]
    pub fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.code,
            Some(code),
            "unexpected exit code\n{}",
            self.dump()
        );
        self
    }

    /// stdout parsed as exactly one JSON object.
    #[track_caller]
    pub fn json(&self) -> Value {
        let v: Value = serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not one JSON value: {e}\n{}", self.dump()));
        assert!(
            v.is_object(),
            "stdout JSON is not an object\n{}",
            self.dump()
        );
        v
    }
}

fn run_with_deadline(dw: Dw, deadline: Duration) -> Out {
    let exe = env!("CARGO_BIN_EXE_deepwork");
    let mut cmd = Command::new(exe);
    cmd.args(&dw.args)
        .current_dir(&dw.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in &dw.env {
        cmd.env(k, v);
    }
    let cmdline = format!(
        "deepwork {}",
        dw.args
            .iter()
            .map(|a| format!("{:?}", a.to_string_lossy()))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let start = Instant::now();
    let mut child = cmd.spawn().expect("spawn deepwork");
    let stdout_rx = drain(child.stdout.take().unwrap());
    let stderr_rx = drain(child.stderr.take().unwrap());
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let status = match rx.recv_timeout(deadline) {
        Ok(st) => st.expect("wait for deepwork"),
        Err(_) => {
            kill_pid(pid);
            let so = stdout_rx
                .recv_timeout(Duration::from_secs(5))
                .unwrap_or_default();
            let se = stderr_rx
                .recv_timeout(Duration::from_secs(5))
                .unwrap_or_default();
            panic!(
                "{cmdline} did not finish within {deadline:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
                String::from_utf8_lossy(&so),
                String::from_utf8_lossy(&se)
            );
        }
    };
    let elapsed = start.elapsed();
    // deepwork has exited; if its pipes stay open, a process it started is still holding them.
    let stdout = stdout_rx
        .recv_timeout(Duration::from_secs(10))
        .expect("deepwork exited but its stdout stayed open: a child process outlived it");
    let stderr = stderr_rx
        .recv_timeout(Duration::from_secs(10))
        .expect("deepwork exited but its stderr stayed open: a child process outlived it");
    Out {
        home: dw.home,
        code: status.code(),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        elapsed,
        cmdline,
    }
}

fn drain(mut r: impl Read + Send + 'static) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        let _ = tx.send(buf);
    });
    rx
}

fn kill_pid(pid: u32) {
    #[cfg(unix)]
    let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
    #[cfg(windows)]
    let _ = Command::new("taskkill")
        .args(["/F", "/T", "/PID", &pid.to_string()])
        .status();
}

/// Waits until `cond` holds, failing after `limit`.
#[track_caller]
pub fn wait_until(limit: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(10));
    }
}

/// True while process `pid` exists and is not a zombie.
#[cfg(unix)]
pub fn pid_alive(pid: u32) -> bool {
    let proc_dir = Path::new("/proc");
    if proc_dir.join("self").exists() {
        return match fs::read_to_string(proc_dir.join(pid.to_string()).join("stat")) {
            // The state is the first field after the parenthesised command name.
            Ok(stat) => match stat.rfind(')') {
                Some(i) => !matches!(stat[i + 1..].trim_start().chars().next(), Some('Z' | 'X')),
                None => true,
            },
            Err(_) => false,
        };
    }
    Command::new("kill")
        .arg("-0")
        .arg(pid.to_string())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Waits (up to `limit`) for process `pid` to be gone; returns whether it is.
#[cfg(unix)]
pub fn wait_pid_gone(pid: u32, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if !pid_alive(pid) {
            return true;
        }
        thread::sleep(Duration::from_millis(10));
    }
    !pid_alive(pid)
}

// ---------------------------------------------------------------------------------------------
// Reading the --json result

pub fn steps(v: &Value) -> &Vec<Value> {
    v["steps"]
        .as_array()
        .unwrap_or_else(|| panic!("no steps array in {v:#}"))
}

pub fn requests(step: &Value) -> &Vec<Value> {
    step["requests"]
        .as_array()
        .unwrap_or_else(|| panic!("no requests array in {step:#}"))
}

pub fn files(v: &Value) -> &Vec<Value> {
    v["files"]
        .as_array()
        .unwrap_or_else(|| panic!("no files array in {v:#}"))
}

/// The `files` entry with this path.
#[track_caller]
pub fn file_entry<'a>(v: &'a Value, path: &str) -> &'a Value {
    files(v)
        .iter()
        .find(|f| f["path"].as_str() == Some(path))
        .unwrap_or_else(|| panic!("no files entry for {path:?} in {:#}", v["files"]))
}

/// Position of `needle` in `hay`, with a readable failure.
#[track_caller]
pub fn pos(hay: &str, needle: &str) -> usize {
    hay.find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not found in message:\n{}", clip(hay)))
}

/// The text, shortened for failure messages.
pub fn clip(s: &str) -> String {
    const MAX: usize = 4000;
    if s.chars().count() <= MAX {
        s.to_owned()
    } else {
        let head: String = s.chars().take(MAX / 2).collect();
        let tail: String = s
            .chars()
            .rev()
            .take(MAX / 2)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        format!(
            "{head}\n[... {} chars ...]\n{tail}",
            s.chars().count() - MAX
        )
    }
}

#[track_caller]
pub fn assert_contains(hay: &str, needle: &str) {
    assert!(
        hay.contains(needle),
        "expected {needle:?} in:\n{}",
        clip(hay)
    );
}

#[track_caller]
pub fn assert_not_contains(hay: &str, needle: &str) {
    assert!(
        !hay.contains(needle),
        "did not expect {needle:?} in:\n{}",
        clip(hay)
    );
}

/// Lines of `text` that are exactly `line` after trimming.
pub fn count_lines_eq(text: &str, line: &str) -> usize {
    text.lines().filter(|l| l.trim() == line).count()
}

/// Is `s` a `backup/<YYYYMMDD-HHMMSS>/<rel>` path?
pub fn is_backup_path(s: &str, rel: &str) -> bool {
    let Some(rest) = s.strip_prefix("backup/") else {
        return false;
    };
    let Some((stamp, tail)) = rest.split_once('/') else {
        return false;
    };
    let b = stamp.as_bytes();
    b.len() == 15
        && b[..8].iter().all(u8::is_ascii_digit)
        && b[8] == b'-'
        && b[9..].iter().all(u8::is_ascii_digit)
        && tail == rel
}
