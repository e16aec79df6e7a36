//! Shared pieces of the integration tests: the scripted Anthropic mock (a real Node server),
//! the real `claude` binary from `node_modules`, real git repositories, polling with deadlines.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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

/// The mock Anthropic API (`tests/fixtures/mock-anthropic.mjs`) on a free loopback port.
pub struct Mock {
    child: Child,
    pub port: u16,
    http: reqwest::Client,
}

impl Mock {
    pub fn start() -> Mock {
        let mut child = Command::new("node")
            .arg(repo_root().join("tests/fixtures/mock-anthropic.mjs"))
            .args(["--port", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("node runs the mock");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .strip_prefix("LISTENING ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("mock did not start: {line:?}"));
        Mock {
            child,
            port,
            http: reqwest::Client::new(),
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Scripts the replies of one session: `{"1": [turn..], "2.1": [..]}`.
    pub async fn script(&self, session: &str, steps: Value) {
        let r = self
            .http
            .post(format!("{}/_mock/script", self.url()))
            .json(&json!({"session": session, "steps": steps}))
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success());
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

/// The environment the CLI needs to talk to the mock only (notes/claude-cli.md).
pub fn agent_env(mock: &Mock, home: &Path, oauth: bool) -> toml::Table {
    let mut t = toml::Table::new();
    let mut set = |k: &str, v: String| {
        t.insert(k.into(), toml::Value::String(v));
    };
    set("HOME", home.display().to_string());
    set("ANTHROPIC_BASE_URL", mock.url());
    if oauth {
        set("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-test".into());
    } else {
        set("ANTHROPIC_API_KEY", "sk-test".into());
    }
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

/// A daemon config (TOML text) for a test.
pub fn config_toml(data: &Path, claude: &Path, env: Option<toml::Table>, extra: &str) -> String {
    let mut t = toml::Table::new();
    t.insert("listen".into(), "127.0.0.1:0".into());
    t.insert("data_dir".into(), data.display().to_string().into());
    t.insert("token".into(), TOKEN.into());
    t.insert("claude_bin".into(), claude.display().to_string().into());
    t.insert("tick_ms".into(), 100.into());
    t.insert("agent_env_inherit".into(), false.into());
    t.insert("step_timeout_secs".into(), 300.into());
    t.insert("git_name".into(), "conveyor-test".into());
    if let Some(env) = env {
        t.insert("agent_env".into(), toml::Value::Table(env));
    }
    format!("{}\n{extra}\n", toml::to_string(&t).unwrap())
}

pub fn config(
    data: &Path,
    claude: &Path,
    env: Option<toml::Table>,
    extra: &str,
) -> conveyor::Config {
    let text = config_toml(data, claude, env, extra);
    let p = data.with_extension("toml");
    std::fs::write(&p, text).unwrap();
    conveyor::Config::load(&p).unwrap()
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
pub fn make_repo(dir: &Path, files: &[(&str, &str)]) {
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

/// Waits until the line reaches `state` (fails early on a dead end, with its reason).
pub async fn wait_state(
    c: &conveyor_api::Client,
    id: &str,
    state: conveyor_api::LineState,
    secs: u64,
) -> conveyor_api::LineDetail {
    use conveyor_api::LineState as S;
    wait_for(
        secs,
        &format!("line {id} to be {}", state.as_str()),
        || async {
            let l = c.line(id).await.ok()?;
            if l.line.state == state {
                return Some(l);
            }
            if state != S::NeedsHuman && matches!(l.line.state, S::NeedsHuman | S::Blocked) {
                panic!(
                    "line stopped in {:?}: {:?}\nsteps: {:#?}",
                    l.line.state, l.line.reason, l.line.steps
                );
            }
            None
        },
    )
    .await
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
