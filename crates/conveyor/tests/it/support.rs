//! Shared pieces of the integration tests: a daemon with its sample project and repository
//! ([`Daemon`]), the scripted Anthropic mock (a real Node server), the real `claude` binary from
//! `node_modules`, real git repositories, polling with deadlines.

use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use conveyor_api::{Client, Line, NewLine, NewProject};
use serde_json::{Value, json};

pub const TOKEN: &str = "test-token";

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The real CLI, installed by `npm install` from the pinned devDependency.
pub fn claude_bin() -> PathBuf {
    let p = repo_root().join("node_modules/.bin/claude");
    assert!(
        p.exists(),
        "{} is missing: run `npm install` (scripts/test.sh does)",
        p.display()
    );
    p
}

/// Starts a test double of `tests/fixtures` (a Node server on a free loopback port) and reads
/// the port from the first line it prints, after `prefix`.
pub fn node_server(script: &str, args: &[&str], prefix: &str) -> (Child, u16) {
    let mut child = Command::new("node")
        .arg(repo_root().join("tests/fixtures").join(script))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("node runs {script}: {e}"));
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim()
        .strip_prefix(prefix)
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{script} did not start: {line:?}"));
    (child, port)
}

/// A Node test double of `tests/fixtures` on a free loopback port (`listening <port>` on its
/// stdout: the fake Telegram, the PlanFix mock), stopped when dropped.
pub struct Double {
    child: Child,
    pub url: String,
    pub http: reqwest::Client,
}

impl Double {
    pub fn start(script: &str, args: &[String]) -> Double {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (child, port) = node_server(script, &args, "listening ");
        Double {
            child,
            url: format!("http://127.0.0.1:{port}"),
            // Loopback only: never through a proxy the environment names.
            http: reqwest::Client::builder().no_proxy().build().unwrap(),
        }
    }

