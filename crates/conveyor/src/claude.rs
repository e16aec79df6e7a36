//! One headless Claude Code run: `claude -p <prompt> --output-format stream-json --verbose`,
//! `--session-id` on a session's first run and `--resume` after. The output is streamed to a
//! log file and parsed as it comes: `system/init` (the session now exists), `rate_limit_event`
//! (recorded), and the LAST `result` (cost, error, session). `notes/claude-cli.md` has the
//! observed contract of CLI 2.1.332 that this follows.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;

use crate::exec::{self, Spec};

/// What to run.
#[derive(Debug, Clone)]
pub struct Invocation {
    pub claude_bin: PathBuf,
    pub cwd: PathBuf,
    pub prompt: String,
    pub session_id: String,
    /// `--resume` instead of `--session-id`.
    pub resume: bool,
    pub settings: PathBuf,
    pub permission_mode: String,
    pub allowed_tools: Vec<String>,
    /// `--tools`: the built-in tools the run has (all when `None`).
    pub tools: Option<String>,
    /// `--agent`: the session's main thread runs as this agent (a checking role's own).
    pub agent: Option<String>,
    /// `--agents`: JSON defining agents for this run (the project's, read from fresh main).
    pub agents: Option<String>,
    /// `--add-dir` (the line's folder, for the non-bypass modes).
    pub add_dir: Option<PathBuf>,
    pub model: Option<String>,
    pub env: BTreeMap<String, String>,
    pub user: Option<(u32, u32)>,
    /// Inherit the daemon's environment (else only `PATH` and `env`).
    pub inherit_env: bool,
    /// `--max-budget-usd`: the run stops (`error_max_budget_usd`) once it has cost this much.
    /// The CLI counts the run's own cost, not the resumed session's cumulative total.
    pub max_budget_usd: Option<f64>,
    /// Where the raw stream-json goes.
    pub log: PathBuf,
    pub timeout: Duration,
}

impl Invocation {
    fn spec(&self) -> Spec {
        let mut s = Spec::new(&self.claude_bin, &self.cwd).args([
            "-p".to_string(),
            self.prompt.clone(),
            if self.resume {
                "--resume"
            } else {
                "--session-id"
            }
            .to_string(),
            self.session_id.clone(),
            "--output-format".into(),
            "stream-json".into(),
            "--verbose".into(),
            "--settings".into(),
            self.settings.to_string_lossy().into_owned(),
            "--permission-mode".into(),
            self.permission_mode.clone(),
        ]);
        if !self.allowed_tools.is_empty() {
            s = s.args(["--allowedTools".to_string(), self.allowed_tools.join(",")]);
        }
        if let Some(t) = &self.tools {
            s = s.args(["--tools".to_string(), t.clone()]);
        }
        if let Some(a) = &self.agents {
            s = s.args(["--agents".to_string(), a.clone()]);
        }
        if let Some(a) = &self.agent {
            s = s.args(["--agent".to_string(), a.clone()]);
        }
        if let Some(d) = &self.add_dir {
            s = s.args(["--add-dir".to_string(), d.to_string_lossy().into_owned()]);
        }
        if let Some(m) = &self.model {
            s = s.args(["--model".to_string(), m.clone()]);
        }
        if let Some(usd) = self.max_budget_usd {
            s = s.args(["--max-budget-usd".to_string(), format!("{usd:.4}")]);
        }
        s.env = self.env.clone();
        s.user = self.user;
        s.clear_env = !self.inherit_env;
        s
    }
}

/// `rate_limit_event.rate_limit_info`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct RateLimitInfo {
    pub status: String,
    #[serde(rename = "resetsAt", default)]
    pub resets_at: Option<i64>,
    #[serde(rename = "rateLimitType", default)]
    pub rate_limit_type: Option<String>,
    #[serde(rename = "unifiedWindows", default)]
    pub unified_windows: Option<serde_json::Value>,
    #[serde(skip)]
    pub raw: String,
}

impl RateLimitInfo {
    /// The server's own utilisation of the limiting window, when given.
    pub fn utilization(&self) -> Option<f64> {
        let w = self.unified_windows.as_ref()?;
        let key = self.rate_limit_type.as_deref().unwrap_or("five_hour");
        w.get(key)?.get("utilization")?.as_f64()
    }
}

/// Token usage of the result.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
pub struct Usage {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_read_input_tokens: u64,
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
}

