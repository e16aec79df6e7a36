//! The tools over the queue: list the lines, queue new ones, change a line's priority, cancel
//! a line.

use std::fmt::Write as _;

use conveyor_api::{ClientError, ErrorCode, Line, LineState, NewLine};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{schemars, tool, tool_router};
use serde::{Deserialize, Deserializer};

use super::daemon::Daemon;
use super::evening::{Evening, fail, ok};
use super::text::{describe, find_project, is_open, names, unknown_project};

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

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LastRunArgs {
    /// The line's id, from list_lines or add_lines.
    pub line_id: String,
}

/// How much of a tool's input or output `last_run` shows per call: the model reading it needs
/// the gist, and a whole transcript would crowd its context.
const LAST_RUN_CUT: usize = 400;

/// A Rust-side cut at a character boundary, with an ellipsis when shortened.
fn brief(s: &str) -> String {
    let s = s.trim();
    if s.len() <= LAST_RUN_CUT {
        return s.to_string();
    }
    let mut end = LAST_RUN_CUT;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
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

#[tool_router(router = lines_router, vis = "pub(super)")]
impl Evening {
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
        description = "What a line's last run did: its step, kind, outcome and cost, then its \
conversation in order (the agent's text, each tool call with its input and result, errors \
marked, the CLI's result). Takes the line's id (list_lines, add_lines). Known secrets are hidden; \
long inputs and outputs are shortened.",
        annotations(
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn last_run(&self, Parameters(a): Parameters<LastRunArgs>) -> CallToolResult {
        let d = match self.daemon() {
            Ok(d) => d,
            Err(e) => return e,
        };
        let runs = match d.client.line_runs(&a.line_id).await {
            Ok(r) => r,
            Err(e) => return fail(line_error(d, &e, &a.line_id, "reading its runs")),
        };
        let Some(run) = runs.last() else {
            return ok(format!("Line {} has not run yet.", a.line_id));
        };
        let t = match d.client.transcript(run.id, 0).await {
            Ok(t) => t,
            Err(e) => return fail(line_error(d, &e, &a.line_id, "reading its last run")),
        };
        let mut out = format!(
            "Run {} of line {}: step {} ({}), attempt {}, {}, ${:.4}{}.\n",
            run.id,
            a.line_id,
            run.step_n,
            run.kind,
            run.attempt,
            run.outcome,
            t.cost_usd,
            if t.done { "" } else { " so far, still running" }
        );
        if let Some(cmd) = &run.resume {
            let _ = writeln!(out, "Continue its session by hand on the server: {cmd}");
        }
        for e in &t.events {
            use conveyor_api::TranscriptKind as K;
            let mark = if e.is_error { " [error]" } else { "" };
            let _ = match e.kind {
                K::Text => writeln!(
                    out,
                    "{}. text: {}",
                    e.seq,
                    brief(e.text.as_deref().unwrap_or(""))
                ),
                K::Thinking => writeln!(out, "{}. (thinking)", e.seq),
                K::ToolUse => writeln!(
                    out,
                    "{}. call {}: {}",
                    e.seq,
                    e.tool.as_deref().unwrap_or("?"),
                    brief(
                        &e.input
                            .as_ref()
                            .map(ToString::to_string)
                            .unwrap_or_default()
                    )
                ),
                K::ToolResult => writeln!(
                    out,
                    "{}. result of {}{mark}: {}",
                    e.seq,
                    e.tool.as_deref().unwrap_or("?"),
                    brief(e.output.as_deref().unwrap_or(""))
                ),
                K::Result | K::Error => writeln!(
                    out,
                    "{}. end{mark}: {}",
                    e.seq,
                    brief(e.text.as_deref().unwrap_or(""))
                ),
            };
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