    /// `GET path`'s JSON.
    pub async fn get(&self, path: &str) -> Value {
        self.http
            .get(format!("{}{path}", self.url))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// `POST path` with `body`; its JSON, the status checked.
    pub async fn post(&self, path: &str, body: Value) -> Value {
        let r = self
            .http
            .post(format!("{}{path}", self.url))
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = r.status();
        let v: Value = r.json().await.unwrap();
        assert!(status.is_success(), "{path}: {status} {v}");
        v
    }
}

impl Drop for Double {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The mock Anthropic API (`tests/fixtures/mock-anthropic.mjs`) on a free loopback port.
pub struct Mock {
    child: Child,
    port: u16,
    http: reqwest::Client,
}

impl Mock {
    pub fn start() -> Mock {
        let (child, port) = node_server("mock-anthropic.mjs", &["--port", "0"], "LISTENING ");
        Mock {
            child,
            port,
            // The mock closes a connection idle for 1 s (`keepAliveTimeout`): reusing one that
            // old races its close and fails with a reset, so the pool lets them go sooner.
            http: reqwest::Client::builder()
                .pool_idle_timeout(Duration::from_millis(500))
                .build()
                .unwrap(),
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Scripts the replies of one session: `{"1": [turn..], "2.1": [..]}`.
    pub async fn script(&self, session: &str, steps: Value) {
        self.admin("script", json!({"session": session, "steps": steps}))
            .await;
    }

    /// Scripts the replies of every session that runs a step of `kind` ("judge", "rework", …,
    /// or "*") for `line`: a judge runs in a fresh session of its own the test cannot know.
    pub async fn script_line(&self, line: &str, kind: &str, steps: Value) {
        self.admin(
            "script",
            json!({"line": line, "kind": kind, "steps": steps}),
        )
        .await;
    }

    /// Switches the mock to counted usage: each answer's usage computed from its request and
    /// the prompt cache, as the API bills it (`mock-anthropic.mjs`, "Counted usage").
    pub async fn counted_usage(&self) {
        self.admin("usage", json!({"mode": "counted"})).await;
    }

    /// Empties the counted usage's prompt cache.
    pub async fn clear_cache(&self) {
        self.admin("cache/clear", json!({})).await;
    }

    /// A `POST /_mock/<path>` the mock must accept.
    async fn admin(&self, path: &str, body: Value) {
        let r = self
            .http
            .post(format!("{}/_mock/{path}", self.url()))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "_mock/{path}: {}", r.status());
    }

    pub async fn release(&self, session: &str) {
        self.http
            .post(format!("{}/_mock/release", self.url()))
            .json(&json!({"session": session}))
            .send()
            .await
            .unwrap();
    }

    /// Every request the mock saw.
    pub async fn log(&self) -> Vec<Value> {
        self.http
            .get(format!("{}/_mock/log", self.url()))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// The scripted (non-side) requests of a session.
    pub async fn requests(&self, session: &str) -> Vec<Value> {
        self.log()
            .await
            .into_iter()
            .filter(|e| e["kind"] == "messages" && e["session"] == session && e["side"] != true)
            .collect()
    }
}

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------------------------------------
// The daemon

/// A daemon for one test, in its own temp folder: a data folder, a sample repository (`main`
/// holding a few files), the agent's `HOME`, and the scripted mock when the agent is the real
/// CLI. Made with [`Daemon::builder`]; runs in this process (`conveyor::start`) or as the
/// `conveyord` binary, and can be stopped and started again on the same folder.
pub struct Daemon {
    tmp: tempfile::TempDir,
    repo: PathBuf,
    /// The configuration the daemon is (re)started with, also written to `conveyor.toml`.
    config: toml::Table,
    mock: Option<Mock>,
    binary: bool,
    server: Server,
    url: String,
    client: Client,
    project: tokio::sync::OnceCell<String>,
}

enum Server {
    /// `conveyor::start` in the test's process.
    InProcess(conveyor::ServerHandle),
    /// The `conveyord serve` binary.
    Binary(Child),
    Stopped,
}

/// What the daemon runs as its agent.
enum Agent {
    /// A `claude` that does not exist: a line's step cannot start its agent.
    Missing,
    /// The real CLI against the scripted mock, logged in with an API key or an OAuth token.
    Mock { oauth: bool },
    /// The real CLI with no login and no API to reach.
    NotLoggedIn,
}

/// The options of a [`Daemon`]; every one has a default.
pub struct DaemonBuilder<'a> {
    repo_name: &'a str,
    files: &'a [(&'a str, &'a str)],
    config: &'a str,
    agent: Agent,
    claude: Option<&'a Path>,
    agent_home: bool,
    open_to_others: bool,
}

impl Daemon {
    /// The defaults: a repository holding `a.txt`, no `claude` to run.
    pub async fn start() -> Daemon {
        Daemon::builder().start().await
    }

    pub fn builder<'a>() -> DaemonBuilder<'a> {
        DaemonBuilder {
            repo_name: "repo",
            files: &[("a.txt", "a\n")],
            config: "",
            agent: Agent::Missing,
            claude: None,
            agent_home: true,
            open_to_others: false,
        }
    }

    /// The API client, with the token.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The daemon started in process.
    pub fn handle(&self) -> &conveyor::ServerHandle {
        match &self.server {
            Server::InProcess(h) => h,
            _ => panic!("the daemon does not run in process"),
        }
    }

    /// The mock the agent talks to (the builder's `mock()`).
    pub fn mock(&self) -> &Mock {
        self.mock
            .as_ref()
            .expect("the daemon was built without a mock")
    }

    /// The sample repository.
    pub fn repo(&self) -> &Path {
        &self.repo
    }

    pub fn data(&self) -> PathBuf {
        self.tmp.path().join("data")
    }

    /// The worktree of a line.
    pub fn worktree(&self, line: &str) -> PathBuf {
        self.data().join("worktrees").join(line)
    }

    pub fn config_file(&self) -> PathBuf {
        self.tmp.path().join("conveyor.toml")
    }

    /// The id of the sample project (the sample repository, named `p`), made on first use.
    pub async fn project(&self) -> &str {
        self.project
            .get_or_init(|| async {
                self.client
                    .create_project(&NewProject {
                        name: "p".into(),
                        repo_path: self.repo.display().to_string(),
                        main_branch: None,
                    })
                    .await
                    .unwrap()
                    .id
            })
            .await
    }

