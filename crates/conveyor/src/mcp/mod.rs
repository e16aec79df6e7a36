//! `conveyord mcp`: the evening's tools for a Claude Code session, as a stdio MCP server (the
//! official Rust SDK, `rmcp`). It is a client of a running daemon's API like every other
//! subcommand but `serve`: it reads the queue, the projects, the budget and last night's
//! results, registers projects, queues lines, changes priorities and cancels lines, all
//! through [`conveyor_api::Client`]. Nothing here accepts a line or answers a question: those
//! stay Anton's, in pult.
//!
//! Every failure is a tool result with `isError: true` worded for the model (what to fix, which
//! tool gives the missing id), never a protocol error or a crash: bad arguments, an unknown
//! project, a duplicate title, the daemon unreachable, a refused token.

mod text;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use text::{describe, find_project, is_open, names, night_report, unknown_project};

use conveyor_api::{
    Client, ClientError, ErrorCode, Line, LineState, NewLine, NewProject, Project, Review,
};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt, schemars, tool, tool_handler};
use rmcp::{tool_router, transport::stdio};
use serde::{Deserialize, Deserializer};

/// What the server tells the client about itself (Claude Code puts it in the session's
/// system prompt).
pub const INSTRUCTIONS: &str = "\
The conveyor daemon's queue. Lines are units of work in one project (a git repository on the \
daemon's machine); the daemon runs them overnight with headless Claude Code, one line per \
project at a time, several projects in parallel, highest priority first, within the budget.

The evening: last_night says what finished, what waits for Anton and what failed; get_budget \
what the night may spend; list_projects and list_lines what exists and is queued. Discuss \
tomorrow's lines with Anton, agree on their priorities, and queue them with add_lines only \
after he confirms the list. set_priority reorders, cancel_line drops a line he no longer wants.

No tool accepts a line, writes remarks on it, answers or takes back a question: those stay \
Anton's, in pult (the Lines and Review pages). Say so when he asks for them here.";

/// How the server reaches the daemon, or why it cannot.
#[derive(Debug, Clone)]
pub struct Daemon {
    url: String,
    client: Client,
    /// Where the token came from, in words ("the token file /etc/conveyor/token").
    token_from: String,
}

impl Daemon {
    pub fn new(url: String, client: Client, token_from: String) -> Daemon {
        Daemon {
            url,
            client,
            token_from,
        }
    }
}

/// Where `conveyord mcp`'s token comes from, in words for an error: the `--token` argument,
/// the `--token-file`, or the config's `token` or `token_file`.
pub fn token_origin(config: &Path, token_given: bool, token_file: Option<&Path>) -> String {
    if token_given {
        return "the --token argument".into();
    }
    if let Some(f) = token_file {
        return format!("the token file {}", f.display());
    }
    match crate::Config::load(config) {
        Ok(cfg) if cfg.token.is_some() => format!("the `token` in {}", config.display()),
        Ok(cfg) => match cfg.token_file {
            Some(f) => format!(
                "the token file {} (`token_file` in {})",
                f.display(),
                config.display()
            ),
            None => format!("the config {}", config.display()),
        },
        Err(_) => format!("the token file named in {}", config.display()),
    }
}

/// Serves the tools on stdin and stdout until the client closes them. `daemon` is the
/// connection, or why none could be made (every tool then answers with that, so the session
/// can tell Anton what to fix instead of missing its tools).
///
/// # Errors
/// The transport failed before or while serving.
pub async fn serve(daemon: Result<Daemon, String>) -> anyhow::Result<()> {
    match &daemon {
        Ok(d) => tracing::info!(url = %d.url, "serving MCP on stdio"),
        Err(e) => tracing::warn!("serving MCP on stdio without a daemon: {e}"),
    }
    let running = Evening::new(daemon).serve(stdio()).await?;
    running.waiting().await?;
    Ok(())
}

/// The MCP server: the tools over one daemon.
#[derive(Debug, Clone)]
pub struct Evening {
    daemon: Arc<Result<Daemon, String>>,
    tool_router: ToolRouter<Evening>,
}

