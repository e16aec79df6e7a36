//! `--check`: is everything in place for a run? The config is valid, node runs, the bridge
//! file exists, and the transport answers: for the bridge, its browser's debugging port
//! answers `/json/version` and lists a chat tab in `/json/list`; for an HTTP endpoint,
//! `GET {base_url}/models` answers.

use std::process::Command;
use std::time::Duration;

use serde::Serialize;

use crate::config::{BridgeConfig, Config, OpenAiConfig, TransportConfig};
use crate::exec::{self, Cancel, Ended};

/// Whether a failed item is ours to fix locally or the transport's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum CheckKind {
    /// Configuration and local files (exit code 2 when failing).
    Local,
    /// The transport's far side (exit code 3 when failing).
    Transport,
}

/// One checked thing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CheckItem {
    /// What was checked.
    pub name: String,
    /// Whether it is fine.
    pub ok: bool,
    /// What was found, or what to fix.
    pub detail: String,
    /// Local or transport.
    pub kind: CheckKind,
}

/// All checked things in order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CheckReport {
    /// The items.
    pub items: Vec<CheckItem>,
}

impl CheckReport {
    fn push(&mut self, name: &str, kind: CheckKind, result: Result<String, String>) {
        let (ok, detail) = match result {
            Ok(d) => (true, d),
            Err(d) => (false, d),
        };
        self.items.push(CheckItem {
            name: name.to_owned(),
            ok,
            detail,
            kind,
        });
    }

    /// The first failing kind, local failures first.
    pub fn failure(&self) -> Option<CheckKind> {
        let failed = |k| self.items.iter().any(|i| !i.ok && i.kind == k);
        if failed(CheckKind::Local) {
            Some(CheckKind::Local)
        } else if failed(CheckKind::Transport) {
            Some(CheckKind::Transport)
        } else {
            None
        }
    }
}

/// Checks a loaded configuration.
pub fn check(config: &Config) -> CheckReport {
    let mut r = CheckReport::default();
    let source = match &config.source {
        Some(p) => format!("{} is valid", p.display()),
        None => "no config file; defaults in use".to_owned(),
    };
    r.push("config", CheckKind::Local, Ok(source));
    match &config.transport {
        TransportConfig::Bridge(b) => check_bridge(b, &mut r),
        TransportConfig::OpenAi(o) => check_openai(o, &mut r),
    }
    r
}

fn check_bridge(b: &BridgeConfig, r: &mut CheckReport) {
    r.push("node", CheckKind::Local, node_version(b));
    let bridge = if b.bridge.is_file() {
        Ok(b.bridge.display().to_string())
    } else {
        Err(format!(
            "not found: {} (set \"bridge\" in config.json or pass --bridge)",
            b.bridge.display()
        ))
    };
    r.push("bridge", CheckKind::Local, bridge);
    let base = format!("http://127.0.0.1:{}", b.debug_port);
    let agent = agent();
    let version = get_json(&agent, &format!("{base}/json/version")).map(|v| {
        let browser = v
            .get("Browser")
            .and_then(|b| b.as_str())
            .unwrap_or("unknown browser");
        format!("{browser} on port {}", b.debug_port)
    });
    let version_ok = version.is_ok();
    r.push(
        "browser",
        CheckKind::Transport,
        version.map_err(|e| {
            format!(
                "{e} (start the browser with its debugging port {})",
                b.debug_port
            )
        }),
    );
    if version_ok {
        let tab = get_json(&agent, &format!("{base}/json/list")).and_then(|v| {
            let tabs = v.as_array().cloned().unwrap_or_default();
            tabs.iter()
                .find(|t| {
                    t.get("type").and_then(|x| x.as_str()) == Some("page")
                        && t.get("url")
                            .and_then(|x| x.as_str())
                            .is_some_and(|u| u.contains(&b.chat_url))
                })
                .map(|t| {
                    t.get("url")
                        .and_then(|x| x.as_str())
                        .unwrap_or_default()
                        .to_owned()
                })
                .ok_or_else(|| {
                    format!(
                        "no tab with {} among {} tabs: open the chat in the browser",
                        b.chat_url,
                        tabs.len()
                    )
                })
        });
        r.push("chat tab", CheckKind::Transport, tab);
    }
}

fn check_openai(o: &OpenAiConfig, r: &mut CheckReport) {
    if let Some(var) = &o.api_key_env {
        let key = match std::env::var(var) {
            Ok(v) if !v.is_empty() => Ok(format!("${var} is set")),
            _ => Err(format!("${var} is not set (api_key_env names it)")),
        };
        r.push("api key", CheckKind::Local, key);
    }
    let url = format!("{}/models", o.base_url);
    let agent = agent();
    let mut req = agent.get(&url);
    if let Some(key) = o.api_key_env.as_ref().and_then(|v| std::env::var(v).ok()) {
        req = req.header("Authorization", format!("Bearer {key}"));
    }
    let res = match req.call() {
        Ok(resp) if resp.status().is_success() => Ok(format!("{url} answers")),
        Ok(resp) => Err(format!("{url} answered {}", resp.status())),
        Err(e) => Err(format!("cannot reach {url}: {e}")),
    };
    r.push("endpoint", CheckKind::Transport, res);
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(5)))
        .http_status_as_error(false)
        .build()
        .into()
}

fn get_json(agent: &ureq::Agent, url: &str) -> Result<serde_json::Value, String> {
    let resp = agent
        .get(url)
        .call()
        .map_err(|e| format!("cannot reach {url}: {e}"))?;
    if !resp.status().is_success() {
        return Err(format!("{url} answered {}", resp.status()));
    }
    resp.into_body()
        .read_json()
        .map_err(|e| format!("{url} answered something that is not JSON: {e}"))
}

fn node_version(b: &BridgeConfig) -> Result<String, String> {
    let mut cmd = Command::new(&b.node);
    cmd.arg("--version");
    let f = exec::run(cmd, Duration::from_secs(20), &Cancel::new()).map_err(|e| {
        format!(
            "cannot run {}: {e} (install Node.js or set \"node\")",
            b.node.display()
        )
    })?;
    match f.ended {
        Ended::Exited(s) if s.success() => {
            Ok(format!("{} {}", b.node.display(), f.stdout_head.trim()))
        }
        _ => Err(format!(
            "{} --version failed: {}",
            b.node.display(),
            f.stderr_tail
        )),
    }
}