    /// Another repository beside the sample one, made a project named `name`; its id.
    pub async fn add_project(&self, name: &str, files: &[(&str, &str)]) -> String {
        let repo = self.tmp.path().join(name);
        make_repo(&repo, files);
        self.client
            .create_project(&NewProject {
                name: name.into(),
                repo_path: repo.display().to_string(),
                main_branch: None,
            })
            .await
            .unwrap()
            .id
    }

    /// Queues a line on any project.
    pub async fn line_in(&self, project_id: &str, title: &str, task: &str, priority: i32) -> Line {
        self.client
            .create_line(&NewLine {
                project_id: project_id.into(),
                title: title.into(),
                task: task.into(),
                priority: Some(priority),
                planfix_task: None,
            })
            .await
            .unwrap()
    }

    /// More configuration (TOML) for the next (re)start, laid over the current.
    pub fn set_config(&mut self, toml: &str) {
        merge(&mut self.config, toml.parse().unwrap());
    }

    /// Queues a line on the sample project.
    pub async fn line(&self, title: &str, task: &str) -> Line {
        let project_id = self.project().await.to_string();
        self.client
            .create_line(&NewLine {
                project_id,
                title: title.into(),
                task: task.into(),
                priority: None,
                planfix_task: None,
            })
            .await
            .unwrap()
    }

    /// Stops the daemon in process, stopping its running agents; its folder stays.
    pub async fn stop(&mut self) {
        assert!(
            !matches!(self.server, Server::Binary(_)),
            "the conveyord binary is stopped with kill9()"
        );
        if let Server::InProcess(h) = std::mem::replace(&mut self.server, Server::Stopped) {
            h.stop().await;
        }
    }

    /// SIGKILL to the `conveyord` binary, as `kill -9` does; its agents live on.
    pub fn kill9(&mut self) {
        let Server::Binary(child) = &mut self.server else {
            panic!("only the conveyord binary is killed");
        };
        let _ = child.kill();
        let _ = child.wait();
        self.server = Server::Stopped;
    }

    /// Starts the daemon again on the same folder, the same way (stopping it first if it runs).
    pub async fn restart(&mut self) {
        match self.server {
            Server::InProcess(_) => self.stop().await,
            Server::Binary(_) => self.kill9(),
            Server::Stopped => {}
        }
        std::fs::write(self.config_file(), toml::to_string(&self.config).unwrap()).unwrap();
        let (server, addr) = if self.binary {
            let (child, addr) =
                spawn_conveyord(&self.config_file(), &self.tmp.path().join("conveyord.log"));
            (Server::Binary(child), addr)
        } else {
            let cfg = conveyor::Config::load(&self.config_file()).unwrap();
            let handle = conveyor::start(cfg).await.unwrap();
            let addr = handle.addr.to_string();
            (Server::InProcess(handle), addr)
        };
        self.server = server;
        self.url = format!("http://{addr}");
        self.client = Client::new(&self.url, Some(TOKEN.into()));
    }

    /// The agents' `HOME` (the CLI's config file and `.claude/` are there).
    pub fn agent_home(&self) -> PathBuf {
        PathBuf::from(
            self.config["agent_env"]["HOME"]
                .as_str()
                .expect("an agent HOME"),
        )
    }

    /// From the next (re)start on, the agent's `HOME` is a new empty folder: the CLI's
    /// transcripts of the sessions so far are gone.
    pub fn new_agent_home(&mut self) {
        let home = new_home(self.tmp.path());
        let env = self.config["agent_env"].as_table_mut().unwrap();
        env.insert("HOME".into(), home.display().to_string().into());
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        match &self.server {
            // A test that failed before `stop()`: its agents are stopped all the same.
            Server::InProcess(h) => h.shutdown.cancel(),
            Server::Binary(_) => self.kill9(),
            Server::Stopped => {}
        }
    }
}

impl<'a> DaemonBuilder<'a> {
    /// The sample repository's folder name (default `repo`).
    pub fn repo_name(mut self, name: &'a str) -> Self {
        self.repo_name = name;
        self
    }