// ---------------------------------------------------------------------------------------------
// Arguments

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListLinesArgs {
    /// Only lines in this state: queued, planning, running, waiting_budget, waiting_answer,
    /// gate, fixing, merging, deploying, awaiting_acceptance, accepted, needs_human,
    /// rolled_back, blocked, cancelled; or "all". Without it: every line that is not yet
    /// accepted or cancelled.
    #[serde(default)]
    pub state: Option<String>,
    /// Only this project's lines: its id or its name (list_projects gives both).
    #[serde(default)]
    pub project: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddProjectArgs {
    /// A short unique name, e.g. "conveyor".
    pub name: String,
    /// The absolute path, on the daemon's machine, of a git repository that has the main branch.
    pub repo_path: String,
    /// The branch lines fork from and merge into; "main" when absent.
    #[serde(default)]
    pub main_branch: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddLinesArgs {
    /// The project's id (or its name), from list_projects.
    pub project_id: String,
    /// One or more lines to queue in that project, in the order given.
    pub lines: Vec<LineArgs>,
}

/// One line to queue.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(inline)]
#[serde(deny_unknown_fields)]
pub struct LineArgs {
    /// Short and unique among the project's open lines.
    pub title: String,
    /// What the line's agents are to do and how "done" is checked: the planner's brief.
    pub task: String,
    /// Higher runs first; 0 when absent.
    #[serde(default)]
    pub priority: Option<i32>,
    /// The PlanFix task number (e.g. "1234") that gets the line's report when it is done.
    #[serde(default, deserialize_with = "string_or_number")]
    pub planfix_task: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetPriorityArgs {
    /// The line's id, from list_lines or add_lines.
    pub line_id: String,
    /// The new priority: higher runs first.
    pub priority: i32,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelLineArgs {
    /// The line's id, from list_lines or add_lines.
    pub line_id: String,
}

/// A PlanFix task number given as a string or as a bare number.
fn string_or_number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        Text(String),
        Number(u64),
    }
    Ok(Option::<Either>::deserialize(d)?.map(|e| match e {
        Either::Text(t) => t,
        Either::Number(n) => n.to_string(),
    }))
}

// ---------------------------------------------------------------------------------------------
// The tools

#[tool_router]
impl Evening {
    pub fn new(daemon: Result<Daemon, String>) -> Evening {
        Evening {
            daemon: Arc::new(daemon),
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        description = "List the projects the conveyor daemon knows: each one's id, name, repository \
path on the daemon's machine and main branch. Lines are queued in a project by its id (add_lines).",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn list_projects(&self) -> CallToolResult {
        let d = match self.daemon() {
            Ok(d) => d,
            Err(e) => return e,
        };
        match d.client.projects().await {
            Ok(ps) if ps.is_empty() => ok("No projects yet. add_project registers one \
                (a git repository on the daemon's machine)."),
            Ok(ps) => {
                let mut out = format!("{} project(s):\n", ps.len());
                for p in &ps {
                    let _ = writeln!(
                        out,
                        "- {} (id {}): repository {}, main branch {}",
                        p.name, p.id, p.repo_path, p.main_branch
                    );
                }
                ok(out)
            }
            Err(e) => fail(d.explain(&e, "listing the projects")),
        }
    }

    #[tool(
        description = "List the daemon's lines, in the order they run: highest priority first. \
Each with its id, project, state, priority, title, why it waits or stopped, and the start of its \
task. Without arguments: every line not yet accepted or cancelled. `state` narrows to one state \
(or \"all\" for every line ever); `project` to one project (its id or name).",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn list_lines(&self, Parameters(a): Parameters<ListLinesArgs>) -> CallToolResult {
        let d = match self.daemon() {
            Ok(d) => d,
            Err(e) => return e,
        };
        let (state, all) = match a.state.as_deref().map(str::trim) {
            None | Some("") | Some("open") => (None, false),
            Some("all") => (None, true),
            Some(s) => match LineState::parse(s) {
                Some(st) => (Some(st), true),
                None => {
                    return fail(format!(
                        "Unknown state {s:?}. Give one of: {}; or \"all\", or leave it out \
                         for the open lines.",
                        LineState::ALL.map(LineState::as_str).join(", ")
                    ));
                }
            },
        };
        let projects = match d.client.projects().await {
            Ok(p) => p,
            Err(e) => return fail(d.explain(&e, "listing the projects")),
        };
        let project = match a.project.as_deref() {
            None => None,
            Some(p) => match find_project(&projects, p) {
                Some(p) => Some(p.id.clone()),
                None => return fail(unknown_project(p, &projects)),
            },
        };
        let lines = match d.client.lines(state, project.as_deref()).await {
            Ok(l) => l,
            Err(e) => return fail(d.explain(&e, "listing the lines")),
        };
        let names = names(&projects);
        let shown: Vec<&Line> = lines.iter().filter(|l| all || is_open(l.state)).collect();
        if shown.is_empty() {
            return ok(match (a.state.as_deref(), a.project.as_deref()) {
                (None, None) => "No open lines: the queue is empty.".to_string(),
                _ => "No lines match.".to_string(),
            });
        }
        let mut out = format!("{} line(s), in the order they run:\n", shown.len());
        for l in shown {
            out.push_str(&describe(l, &names, true));
        }
        ok(out)
    }

    #[tool(
        description = "The daemon's budget: each pool (the rolling window, weekly, monthly) with \
what is spent and its threshold, the estimates of running steps, what a step of each kind costs \
from history, the steps cut by limits, and whether the account's usage limit parks every line \
until some time. Use it to judge how much work tonight can hold.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn get_budget(&self) -> CallToolResult {
        let d = match self.daemon() {
            Ok(d) => d,
            Err(e) => return e,
        };
        match d.client.budget().await {
            Ok(b) => ok(crate::budget::render(&b)),
            Err(e) => fail(d.explain(&e, "reading the budget")),
        }
    }

    #[tool(
        description = "What happened since last night began: what finished (awaiting Anton's \
acceptance, or accepted), what waits for Anton (needs_human, waiting_answer with how many \
questions are open on his morning page), what failed, was rolled back or is blocked and why, \
what still runs or is queued, what the night cost, and how much the judge kept from Anton. \
Start the evening with it.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn last_night(&self) -> CallToolResult {
        let d = match self.daemon() {
            Ok(d) => d,
            Err(e) => return e,
        };
        let review = match d.client.review().await {
            Ok(r) => r,
            Err(e) => return fail(d.explain(&e, "reading the morning page")),
        };
        let lines = match d.client.lines(None, None).await {
            Ok(l) => l,
            Err(e) => return fail(d.explain(&e, "listing the lines")),
        };
        let projects = match d.client.projects().await {
            Ok(p) => p,
            Err(e) => return fail(d.explain(&e, "listing the projects")),
        };
        ok(night_report(&review, &lines, &names(&projects)))
    }

    #[tool(
        description = "Register a project: a git repository on the daemon's machine that lines \
will work in. `repo_path` is absolute and must have the main branch (`main_branch`, \"main\" when \
absent). Returns the project's id, which add_lines takes. Only when Anton asks for a new project.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn add_project(&self, Parameters(a): Parameters<AddProjectArgs>) -> CallToolResult {
        let d = match self.daemon() {
            Ok(d) => d,
            Err(e) => return e,
        };
        let new = NewProject {
            name: a.name,
            repo_path: a.repo_path,
            main_branch: a.main_branch,
        };
        match d.client.create_project(&new).await {
            Ok(p) => ok(format!(
                "Project {} registered: id {}, repository {}, main branch {}. Queue lines in \
                 it with add_lines {{\"project_id\": \"{}\", …}}.",
                p.name, p.id, p.repo_path, p.main_branch, p.id
            )),
            Err(e) => {
                let hint = match e.code() {
                    Some(ErrorCode::Exists) => {
                        " A project by that name exists already: list_projects gives its id."
                    }
                    Some(ErrorCode::NotARepository) => {
                        " Give the absolute path, on the daemon's machine, of a git repository \
                         that has that branch (or name its branch in main_branch)."
                    }
                    _ => "",
                };
                fail(format!(
                    "{}{hint}",
                    d.explain(&e, &format!("registering the project {:?}", new.name))
                ))
            }
        }
    }

    #[tool(
        description = "Queue one or more lines in one project (the daemon starts them tonight, \
highest priority first). Each line: `title` (unique among the project's open lines), `task` (the \
planner's brief: what to do and how done is checked), optional `priority` (higher runs first, 0 \
by default) and `planfix_task` (a PlanFix task number for the report). Reports, line by line, \
the new line's id or why the daemon refused it (duplicate_title: that line is queued already). \
Call it only after Anton has confirmed the list.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn add_lines(&self, Parameters(a): Parameters<AddLinesArgs>) -> CallToolResult {
        let d = match self.daemon() {
            Ok(d) => d,
            Err(e) => return e,
        };
        if a.lines.is_empty() {
            return fail(
                "`lines` is empty: give at least one {\"title\", \"task\"} to queue.".into(),
            );
        }
        let projects = match d.client.projects().await {
            Ok(p) => p,
            Err(e) => return fail(d.explain(&e, "listing the projects")),
        };
        let Some(project) = find_project(&projects, &a.project_id) else {
            return fail(format!(
                "Nothing queued. {}",
                unknown_project(&a.project_id, &projects)
            ));
        };
        let total = a.lines.len();
        let mut created = Vec::new();
        let mut report = String::new();
        for (i, l) in a.lines.into_iter().enumerate() {
            let new = NewLine {
                project_id: project.id.clone(),
                title: l.title,
                task: l.task,
                priority: l.priority,
                planfix_task: l.planfix_task,
            };
            match d.client.create_line(&new).await {
                Ok(line) => {
                    let _ = writeln!(
                        report,
                        "{}. queued: id {}, \"{}\", priority {}{}",
                        i + 1,
                        line.id,
                        line.title,
                        line.priority,
                        line.planfix_task
                            .as_deref()
                            .map(|t| format!(", PlanFix task {t}"))
                            .unwrap_or_default()
                    );
                    created.push(line);
                }
                Err(e) => {
                    let _ = writeln!(
                        report,
                        "{}. refused: \"{}\": {}",
                        i + 1,
                        new.title,
                        line_refusal(d, &e)
                    );
                    // The daemon being gone or the token refused will not mend for the next
                    // line: say so once.
                    if matches!(e, ClientError::Transport(_))
                        || e.code() == Some(ErrorCode::Unauthorized)
                    {
                        let _ = writeln!(report, "The other lines were not sent.");
                        break;
                    }
                }
            }
        }
        let head = format!(
            "Project {} (id {}): {} of {} line(s) queued.\n",
            project.name,
            project.id,
            created.len(),
            total
        );
        if created.len() == total {
            ok(head + &report)
        } else {
            fail(head + &report)
        }
    }

    #[tool(
        description = "Change a line's priority (higher runs first; lines of one project run one \
at a time, in priority order). Takes the line's id (list_lines, add_lines) and the new priority; \
returns the line and the queued lines' new order.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn set_priority(&self, Parameters(a): Parameters<SetPriorityArgs>) -> CallToolResult {
        let d = match self.daemon() {
            Ok(d) => d,
            Err(e) => return e,
        };
        let before = match d.client.line(&a.line_id).await {
            Ok(l) => l.line,
            Err(e) => return fail(line_error(d, &e, &a.line_id, "reading the line")),
        };
        let line = match d.client.set_priority(&a.line_id, a.priority).await {
            Ok(l) => l,
            Err(e) => return fail(line_error(d, &e, &a.line_id, "changing its priority")),
        };
        let mut out = format!(
            "Line {} \"{}\": priority {} → {} ({}).\n",
            line.id,
            line.title,
            before.priority,
            line.priority,
            line.state.as_str()
        );
        if let (Ok(queued), Ok(projects)) = (
            d.client.lines(Some(LineState::Queued), None).await,
            d.client.projects().await,
        ) && !queued.is_empty()
        {
            let names = names(&projects);
            out.push_str("The queued lines now run in this order:\n");
            for l in &queued {
                out.push_str(&describe(l, &names, false));
            }
        }
        ok(out)
    }

    #[tool(
        description = "Cancel a line Anton no longer wants: it will not run (a running agent is \
stopped; a rolled-back line's merge is reverted on main). Cannot be undone: queue it again with \
add_lines if needed. Takes the line's id (list_lines, add_lines).",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn cancel_line(&self, Parameters(a): Parameters<CancelLineArgs>) -> CallToolResult {
        let d = match self.daemon() {
            Ok(d) => d,
            Err(e) => return e,
        };
        match d.client.cancel(&a.line_id).await {
            Ok(l) => ok(format!(
                "Line {} \"{}\" cancelled{}.",
                l.id,
                l.title,
                l.reason
                    .as_deref()
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default()
            )),
            Err(e) => {
                let hint = if e.code() == Some(ErrorCode::InvalidState) {
                    " Nothing to do: it is already accepted or cancelled."
                } else {
                    ""
                };
                fail(format!(
                    "{}{hint}",
                    line_error(d, &e, &a.line_id, "cancelling it")
                ))
            }
        }
    }
}