/// Per-model usage (`modelUsage`, `model_usage_since_last_result`).
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
pub struct ModelUsage {
    #[serde(rename = "inputTokens", default)]
    pub input_tokens: u64,
    #[serde(rename = "outputTokens", default)]
    pub output_tokens: u64,
    #[serde(rename = "cacheReadInputTokens", default)]
    pub cache_read_input_tokens: u64,
    #[serde(rename = "cacheCreationInputTokens", default)]
    pub cache_creation_input_tokens: u64,
    #[serde(rename = "costUSD", default)]
    pub cost_usd: f64,
}

/// The `{"type":"result"}` object.
#[derive(Debug, Clone, Deserialize, PartialEq, Default)]
pub struct ResultEvent {
    #[serde(default)]
    pub is_error: bool,
    #[serde(default)]
    pub subtype: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub total_cost_usd: f64,
    #[serde(default)]
    pub usage: Usage,
    #[serde(default)]
    pub model_usage_since_last_result: Option<BTreeMap<String, ModelUsage>>,
    #[serde(rename = "modelUsage", default)]
    pub model_usage: Option<BTreeMap<String, ModelUsage>>,
    #[serde(default)]
    pub result: Option<String>,
    #[serde(default)]
    pub api_error_status: Option<i64>,
    #[serde(default)]
    pub api_error: Option<String>,
    #[serde(default)]
    pub terminal_reason: Option<String>,
    #[serde(default)]
    pub num_turns: Option<i64>,
    #[serde(default)]
    pub duration_ms: Option<i64>,
    #[serde(default)]
    pub permission_denials: Option<serde_json::Value>,
    #[serde(default)]
    pub errors: Option<Vec<String>>,
}

/// A run with a background subagent emits more than one result: the last one stands (its
/// `total_cost_usd` is cumulative), but its `permission_denials` and
/// `model_usage_since_last_result` cover only its own part of the run, so the earlier ones'
/// are kept with it (denials each once, by `tool_use_id`; usage summed per model).
fn later_result(earlier: Option<ResultEvent>, mut last: ResultEvent) -> ResultEvent {
    let Some(earlier) = earlier else {
        return last;
    };
    if let Some(before) = earlier.model_usage_since_last_result {
        let now = last
            .model_usage_since_last_result
            .get_or_insert_with(Default::default);
        for (model, u) in before {
            let sum = now.entry(model).or_default();
            sum.input_tokens += u.input_tokens;
            sum.output_tokens += u.output_tokens;
            sum.cache_read_input_tokens += u.cache_read_input_tokens;
            sum.cache_creation_input_tokens += u.cache_creation_input_tokens;
            sum.cost_usd += u.cost_usd;
        }
    }
    let mut all: Vec<serde_json::Value> = earlier
        .permission_denials
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default();
    for d in last
        .permission_denials
        .as_ref()
        .and_then(|v| v.as_array())
        .into_iter()
        .flatten()
    {
        let id = &d["tool_use_id"];
        if id.is_null() || !all.iter().any(|x| x["tool_use_id"] == *id) {
            all.push(d.clone());
        }
    }
    last.permission_denials = Some(serde_json::Value::Array(all));
    last
}

impl ResultEvent {
    /// This run's own tokens: `model_usage_since_last_result` summed over models, else
    /// `usage` (which covers only the last turn).
    pub fn run_tokens(&self) -> Usage {
        match &self.model_usage_since_last_result {
            Some(m) if !m.is_empty() => m.values().fold(Usage::default(), |mut u, m| {
                u.input_tokens += m.input_tokens;
                u.output_tokens += m.output_tokens;
                u.cache_read_input_tokens += m.cache_read_input_tokens;
                u.cache_creation_input_tokens += m.cache_creation_input_tokens;
                u
            }),
            _ => self.usage.clone(),
        }
    }

    /// This run's own cost as `model_usage_since_last_result` gives it (a cross-check).
    pub fn run_cost_reported(&self) -> Option<f64> {
        self.model_usage_since_last_result
            .as_ref()
            .map(|m| m.values().map(|u| u.cost_usd).sum())
    }
}

/// Everything a run left behind.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub pid: Option<u32>,
    pub exit_code: Option<i32>,
    /// The session existed at some point of this run (`system/init` seen).
    pub init_seen: bool,
    pub result: Option<ResultEvent>,
    pub rate_limits: Vec<RateLimitInfo>,
    pub stderr: String,
    pub timed_out: bool,
    pub cancelled: bool,
    /// The binary could not be started.
    pub spawn_error: Option<String>,
    pub duration_ms: i64,
}