    /// The files on the sample repository's `main` (default: `a.txt`).
    pub fn files(mut self, files: &'a [(&'a str, &'a str)]) -> Self {
        self.files = files;
        self
    }

    /// More configuration (TOML), merged over the test's defaults.
    pub fn config(mut self, toml: &'a str) -> Self {
        self.config = toml;
        self
    }

    /// The real CLI against the scripted mock, logged in with an API key.
    pub fn mock(mut self) -> Self {
        self.agent = Agent::Mock { oauth: false };
        self
    }

    /// The real CLI against the scripted mock, logged in with an OAuth token (the CLI then
    /// picks sonnet).
    pub fn mock_oauth(mut self) -> Self {
        self.agent = Agent::Mock { oauth: true };
        self
    }

    /// The real CLI, logged in nowhere: the API base is a closed loopback port.
    pub fn not_logged_in(mut self) -> Self {
        self.agent = Agent::NotLoggedIn;
        self
    }

    /// Another binary than `node_modules/.bin/claude`.
    pub fn claude_bin(mut self, path: &'a Path) -> Self {
        self.claude = Some(path);
        self
    }

    /// No `HOME` in the agent's environment (the daemon then takes the agent user's).
    pub fn no_agent_home(mut self) -> Self {
        self.agent_home = false;
        self
    }

    /// The temp folder open to other users (a temp folder is 0700): for an agent that runs
    /// as another user and must reach the data folder and the repository.
    pub fn open_to_others(mut self) -> Self {
        self.open_to_others = true;
        self
    }

    /// Starts the daemon in this process.
    pub async fn start(self) -> Daemon {
        let mut d = self.build();
        d.restart().await;
        d
    }

    /// Starts the `conveyord` binary (`serve --config`; its log in `conveyord.log`).
    pub async fn spawn(self) -> Daemon {
        let mut d = self.build();
        d.binary = true;
        d.restart().await;
        d
    }