#[tool_handler]
impl ServerHandler for Evening {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("conveyor", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    /// The router's call, with the SDK's bare deserialization error reworded for the model:
    /// which tool, what was wrong, and what the tool takes.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let tcc = ToolCallContext::new(self, request, context);
        match self.tool_router.call(tcc).await? {
            CallToolResponse::Complete(r) if r.is_error == Some(true) => {
                let text = text_of(&r);
                match text.strip_prefix("failed to deserialize parameters:") {
                    Some(why) => Ok(fail(self.bad_arguments(&name, why.trim())).into()),
                    None => Ok(r.into()),
                }
            }
            other => Ok(other),
        }
    }
}

impl Evening {
    /// The daemon, or the tool result saying why there is none.
    fn daemon(&self) -> Result<&Daemon, CallToolResult> {
        self.daemon.as_ref().as_ref().map_err(|e| {
            fail(format!(
                "conveyord mcp has no daemon to talk to: {e}. Fix the arguments of `conveyord \
                 mcp` where this MCP server is configured (.mcp.json, or `claude mcp add`): \
                 --config FILE, or --url URL --token-file FILE; then restart the server (/mcp \
                 in Claude Code)."
            ))
        })
    }

    /// Bad arguments to `tool`: what serde said, and what the tool takes.
    fn bad_arguments(&self, tool: &str, why: &str) -> String {
        let mut out = format!("Bad arguments for {tool}: {why}.");
        if let Some(t) = self.tool_router.get(tool) {
            let schema = &t.input_schema;
            let required: Vec<&str> = schema
                .get("required")
                .and_then(|r| r.as_array())
                .map(|r| r.iter().filter_map(|v| v.as_str()).collect())
                .unwrap_or_default();
            // The required fields in their order, then the optional ones.
            let mut fields: Vec<String> = required.iter().map(|k| k.to_string()).collect();
            let optional = schema
                .get("properties")
                .and_then(|p| p.as_object())
                .into_iter()
                .flat_map(|p| p.keys())
                .filter(|k| !required.contains(&k.as_str()));
            fields.extend(optional.map(|k| format!("{k}?")));
            if fields.is_empty() {
                out.push_str(" It takes no arguments.");
            } else {
                let _ = write!(
                    out,
                    " It takes {{{}}}{}; see its input schema and call it again.",
                    fields.join(", "),
                    if fields.iter().any(|f| f.ends_with('?')) {
                        " (? = optional)"
                    } else {
                        ""
                    }
                );
            }
        }
        out
    }
}

