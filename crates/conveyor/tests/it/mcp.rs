//! `conveyord mcp`, the evening's MCP server: spoken to over its stdio by hand (JSON-RPC:
//! initialize, the tools and their schemas, calls that work, bad arguments, a refused token, a
//! daemon that is not there), and by the real `claude` binary against the scripted mock, whose
//! session reads the budget, queues two lines and raises one's priority through the tools.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use conveyor_api::LineState;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::support::*;

/// `conveyord mcp` with its stdio piped, spoken to as an MCP client would.
struct Mcp {
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
    next_id: u64,
}

impl Mcp {
    fn spawn(args: &[&str]) -> Mcp {
        let mut child = Command::new(env!("CARGO_BIN_EXE_conveyord"))
            .arg("mcp")
            .args(args)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("conveyord mcp starts");
        Mcp {
            stdin: child.stdin.take().unwrap(),
            stdout: BufReader::new(child.stdout.take().unwrap()).lines(),
            child,
            next_id: 1,
        }
    }

    /// `conveyord mcp --url <daemon> --token-file <file>`.
    fn against(url: &str, token_file: &Path) -> Mcp {
        Mcp::spawn(&["--url", url, "--token-file", token_file.to_str().unwrap()])
    }

    async fn send(&mut self, msg: &Value) {
        let mut text = msg.to_string();
        text.push('\n');
        self.stdin.write_all(text.as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// A request and its response (notifications the server sends meanwhile are skipped).
    async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let line = tokio::time::timeout(Duration::from_secs(30), self.stdout.next_line())
                .await
                .unwrap_or_else(|_| panic!("no answer to {method} in 30 s"))
                .unwrap()
                .unwrap_or_else(|| {
                    panic!("conveyord mcp closed its stdout before answering {method}")
                });
            let msg: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("not JSON-RPC on stdout: {line:?}: {e}"));
            if msg["id"] == json!(id) {
                return msg;
            }
        }
    }

    async fn notify(&mut self, method: &str) {
        self.send(&json!({"jsonrpc": "2.0", "method": method}))
            .await;
    }

    /// initialize and notifications/initialized; the server's initialize result.
    async fn initialize(&mut self) -> Value {
        let r = self
            .request(
                "initialize",
                json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "conveyor-test", "version": "0"}
                }),
            )
            .await;
        self.notify("notifications/initialized").await;
        r["result"].clone()
    }

    /// tools/call: (isError, the text of its content).
    async fn call(&mut self, tool: &str, args: Value) -> (bool, String) {
        let r = self
            .request("tools/call", json!({"name": tool, "arguments": args}))
            .await;
        assert!(
            r.get("error").is_none(),
            "{tool}: a protocol error, not a tool result: {r}"
        );
        let result = &r["result"];
        let text = result["content"]
            .as_array()
            .unwrap_or_else(|| panic!("{tool}: no content: {r}"))
            .iter()
            .filter_map(|c| c["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        (result["isError"] == json!(true), text)
    }

    /// Closes stdin and waits: the server ends by itself, with success.
    async fn close(mut self) {
        drop(self.stdin);
        let status = tokio::time::timeout(Duration::from_secs(10), self.child.wait())
            .await
            .expect("conveyord mcp did not end when its stdin closed")
            .unwrap();
        assert!(status.success(), "conveyord mcp ended with {status}");
    }
}

fn token_file(dir: &Path, token: &str) -> PathBuf {
    let f = dir.join("token");
    std::fs::write(&f, format!("{token}\n")).unwrap();
    f
}

/// A daemon whose lines stay queued: the tests look at the queue, not at runs.
async fn daemon() -> Daemon {
    Daemon::builder().config("run_lines = false").start().await
}

/// Each tool and the required fields of its input schema.
const TOOLS: &[(&str, &[&str])] = &[
    ("add_lines", &["project_id", "lines"]),
    ("add_project", &["name", "repo_path"]),
    ("cancel_line", &["line_id"]),
    ("get_budget", &[]),
    ("last_night", &[]),
    ("last_run", &["line_id"]),
    ("list_lines", &[]),
    ("list_projects", &[]),
    ("set_priority", &["line_id", "priority"]),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_server_speaks_the_protocol_and_words_errors_for_a_model() {
    let d = daemon().await;
    let project = d.project().await.to_string();
    let tmp = tempfile::tempdir().unwrap();
    let mut mcp = Mcp::against(d.url(), &token_file(tmp.path(), TOKEN));

    let init = mcp.initialize().await;
    assert_eq!(init["serverInfo"]["name"], "conveyor", "{init}");
    assert!(init["capabilities"]["tools"].is_object(), "{init}");
    let instructions = init["instructions"].as_str().unwrap();
    assert!(
        instructions.contains("pult") && instructions.contains("No tool accepts"),
        "{instructions}"
    );

    // Every tool, with a description and the required fields of its schema.
    let list = mcp.request("tools/list", json!({})).await;
    let tools = list["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        TOOLS.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        "{list}"
    );
    for (name, required) in TOOLS {
        let t = tools.iter().find(|t| t["name"] == *name).unwrap();
        assert!(
            t["description"].as_str().unwrap().len() > 80,
            "{name}: a description a model can use: {t}"
        );
        let schema = &t["inputSchema"];
        assert_eq!(schema["type"], "object", "{name}: {schema}");
        let got: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().map(|v| v.as_str().unwrap()).collect())
            .unwrap_or_default();
        assert_eq!(&got, required, "{name}: {schema}");
    }
    let add_lines = tools.iter().find(|t| t["name"] == "add_lines").unwrap();
    let line = &add_lines["inputSchema"]["properties"]["lines"]["items"];
    assert_eq!(line["required"], json!(["title", "task"]), "{add_lines}");
    for field in ["priority", "planfix_task"] {
        assert!(line["properties"][field].is_object(), "{add_lines}");
    }
    // No tool of Anton's: accepting, remarks, answers stay in pult.
    for name in &names {
        for verb in ["accept", "answer", "remark", "take_back"] {
            assert!(!name.contains(verb), "{name}");
        }
    }

    // Calls that work: two lines queued in the project named `p` (a name does for its id).
    let (err, text) = mcp
        .call(
            "add_lines",
            json!({"project_id": "p", "lines": [
                {"title": "backup", "task": "Back the database up nightly.", "priority": 3},
                {"title": "search", "task": "Make search faster.", "planfix_task": 1234},
            ]}),
        )
        .await;
    assert!(!err, "{text}");
    assert!(text.contains("2 of 2 line(s) queued"), "{text}");
    let lines = d.client().lines(None, Some(&project)).await.unwrap();
    let titles: Vec<(&str, i32, Option<&str>)> = lines
        .iter()
        .map(|l| (l.title.as_str(), l.priority, l.planfix_task.as_deref()))
        .collect();
    assert_eq!(
        titles,
        [("backup", 3, None), ("search", 0, Some("1234"))],
        "{text}"
    );
    for l in &lines {
        assert!(text.contains(&l.id), "{text}");
    }
    let search = lines
        .iter()
        .find(|l| l.title == "search")
        .unwrap()
        .id
        .clone();

    // The same title again, and a new one: one refused with the daemon's code and what to do,
    // the other queued; the result is an error, line by line.
    let (err, text) = mcp
        .call(
            "add_lines",
            json!({"project_id": project, "lines": [
                {"title": "Backup", "task": "again"},
                {"title": "docs", "task": "Write the docs."},
            ]}),
        )
        .await;
    assert!(err, "{text}");
    assert!(text.contains("1 of 2 line(s) queued"), "{text}");
    assert!(
        text.contains("409 duplicate_title") && text.contains("set_priority"),
        "{text}"
    );
    // A PlanFix task that is not a number: the daemon's 422 and what to give.
    let (err, text) = mcp
        .call(
            "add_lines",
            json!({"project_id": project, "lines": [{"title": "pf", "task": "t", "planfix_task": "soon"}]}),
        )
        .await;
    assert!(err && text.contains("422 bad_planfix_task"), "{text}");
    // An unknown project: nothing sent, the projects named.
    let (err, text) = mcp
        .call(
            "add_lines",
            json!({"project_id": "nope", "lines": [{"title": "x", "task": "y"}]}),
        )
        .await;
    assert!(err, "{text}");
    assert!(
        text.contains("No project has the id or name \"nope\"") && text.contains(&project),
        "{text}"
    );

    // Bad arguments: a readable tool error naming what the tool takes, not a protocol error.
    let (err, text) = mcp
        .call(
            "set_priority",
            json!({"line_id": search, "priority": "high"}),
        )
        .await;
    assert!(err, "{text}");
    assert!(
        text.starts_with("Bad arguments for set_priority:")
            && text.contains("invalid type")
            && text.contains("{line_id, priority}"),
        "{text}"
    );
    let (err, text) = mcp.call("add_lines", json!({"lines": []})).await;
    assert!(
        err && text.contains("missing field `project_id`") && text.contains("project_id, lines"),
        "{text}"
    );
    let (err, text) = mcp.call("cancel_line", json!({"line": search})).await;
    assert!(err && text.contains("unknown field `line`"), "{text}");
    let (err, text) = mcp.call("list_lines", json!({"state": "sleeping"})).await;
    assert!(err && text.contains("awaiting_acceptance"), "{text}");
    let (err, text) = mcp
        .call(
            "set_priority",
            json!({"line_id": "no-such-line", "priority": 1}),
        )
        .await;
    assert!(err && text.contains("list_lines gives"), "{text}");

    // The rest of the tools, on the same server: it did not crash on any of the above.
    let (err, text) = mcp
        .call("set_priority", json!({"line_id": search, "priority": 7}))
        .await;
    assert!(!err, "{text}");
    assert!(text.contains("priority 0 → 7"), "{text}");
    let order: Vec<String> = d
        .client()
        .lines(Some(LineState::Queued), Some(&project))
        .await
        .unwrap()
        .into_iter()
        .map(|l| l.title)
        .collect();
    assert_eq!(order, ["search", "backup", "docs"]);
    let (err, text) = mcp.call("list_lines", json!({"project": "p"})).await;
    assert!(!err, "{text}");
    let at = |t: &str| {
        text.find(&format!("\"{t}\""))
            .unwrap_or_else(|| panic!("{t}: {text}"))
    };
    assert!(
        at("search") < at("backup") && at("backup") < at("docs"),
        "{text}"
    );
    let (err, text) = mcp.call("list_projects", json!({})).await;
    assert!(
        !err && text.contains(&format!("p (id {project})")),
        "{text}"
    );
    let (err, text) = mcp.call("get_budget", json!({})).await;
    assert!(!err && text.contains("pools:"), "{text}");
    let (err, text) = mcp.call("cancel_line", json!({"line_id": search})).await;
    assert!(!err && text.contains("cancelled"), "{text}");
    let (err, text) = mcp.call("cancel_line", json!({"line_id": search})).await;
    assert!(
        err && text.contains("already accepted or cancelled"),
        "{text}"
    );
    let (err, text) = mcp.call("last_night", json!({})).await;
    assert!(!err, "{text}");
    assert!(
        text.contains("Queued, not started: 2") && text.contains("Waiting for Anton"),
        "{text}"
    );
    let (err, text) = mcp
        .call(
            "add_project",
            json!({"name": "elsewhere", "repo_path": tmp.path().join("nothing")}),
        )
        .await;
    assert!(err && text.contains("not_a_repository"), "{text}");
    mcp.close().await;
}

/// A token the daemon refuses: every tool says so and names the token file to fix.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_token_names_the_token_file() {
    let d = daemon().await;
    let tmp = tempfile::tempdir().unwrap();
    let file = token_file(tmp.path(), "not-the-token");
    let mut mcp = Mcp::against(d.url(), &file);
    mcp.initialize().await;
    for tool in ["get_budget", "list_projects"] {
        let (err, text) = mcp.call(tool, json!({})).await;
        assert!(err, "{text}");
        assert!(
            text.contains("refused the token")
                && text.contains(&format!("the token file {}", file.display())),
            "{text}"
        );
    }
    // A token file that is not there: the server still starts and says what to fix.
    let mut mcp = Mcp::against(d.url(), &tmp.path().join("missing"));
    mcp.initialize().await;
    let (err, text) = mcp.call("last_night", json!({})).await;
    assert!(err, "{text}");
    assert!(
        text.contains("reading the token file") && text.contains(".mcp.json"),
        "{text}"
    );
}