/// What the daemon makes of a run.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// `is_error:false`: the checks decide the rest.
    Finished,
    /// A usage limit: park until `resets_at` (unix seconds) or, without one, the configured
    /// wait; roll back; resume the same session later.
    UsageLimit {
        resets_at: Option<i64>,
        message: String,
    },
    /// The run reached its `--max-budget-usd` cap (`error_max_budget_usd`): a miss of the
    /// estimate; roll back and try again with the raised estimate.
    BudgetCap { message: String },
    /// `--session-id` of a session that already exists: retry with `--resume`.
    SessionInUse,
    /// `--resume` of a session the CLI does not know ("No conversation found").
    NoConversation { reason: String },
    /// The line cannot go on without Anton (not logged in, unknown session, no binary).
    Fatal { reason: String },
    /// The run failed; the step may be attempted again.
    Failed { reason: String },
    /// Stopped by the daemon's shutdown.
    Interrupted,
}

impl Report {
    /// Classifies the run.
    pub fn verdict(&self) -> Verdict {
        if let Some(e) = &self.spawn_error {
            return Verdict::Fatal {
                reason: format!("the claude binary cannot be started: {e}"),
            };
        }
        if self.cancelled {
            return Verdict::Interrupted;
        }
        let stderr = self.stderr.trim();
        if let Some(r) = &self.result {
            let text = r.result.clone().unwrap_or_default();
            if !r.is_error {
                return Verdict::Finished;
            }
            let rejected = self
                .rate_limits
                .iter()
                .rev()
                .find(|l| l.status == "rejected");
            if r.api_error.as_deref() == Some("usage_limit_reached")
                || r.api_error_status == Some(429)
                || rejected.is_some()
            {
                return Verdict::UsageLimit {
                    resets_at: rejected.and_then(|l| l.resets_at),
                    message: text,
                };
            }
            if r.subtype.as_deref() == Some("error_max_budget_usd")
                || r.terminal_reason.as_deref() == Some("budget_exhausted")
            {
                let detail = r.errors.clone().unwrap_or_default().join("; ");
                return Verdict::BudgetCap {
                    message: if detail.is_empty() { text } else { detail },
                };
            }
            if text.contains("Not logged in") {
                return Verdict::Fatal {
                    reason: format!("claude is not logged in: {text}"),
                };
            }
            if stderr.contains("No conversation found") {
                return no_conversation(stderr);
            }
            let detail = if text.is_empty() {
                r.errors.clone().unwrap_or_default().join("; ")
            } else {
                text
            };
            return Verdict::Failed {
                reason: format!(
                    "claude reported an error ({}): {}",
                    r.terminal_reason.as_deref().unwrap_or("error"),
                    exec::tail(&detail, 1000)
                ),
            };
        }
        if stderr.contains("is already in use") {
            return Verdict::SessionInUse;
        }
        if stderr.contains("No conversation found") {
            return no_conversation(stderr);
        }
        if self.timed_out {
            return Verdict::Failed {
                reason: "the run timed out".into(),
            };
        }
        Verdict::Failed {
            reason: format!(
                "claude exited {} without a result: {}",
                self.exit_code
                    .map_or("by a signal".into(), |c| c.to_string()),
                exec::tail(stderr, 1000)
            ),
        }
    }
}

fn no_conversation(stderr: &str) -> Verdict {
    Verdict::NoConversation {
        reason: format!(
            "the line's session is gone, a new one would lose its context: {}",
            exec::tail(stderr, 300)
        ),
    }
}

/// What a run reports while it goes.
#[derive(Debug, Clone)]
pub enum Signal {
    /// The process exists, with this pid (recorded before anything else happens).
    Started(u32),
    /// `system/init`: the session exists (sent once).
    Init,
    /// A `rate_limit_event`.
    RateLimit(RateLimitInfo),
    /// The run's usage grew (an `assistant` event): its tokens so far, per model.
    Usage(std::collections::BTreeMap<String, crate::budget::Tokens>),
}