impl Daemon {
    /// A failed call in words for the model: what was being done, what went wrong, what to fix.
    fn explain(&self, e: &ClientError, doing: &str) -> String {
        match e {
            ClientError::Transport(t) => format!(
                "The conveyor daemon at {} did not answer ({doing}: {}). Is `conveyord serve` \
                 running there (and, for a remote daemon, its ssh tunnel up)? Nothing was changed.",
                self.url,
                transport_cause(t)
            ),
            ClientError::Api {
                code: Some(ErrorCode::Unauthorized),
                ..
            } => format!(
                "The daemon at {} refused the token from {} ({doing}). Put the daemon's own token \
                 there (the file its config's `token_file` names), or point `conveyord mcp \
                 --token-file` at it where this MCP server is configured (.mcp.json, or `claude \
                 mcp add`), then restart the server (/mcp in Claude Code).",
                self.url, self.token_from
            ),
            ClientError::Api {
                status,
                code,
                message,
            } => format!(
                "The daemon refused {doing}: {status} {}: {message}.",
                code.map_or("error", ErrorCode::as_str)
            ),
            ClientError::Decode { url, source } => format!(
                "The daemon at {} answered {url} with something this conveyord cannot read \
                 ({source}): are `conveyord mcp` and `conveyord serve` the same version?",
                self.url
            ),
            other => format!("{doing} failed: {other}"),
        }
    }
}