    fn build(self) -> Daemon {
        let tmp = tempfile::tempdir().unwrap();
        if self.open_to_others {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let repo = tmp.path().join(self.repo_name);
        make_repo(&repo, self.files);
        let mock = matches!(self.agent, Agent::Mock { .. }).then(Mock::start);
        let home = new_home(tmp.path());
        let mut env = match (&self.agent, &mock) {
            (Agent::Mock { oauth }, Some(mock)) => Some(agent_env(&mock.url(), &home, *oauth)),
            (Agent::NotLoggedIn, _) => Some(offline_env(&closed_port_url(), &home)),
            _ => None,
        };
        if !self.agent_home
            && let Some(env) = &mut env
        {
            env.remove("HOME");
        }
        let claude = match (self.claude, &self.agent) {
            (Some(c), _) => c.to_path_buf(),
            (None, Agent::Missing) => PathBuf::from("/nonexistent/claude"),
            (None, _) => claude_bin(),
        };
        let mut config = config(&tmp.path().join("data"), &claude, env);
        merge(&mut config, self.config.parse().unwrap());
        Daemon {
            tmp,
            repo,
            config,
            mock,
            binary: false,
            server: Server::Stopped,
            url: String::new(),
            client: Client::new("http://127.0.0.1:1", None),
            project: tokio::sync::OnceCell::new(),
        }
    }
}

/// A new, empty folder in `tmp` for the agent's `HOME`.
fn new_home(tmp: &Path) -> PathBuf {
    tempfile::Builder::new()
        .prefix("home")
        .tempdir_in(tmp)
        .unwrap()
        .keep()
}

/// Runs `conveyord serve --config <config>`, appending its log to `log`; returns it and the
/// address it listens on.
fn spawn_conveyord(config: &Path, log: &Path) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_conveyord"))
        .args(["serve", "--config"])
        .arg(config)
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let log = log.to_path_buf();
    std::thread::spawn(move || {
        let mut out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .unwrap();
        let mut sent = false;
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = writeln!(out, "{line}");
            if !sent && let Some(i) = line.find("addr=") {
                let addr: String = line[i + 5..]
                    .chars()
                    .take_while(|c| !c.is_whitespace())
                    .collect();
                let _ = tx.send(addr);
                sent = true;
            }
        }
    });
    let Ok(addr) = rx.recv_timeout(Duration::from_secs(30)) else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("conveyord did not start listening");
    };
    (child, addr)
}

/// The environment the CLI needs to talk to `api` only, with no login (notes/claude-cli.md).
fn offline_env(api: &str, home: &Path) -> toml::Table {
    let mut t = toml::Table::new();
    let mut set = |k: &str, v: String| {
        t.insert(k.into(), toml::Value::String(v));
    };
    set("HOME", home.display().to_string());
    set("ANTHROPIC_BASE_URL", api.into());
    for k in [
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        "DISABLE_AUTOUPDATER",
        "DISABLE_TELEMETRY",
        "DISABLE_ERROR_REPORTING",
    ] {
        set(k, "1".into());
    }
    set("CLAUDE_CODE_MAX_RETRIES", "0".into());
    t
}

/// [`offline_env`] logged in to the mock with an API key or an OAuth token.
fn agent_env(mock: &str, home: &Path, oauth: bool) -> toml::Table {
    let mut t = offline_env(mock, home);
    let (k, v) = if oauth {
        ("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-test")
    } else {
        ("ANTHROPIC_API_KEY", "sk-test")
    };
    t.insert(k.into(), v.into());
    t
}

/// The environment of a `claude` the test runs itself against the mock (its `HOME` in
/// `home`), as the daemon's agents get it: logged in with an API key, nothing else reached.
pub fn cli_env(mock: &str, home: &Path) -> Vec<(String, String)> {
    agent_env(mock, home, false)
        .into_iter()
        .filter_map(|(k, v)| Some((k, v.as_str()?.to_string())))
        .collect()
}

/// A loopback URL that nothing listens on (the port bound, then released).
pub fn closed_port_url() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("http://127.0.0.1:{port}")
}

/// The test defaults of a daemon's configuration.
fn config(data: &Path, claude: &Path, env: Option<toml::Table>) -> toml::Table {
    let mut t = toml::Table::new();
    t.insert("listen".into(), "127.0.0.1:0".into());
    t.insert("data_dir".into(), data.display().to_string().into());
    t.insert("token".into(), TOKEN.into());
    t.insert("claude_bin".into(), claude.display().to_string().into());
    t.insert("tick_ms".into(), 100.into());
    t.insert("agent_env_inherit".into(), false.into());
    t.insert("step_timeout_secs".into(), 300.into());
    t.insert("git_name".into(), "conveyor-test".into());
    // The judge's hooks run the daemon's binary; in process the daemon is the test binary.
    t.insert(
        "hook_bin".into(),
        env!("CARGO_BIN_EXE_conveyord").to_string().into(),
    );
    if let Some(env) = env {
        t.insert("agent_env".into(), toml::Value::Table(env));
    }
    t
}

/// `over` laid over `base`, table by table.
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

pub fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("LC_ALL", "C")
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A repository with a `main` branch holding `files`.
fn make_repo(dir: &Path, files: &[(&str, &str)]) {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.name", "Anton"]);
    git(dir, &["config", "user.email", "anton@example.invalid"]);
    for (p, c) in files {
        let f = dir.join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, c).unwrap();
    }
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "init"]);
}