/// A boxed future for [`Signal`] handlers.
pub type SignalFuture = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// Runs the CLI to its end, telling `on` what happens as it happens.
pub async fn run(
    inv: &Invocation,
    cancel: &CancellationToken,
    on: &(dyn Fn(Signal) -> SignalFuture + Send + Sync),
) -> Report {
    let started = std::time::Instant::now();
    let mut report = Report::default();
    let mut child = match inv.spec().spawn() {
        Ok(c) => c,
        Err(e) => {
            report.spawn_error = Some(e.to_string());
            return report;
        }
    };
    let pid = child.id();
    report.pid = pid;
    if let Some(pid) = pid {
        on(Signal::Started(pid)).await;
    }
    let stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let err_task = tokio::spawn(async move {
        let mut b = Vec::new();
        let _ = stderr.read_to_end(&mut b).await;
        String::from_utf8_lossy(&b).into_owned()
    });
    let mut log = tokio::fs::File::create(&inv.log).await.ok();
    let mut lines = BufReader::new(stdout).lines();
    let mut meter = crate::budget::Meter::default();
    let deadline = tokio::time::sleep(inv.timeout);
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            line = lines.next_line() => {
                let Ok(Some(line)) = line else { break };
                if let Some(f) = log.as_mut() {
                    let _ = f.write_all(line.as_bytes()).await;
                    let _ = f.write_all(b"\n").await;
                }
                let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else { continue };
                if meter.feed(&v) {
                    on(Signal::Usage(meter.tokens())).await;
                }
                match v.get("type").and_then(|t| t.as_str()) {
                    Some("system")
                        if v.get("subtype").and_then(|s| s.as_str()) == Some("init")
                            && !report.init_seen =>
                    {
                        report.init_seen = true;
                        on(Signal::Init).await;
                    }
                    Some("rate_limit_event") => {
                        if let Some(info) = v.get("rate_limit_info")
                            && let Ok(mut info) = serde_json::from_value::<RateLimitInfo>(info.clone())
                        {
                            info.raw = line.clone();
                            on(Signal::RateLimit(info.clone())).await;
                            report.rate_limits.push(info);
                        }
                    }
                    Some("result") => {
                        if let Ok(r) = serde_json::from_value::<ResultEvent>(v) {
                            report.result = Some(later_result(report.result.take(), r));
                        }
                    }
                    _ => {}
                }
            }
            () = &mut deadline => {
                report.timed_out = true;
                break;
            }
            () = cancel.cancelled() => {
                report.cancelled = true;
                break;
            }
        }
    }
    if report.timed_out || report.cancelled {
        exec::kill_group(pid);
    }
    let status = child.wait().await.ok();
    // Helpers the agent left behind in its group go too.
    exec::kill_group(pid);
    report.exit_code = status.and_then(|s| s.code());
    report.stderr = err_task.await.unwrap_or_default();
    if let Some(f) = log.as_mut() {
        let _ = f.flush().await;
    }
    report.duration_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIX: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/claude-cli"
    );

    fn result_of(file: &str) -> ResultEvent {
        let text = std::fs::read_to_string(format!("{FIX}/{file}")).unwrap();
        let line = text
            .lines()
            .rfind(|l| l.contains("\"type\":\"result\""))
            .unwrap()
            .to_string();
        serde_json::from_str(&line).unwrap()
    }

    fn limits_of(file: &str) -> Vec<RateLimitInfo> {
        std::fs::read_to_string(format!("{FIX}/{file}"))
            .unwrap()
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| v["type"] == "rate_limit_event")
            .map(|v| serde_json::from_value(v["rate_limit_info"].clone()).unwrap())
            .collect()
    }

    #[test]
    fn a_usage_limit_mid_step_parks_until_the_events_reset() {
        let r = Report {
            result: Some(result_of("usage-limit-midstep.stream.ndjson")),
            rate_limits: limits_of("usage-limit-midstep.stream.ndjson"),
            init_seen: true,
            ..Report::default()
        };
        assert_eq!(
            r.verdict(),
            Verdict::UsageLimit {
                resets_at: Some(1795985871),
                message: "You've hit your 5-hour limit · resets 8:57pm (UTC)".into()
            }
        );
        // The work before the limit is still paid for.
        assert!((r.result.unwrap().total_cost_usd - 0.0078).abs() < 1e-9);
    }

    #[test]
    fn an_api_key_429_is_a_limit_without_reset() {
        let r = Report {
            result: Some(result_of("429-apikey.json")),
            ..Report::default()
        };
        assert!(matches!(
            r.verdict(),
            Verdict::UsageLimit {
                resets_at: None,
                ..
            }
        ));
    }

    #[test]
    fn the_max_budget_cap_is_a_miss_not_a_failure() {
        let report = Report {
            result: Some(result_of("error-max-budget.json")),
            ..Report::default()
        };
        assert_eq!(
            report.verdict(),
            Verdict::BudgetCap {
                message: "Reached maximum budget ($0.001)".into()
            }
        );
    }

    #[test]
    fn the_cap_is_passed_to_the_cli() {
        let inv = Invocation {
            agent: None,
            agents: None,
            claude_bin: "claude".into(),
            cwd: "/tmp".into(),
            prompt: "p".into(),
            session_id: "s".into(),
            resume: true,
            settings: "/tmp/s.json".into(),
            permission_mode: "bypassPermissions".into(),
            allowed_tools: Vec::new(),
            tools: None,
            add_dir: None,
            model: None,
            env: BTreeMap::new(),
            user: None,
            inherit_env: true,
            max_budget_usd: Some(1.5),
            log: "/tmp/log".into(),
            timeout: Duration::from_secs(1),
        };
        let args = inv.spec().args;
        let at = args.iter().position(|a| a == "--max-budget-usd").unwrap();
        assert_eq!(args[at + 1], "1.5000");
        let none = Invocation {
            max_budget_usd: None,
            ..inv
        };
        assert!(!none.spec().args.iter().any(|a| a == "--max-budget-usd"));
    }

    #[test]
    fn not_logged_in_stops_the_line() {
        let text = std::fs::read_to_string(format!("{FIX}/not-logged-in.txt")).unwrap();
        let line = text.lines().find(|l| l.starts_with("{\"duration")).unwrap();
        let r = Report {
            result: Some(serde_json::from_str(line).unwrap()),
            ..Report::default()
        };
        assert!(
            matches!(r.verdict(), Verdict::Fatal { reason } if reason.contains("not logged in"))
        );
    }

    #[test]
    fn session_errors_from_stderr() {
        let r = Report {
            stderr: "Error: Session ID x is already in use.\n".into(),
            exit_code: Some(1),
            ..Report::default()
        };
        assert_eq!(r.verdict(), Verdict::SessionInUse);
        let r = Report {
            stderr: "No conversation found with session ID: x\n".into(),
            result: Some(ResultEvent {
                is_error: true,
                ..ResultEvent::default()
            }),
            ..Report::default()
        };
        assert!(matches!(r.verdict(), Verdict::NoConversation { .. }));
    }

    #[test]
    fn denials_of_every_result_of_a_run_are_kept() {
        let first: ResultEvent = serde_json::from_value(serde_json::json!({
            "type": "result", "is_error": false, "total_cost_usd": 0.1, "session_id": "s",
            "model_usage_since_last_result": {"m": {"inputTokens": 10, "outputTokens": 1}},
            "permission_denials": [{"tool_name": "Bash", "tool_use_id": "a", "tool_input": {"command": "npm publish"}}]
        }))
        .unwrap();
        let second: ResultEvent = serde_json::from_value(serde_json::json!({
            "type": "result", "is_error": false, "total_cost_usd": 0.2, "session_id": "s",
            "permission_denials": [
                {"tool_name": "Bash", "tool_use_id": "a", "tool_input": {"command": "npm publish"}},
                {"tool_name": "Bash", "tool_use_id": "b", "tool_input": {"command": "cargo publish"}}]
        }))
        .unwrap();
        let only_second: ResultEvent = serde_json::from_value(serde_json::json!({
            "type": "result", "is_error": false, "total_cost_usd": 0.3, "session_id": "s",
            "model_usage_since_last_result": {"m": {"inputTokens": 5, "outputTokens": 2}},
            "permission_denials": []
        }))
        .unwrap();
        let r = later_result(Some(later_result(Some(first), second)), only_second);
        assert!(
            (r.total_cost_usd - 0.3).abs() < 1e-12,
            "the last result stands"
        );
        let ids: Vec<&str> = r
            .permission_denials
            .as_ref()
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["tool_use_id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["a", "b"]);
        // Tokens of every part of the run, not only the last.
        let t = r.run_tokens();
        assert_eq!((t.input_tokens, t.output_tokens), (15, 3));
    }

    #[test]
    fn step_tokens_come_from_usage_since_last_result() {
        let r = result_of("step2-resume.stream.ndjson");
        assert!((r.total_cost_usd - 0.0312).abs() < 1e-9);
        assert_eq!(r.run_cost_reported(), Some(0.0156));
        assert_eq!(r.run_tokens().input_tokens, 1000);
        assert!(!r.is_error);
    }
}