/// The innermost cause of a transport error ("Connection refused"), not reqwest's outer
/// "error sending request for url".
fn transport_cause(e: &reqwest::Error) -> String {
    let mut cause: &dyn std::error::Error = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

/// Why the daemon refused one line of add_lines, with what to do instead.
fn line_refusal(d: &Daemon, e: &ClientError) -> String {
    let (status, message) = match e {
        ClientError::Api {
            status, message, ..
        } => (*status, message.as_str()),
        _ => return d.explain(e, "queueing the line"),
    };
    let code = e.code().map_or("error", ErrorCode::as_str);
    let hint = match e.code() {
        Some(ErrorCode::DuplicateTitle) => {
            " It is queued already: change that line's priority with set_priority, or \
             cancel_line it and add it again; do not add it twice."
        }
        Some(ErrorCode::UnknownProject) => " list_projects gives the projects' ids.",
        Some(ErrorCode::BadPlanfixTask) => {
            " Give the PlanFix task's number (\"1234\"), or leave planfix_task out."
        }
        Some(ErrorCode::BadRequest) => " Give the line a non-blank title and task.",
        _ => "",
    };
    format!("{status} {code}: {message}.{hint}")
}

/// A failed call on one line (set_priority, cancel_line).
fn line_error(d: &Daemon, e: &ClientError, id: &str, doing: &str) -> String {
    if e.code() == Some(ErrorCode::NotFound) {
        return format!("No line has the id {id:?}: list_lines gives the lines' ids.");
    }
    d.explain(e, &format!("line {id}: {doing}"))
}

fn ok(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text.into())])
}