/// Polls `f` until it returns `Some`, failing after `secs`.
pub async fn wait_for<T, F, Fut>(secs: u64, what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until the line reaches `state` (fails early on a dead end, with its reason; on a
/// timeout, with where the line stood last).
pub async fn wait_state(
    c: &conveyor_api::Client,
    id: &str,
    state: conveyor_api::LineState,
    secs: u64,
) -> conveyor_api::LineDetail {
    use conveyor_api::LineState as S;
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut last = None;
    loop {
        if let Ok(l) = c.line(id).await {
            if l.line.state == state {
                return l;
            }
            // A dead end fails at once; a line the closed vault holds is only waiting.
            let waits = l.line.reason_code == Some(conveyor_api::ReasonCode::VaultClosed);
            if !matches!(state, S::NeedsHuman | S::Blocked)
                && matches!(l.line.state, S::NeedsHuman | S::Blocked)
                && !waits
            {
                panic!(
                    "line stopped in {:?}: {:?}\nsteps: {:#?}",
                    l.line.state, l.line.reason, l.line.steps
                );
            }
            last = Some(l);
        }
        if Instant::now() >= deadline {
            let seen = last.map_or("nothing (the daemon never answered)".to_string(), |l| {
                format!(
                    "{:?} ({:?}: {:?}), steps {:#?}",
                    l.line.state,
                    l.line.reason_code,
                    l.line.reason,
                    l.line
                        .steps
                        .iter()
                        .map(|s| (s.n, s.kind, s.state, s.attempts, s.error.clone()))
                        .collect::<Vec<_>>()
                )
            });
            panic!(
                "timed out waiting for line {id} to be {}; last seen: {seen}",
                state.as_str()
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A turn that runs a shell command through the real Bash tool.
pub fn bash(cmd: &str) -> Value {
    json!({"tool": "Bash", "input": {"command": cmd, "description": "scripted by the test"}})
}

/// A turn that writes a file through the real Write tool.
pub fn write(rel: &str, content: &str) -> Value {
    json!({"tool": "Write", "input": {"file_path": format!("{{{{cwd}}}}/{rel}"), "content": content}})
}

pub fn text(t: &str) -> Value {
    json!({"text": t})
}

/// A planner turn writing `plan` to `$CONVEYOR_PLAN` through Bash.
pub fn write_plan(plan: &Value) -> Value {
    bash(&format!(
        "cat > \"$CONVEYOR_PLAN\" <<'PLAN'\n{}\nPLAN",
        serde_json::to_string_pretty(plan).unwrap()
    ))
}

/// Cost of one mocked request at the default model's prices (opus: $0.0156; with an OAuth
/// token the CLI picks sonnet: $0.0078).
pub const OPUS_REQUEST_USD: f64 = 0.0156;
pub const SONNET_REQUEST_USD: f64 = 0.0078;

/// A judge's turn writing its verdict: `calls` are `(a fragment of the entry's text, verdict,
/// a fragment of the text of the question it duplicates)`; fragments are plain words (they go
/// into a regular expression). The ids are the daemon's, read from the judge's prompt by the
/// mock (`{{prompt:…}}`), as is the verdict file's path. The patterns hold no backslash: they
/// travel inside the JSON text of the file's content.
pub fn judge_verdict(calls: &[(&str, &str, Option<&str>)]) -> Value {
    judge_verdict_with(calls, None)
}

/// [`judge_verdict`] whose verdict also raises the line's level to `level`.
pub fn judge_verdict_with(calls: &[(&str, &str, Option<&str>)], level: Option<&str>) -> Value {
    let entry = |text: &str| format!("id: ([0-9a-f-]+)[^a-z]+kind: [a-z]+[^a-z]+text: .*?{text}");
    let entries: Vec<Value> = calls
        .iter()
        .map(|(text, verdict, dup)| {
            let mut e = json!({
                "id": format!("{{{{prompt:{}}}}}", entry(text)),
                "verdict": verdict,
                "why": format!("scripted: {verdict}"),
            });
            if let Some(d) = dup {
                // An open question (`- <id>: <text>`) or another entry of this verdict.
                e["duplicate_of"] =
                    format!("{{{{prompt:- ([0-9a-f-]+): .*?{d}|{}}}}}", entry(d)).into();
            }
            e
        })
        .collect();
    let mut verdict = json!({"entries": entries});
    if let Some(level) = level {
        verdict["level"] = level.into();
    }
    json!({"tool": "Write", "input": {
        "file_path": "{{prompt:verdict with the Write tool to ([^ ]+) }}",
        "content": verdict.to_string(),
    }})
}