/// No daemon at the URL: the tool says where it looked and what to check.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_that_is_not_there_is_said_so() {
    let tmp = tempfile::tempdir().unwrap();
    let url = closed_port_url();
    let mut mcp = Mcp::against(&url, &token_file(tmp.path(), TOKEN));
    mcp.initialize().await;
    let (err, text) = mcp
        .call(
            "add_lines",
            json!({"project_id": "p", "lines": [{"title": "t", "task": "x"}]}),
        )
        .await;
    assert!(err, "{text}");
    assert!(
        text.contains(&format!("The conveyor daemon at {url} did not answer"))
            && text.contains("Is `conveyord serve` running"),
        "{text}"
    );
    mcp.close().await;
}

// ---------------------------------------------------------------------------------------------
// The real CLI

/// The step header the mock keys its scripts on (`tests/fixtures/mock-anthropic.mjs`).
const HEADER: &str = "conveyor step 1 attempt 1 · evening · line evening";

/// One `claude -p <prompt> --output-format stream-json --verbose <args>` in `cwd`, logged in
/// to the daemon's mock, with `env` on top: its stream-json events (it must end with exit 0).
async fn run_claude(
    d: &Daemon,
    cwd: &Path,
    prompt: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> Vec<Value> {
    let home = cwd.with_extension("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut cmd = Command::new(claude_bin());
    cmd.args(["-p", prompt, "--output-format", "stream-json", "--verbose"])
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .envs(cli_env(&d.mock().url(), &home))
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(120), cmd.output())
        .await
        .expect("claude did not finish in 120 s")
        .unwrap();
    assert!(
        out.status.success(),
        "claude ended with {}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The run's `system/init` event and its last `result`.
fn init_and_result(events: &[Value]) -> (&Value, &Value) {
    let init = events
        .iter()
        .find(|e| e["type"] == "system" && e["subtype"] == "init")
        .unwrap_or_else(|| panic!("no init event: {events:#?}"));
    let result = events
        .iter()
        .rfind(|e| e["type"] == "result")
        .unwrap_or_else(|| panic!("no result: {events:#?}"));
    (init, result)
}

/// The MCP servers of a run's init event: (name, status).
fn servers(init: &Value) -> Vec<(&str, &str)> {
    init["mcp_servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["status"].as_str().unwrap()))
        .collect()
}

fn denied_tools(result: &Value) -> Vec<&str> {
    result["permission_denials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["tool_name"].as_str().unwrap())
        .collect()
}

/// The `tool_result` texts of a run, by the name of the tool the model called.
fn tool_results(events: &[Value]) -> Vec<(String, bool, String)> {
    let mut names = std::collections::HashMap::new();
    let mut out = Vec::new();
    for e in events {
        for block in e["message"]["content"].as_array().into_iter().flatten() {
            match block["type"].as_str() {
                Some("tool_use") => {
                    names.insert(
                        block["id"].as_str().unwrap().to_string(),
                        block["name"].as_str().unwrap().to_string(),
                    );
                }
                Some("tool_result") => {
                    let id = block["tool_use_id"].as_str().unwrap();
                    let text = match &block["content"] {
                        Value::String(s) => s.clone(),
                        Value::Array(a) => a
                            .iter()
                            .filter_map(|c| c["text"].as_str())
                            .collect::<Vec<_>>()
                            .join("\n"),
                        other => other.to_string(),
                    };
                    out.push((
                        names.get(id).cloned().unwrap_or_default(),
                        block["is_error"] == json!(true),
                        text,
                    ));
                }
                _ => {}
            }
        }
    }
    out
}

/// The evening in a real `claude -p` session: the model (scripted in the mock) reads the
/// budget, queues two lines and raises the first one's priority, all through
/// `mcp__conveyor__*` tools; the daemon's queue afterwards is what it asked for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claude_session_queues_the_evening_through_the_mcp_tools() {
    let d = Daemon::builder()
        .mock()
        .config("run_lines = false")
        .start()
        .await;
    let project = d.project().await.to_string();
    let tmp = tempfile::tempdir().unwrap();
    let token = token_file(tmp.path(), TOKEN);
    let mcp_config = tmp.path().join("mcp.json");
    std::fs::write(
        &mcp_config,
        json!({"mcpServers": {"conveyor": {
            "command": env!("CARGO_BIN_EXE_conveyord"),
            "args": ["mcp", "--url", d.url(), "--token-file", token],
            "env": {"RUST_LOG": "warn"},
        }}})
        .to_string(),
    )
    .unwrap();
    let cwd = tmp.path().join("checkout");
    std::fs::create_dir_all(&cwd).unwrap();

    // Without the tools allowed, `-p` denies them: nothing is queued.
    let denied = uuid::Uuid::new_v4().to_string();
    d.mock()
        .script(
            &denied,
            json!({"1": [
                {"tool": "mcp__conveyor__add_lines", "input": {"project_id": project,
                    "lines": [{"title": "unasked", "task": "t"}]}},
                text("could not"),
            ]}),
        )
        .await;
    let mcp_args = [
        "--mcp-config",
        mcp_config.to_str().unwrap(),
        "--strict-mcp-config",
    ];
    let events = run_claude(
        &d,
        &cwd,
        HEADER,
        &[&["--session-id", denied.as_str()][..], &mcp_args].concat(),
        &[],
    )
    .await;
    let (_, result) = init_and_result(&events);
    assert_eq!(
        denied_tools(result),
        ["mcp__conveyor__add_lines"],
        "{result}"
    );
    let results = tool_results(&events);
    assert!(
        results[0].1 && results[0].2.contains("haven't granted it"),
        "{results:#?}"
    );
    assert!(d.client().lines(None, None).await.unwrap().is_empty());

    // Allowed: the budget, two lines, the first one raised above the second.
    let session = uuid::Uuid::new_v4().to_string();
    d.mock()
        .script(
            &session,
            json!({"1": [
                {"tool": "mcp__conveyor__get_budget", "input": {}},
                {"tool": "mcp__conveyor__add_lines", "input": {"project_id": project, "lines": [
                    {"title": "nightly backup", "task": "Back the database up every night.", "priority": 1},
                    {"title": "faster search", "task": "Make the search twice as fast.", "priority": 2},
                ]}},
                {"tool": "mcp__conveyor__set_priority", "input": {
                    "line_id": "{{after:queued: id ([0-9a-f-]+), \"nightly backup\"}}",
                    "priority": 10,
                }},
                text("Tomorrow's queue is in the daemon."),
            ]}),
        )
        .await;
    let events = run_claude(
        &d,
        &cwd,
        HEADER,
        &[
            &["--session-id", session.as_str()][..],
            &mcp_args,
            &["--allowedTools", "mcp__conveyor__*"],
        ]
        .concat(),
        &[],
    )
    .await;
    let (init, result) = init_and_result(&events);
    assert_eq!(servers(init), [("conveyor", "connected")], "{init}");
    assert_eq!(result["is_error"], false, "{result}");
    assert_eq!(result["permission_denials"], json!([]), "{result}");
    let results = tool_results(&events);
    let called: Vec<(&str, bool)> = results.iter().map(|(n, e, _)| (n.as_str(), *e)).collect();
    assert_eq!(
        called,
        [
            ("mcp__conveyor__get_budget", false),
            ("mcp__conveyor__add_lines", false),
            ("mcp__conveyor__set_priority", false),
        ],
        "{results:#?}"
    );
    assert!(results[0].2.contains("pools:"), "{results:#?}");
    assert!(results[2].2.contains("priority 1 → 10"), "{results:#?}");
    // The CLI offers every tool of the server under its MCP name (to the model, deferred
    // behind ToolSearch; a direct call runs all the same).
    let mut offered: Vec<&str> = init["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t.as_str())
        .filter(|t| t.starts_with("mcp__"))
        .collect();
    offered.sort();
    let want: Vec<String> = TOOLS
        .iter()
        .map(|(n, _)| format!("mcp__conveyor__{n}"))
        .collect();
    assert_eq!(offered, want, "{init}");

    // The daemon's queue: both lines, the backup first now.
    let queued: Vec<(String, i32)> = d
        .client()
        .lines(Some(LineState::Queued), Some(&project))
        .await
        .unwrap()
        .into_iter()
        .map(|l| (l.title, l.priority))
        .collect();
    assert_eq!(
        queued,
        [
            ("nightly backup".to_string(), 10),
            ("faster search".to_string(), 2)
        ]
    );
}

/// The repository's own setup: its `.mcp.json` (`${CONVEYORD:-conveyord} mcp --config
/// ${CONVEYOR_CONFIG:-conveyor.toml}`, the config relative to the session's folder) and its
/// `/evening` command, whose `allowed-tools` let the reading tools run without asking while
/// a write still needs Anton's permission (denied in `-p` without `--allowedTools`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_repositorys_mcp_json_and_evening_command_work_from_a_checkout() {
    let d = Daemon::builder()
        .mock()
        .config("run_lines = false")
        .start()
        .await;
    let project = d.project().await.to_string();
    let tmp = tempfile::tempdir().unwrap();
    let checkout = tmp.path().join("checkout");
    std::fs::create_dir_all(checkout.join(".claude/commands")).unwrap();
    for f in [".mcp.json", ".claude/commands/evening.md"] {
        std::fs::copy(repo_root().join(f), checkout.join(f)).unwrap();
    }
    // The checkout's conveyor.toml, as the README's conveyor section makes it: here it names
    // the test daemon's address and token.
    std::fs::write(
        checkout.join("conveyor.toml"),
        format!(
            "listen = {:?}\ndata_dir = \"unused\"\ntoken_file = \"token\"\n",
            d.url().trim_start_matches("http://")
        ),
    )
    .unwrap();
    std::fs::write(checkout.join("token"), format!("{TOKEN}\n")).unwrap();
    // `/evening <notes>`: the notes carry the header the mock keys its script on.
    d.mock()
        .script(
            "*",
            json!({"1": [
                {"tool": "mcp__conveyor__last_night", "input": {}},
                {"tool": "mcp__conveyor__get_budget", "input": {}},
                {"tool": "mcp__conveyor__list_lines", "input": {}},
                {"tool": "mcp__conveyor__add_lines", "input": {"project_id": project,
                    "lines": [{"title": "asked too early", "task": "t"}]}},
                text("Shall I queue it?"),
            ]}),
        )
        .await;
    let conveyord = env!("CARGO_BIN_EXE_conveyord");
    let events = run_claude(
        &d,
        &checkout,
        &format!("/evening {HEADER}"),
        &[],
        &[("CONVEYORD", conveyord)],
    )
    .await;
    let (init, result) = init_and_result(&events);
    assert_eq!(servers(init), [("conveyor", "connected")], "{init}");
    assert!(
        init["slash_commands"]
            .as_array()
            .unwrap()
            .contains(&json!("evening")),
        "{init}"
    );
    // The command's text reached the model, with Anton's notes in place of $ARGUMENTS.
    let asked = d.mock().log().await;
    let conversation = asked
        .iter()
        .filter(|r| r["kind"] == "messages" && r["side"] != true)
        .map(|r| r["conversation"].as_str().unwrap())
        .next()
        .expect("no scripted request");
    assert!(
        conversation.contains("plan tomorrow's queue")
            && conversation.contains(&format!("if he gave any: {HEADER}")),
        "{conversation}"
    );
    let results = tool_results(&events);
    let called: Vec<(&str, bool)> = results.iter().map(|(n, e, _)| (n.as_str(), *e)).collect();
    assert_eq!(
        called,
        [
            ("mcp__conveyor__last_night", false),
            ("mcp__conveyor__get_budget", false),
            ("mcp__conveyor__list_lines", false),
            ("mcp__conveyor__add_lines", true),
        ],
        "{results:#?}"
    );
    assert!(results[0].2.contains("Waiting for Anton"), "{results:#?}");
    assert_eq!(
        denied_tools(result),
        ["mcp__conveyor__add_lines"],
        "{result}"
    );
    assert!(d.client().lines(None, None).await.unwrap().is_empty());
}