fn fail(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// The text blocks of a tool result, joined.
fn text_of(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::text::clip;
    use super::*;

    #[test]
    fn clip_cuts_on_characters_and_flattens() {
        assert_eq!(clip("a\n b  c", 10), "a b c");
        assert_eq!(clip("привет мир", 6), "привет…");
    }

    #[test]
    fn planfix_task_may_be_a_number() {
        let l: LineArgs = serde_json::from_value(
            serde_json::json!({"title": "t", "task": "x", "planfix_task": 1234}),
        )
        .unwrap();
        assert_eq!(l.planfix_task.as_deref(), Some("1234"));
        let l: LineArgs =
            serde_json::from_value(serde_json::json!({"title": "t", "task": "x"})).unwrap();
        assert_eq!(l.planfix_task, None);
    }

    #[test]
    fn every_tool_is_listed_with_its_required_fields() {
        let e = Evening::new(Err("none".into()));
        let tools = e.tool_router.list_all();
        let required = |name: &str| -> Vec<String> {
            let t = tools.iter().find(|t| t.name == name).unwrap();
            t.input_schema
                .get("required")
                .and_then(|r| r.as_array())
                .map(|r| r.iter().map(|v| v.as_str().unwrap().to_string()).collect())
                .unwrap_or_default()
        };
        assert_eq!(required("add_lines"), ["project_id", "lines"]);
        assert_eq!(required("set_priority"), ["line_id", "priority"]);
        assert!(required("list_lines").is_empty());
        assert_eq!(tools.len(), 8);
    }
}
