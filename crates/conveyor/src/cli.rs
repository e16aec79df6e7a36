//! `conveyord lines` and `conveyord line add | priority | cancel`: the queue from a terminal or
//! a script, over the daemon's API (the same client as pult and the evening's MCP server).
//! A table for a person, `--json` for scripts (the API's own objects).

use anyhow::Context;
use conveyor_api::{Client, Line, LineState, NewLine, Project};

/// What the line commands do.
#[derive(clap::Subcommand)]
pub enum LineCmd {
    /// Queue a line (`POST /api/lines`).
    Add {
        /// The project: its id or its name.
        #[arg(long)]
        project: String,
        #[arg(long)]
        title: String,
        /// What to do, in words (the planner reads it).
        #[arg(long)]
        task: String,
        /// Higher runs first (0 when absent).
        #[arg(long, allow_hyphen_values = true)]
        priority: Option<i32>,
        /// The PlanFix task to report to when done (`1234` or `#1234`).
        #[arg(long)]
        planfix_task: Option<String>,
    },
    /// Change a line's priority (`PATCH /api/lines/{id}`); higher runs first.
    Priority {
        id: String,
        #[arg(allow_hyphen_values = true)]
        priority: i32,
    },
    /// Cancel a line (`POST /api/lines/{id}/cancel`).
    Cancel { id: String },
}

/// `conveyord lines`: the queue, optionally of one state or project (id or name).
///
/// # Errors
/// The API's refusal or an unreachable daemon, saying which.
pub async fn lines(
    client: &Client,
    state: Option<&str>,
    project: Option<&str>,
    json: bool,
) -> anyhow::Result<String> {
    let state = match state {
        Some(s) => Some(LineState::parse(s).with_context(|| {
            format!(
                "--state {s:?} is not a line state (one of: {})",
                LineState::ALL.map(LineState::as_str).join(", ")
            )
        })?),
        None => None,
    };
    let projects = client.projects().await?;
    let project_id = project.map(|p| project_id(&projects, p)).transpose()?;
    let lines = client.lines(state, project_id.as_deref()).await?;
    if json {
        return Ok(serde_json::to_string_pretty(&lines)? + "\n");
    }
    Ok(table(&lines, &projects))
}

/// `conveyord line …`.
///
/// # Errors
/// The API's refusal or an unreachable daemon, saying which.
pub async fn line(client: &Client, cmd: LineCmd, json: bool) -> anyhow::Result<String> {
    let (line, done) = match cmd {
        LineCmd::Add {
            project,
            title,
            task,
            priority,
            planfix_task,
        } => {
            let projects = client.projects().await?;
            let project_id = project_id(&projects, &project)?;
            let l = client
                .create_line(&NewLine {
                    project_id,
                    title,
                    task,
                    priority,
                    planfix_task,
                })
                .await?;
            (l, "queued")
        }
        LineCmd::Priority { id, priority } => {
            (client.set_priority(&id, priority).await?, "priority set")
        }
        LineCmd::Cancel { id } => (client.cancel(&id).await?, "cancelled"),
    };
    if json {
        return Ok(serde_json::to_string_pretty(&line)? + "\n");
    }
    Ok(format!(
        "{done}: {} (priority {}, {}) {}\n",
        line.title,
        line.priority,
        line.state.as_str(),
        line.id
    ))
}

/// A project given by id or by name.
fn project_id(projects: &[Project], given: &str) -> anyhow::Result<String> {
    if let Some(p) = projects.iter().find(|p| p.id == given || p.name == given) {
        return Ok(p.id.clone());
    }
    let known: Vec<&str> = projects.iter().map(|p| p.name.as_str()).collect();
    anyhow::bail!(
        "no project {given:?} (by id or name); the daemon has: {}",
        if known.is_empty() {
            "none yet".to_string()
        } else {
            known.join(", ")
        }
    )
}

/// The lines as aligned columns, in the daemon's order.
fn table(lines: &[Line], projects: &[Project]) -> String {
    if lines.is_empty() {
        return "no lines\n".into();
    }
    let name = |id: &str| {
        projects
            .iter()
            .find(|p| p.id == id)
            .map_or(id, |p| p.name.as_str())
            .to_string()
    };
    let rows: Vec<[String; 5]> = lines
        .iter()
        .map(|l| {
            [
                l.priority.to_string(),
                l.state.as_str().to_string(),
                name(&l.project_id),
                l.title.clone(),
                l.id.clone(),
            ]
        })
        .collect();
    let head = ["PRIO", "STATE", "PROJECT", "TITLE", "ID"];
    let width = |i: usize| {
        rows.iter()
            .map(|r| r[i].chars().count())
            .chain([head[i].len()])
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..5).map(width).collect();
    let mut out = String::new();
    for r in std::iter::once(head.map(str::to_string)).chain(rows) {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i == 4 {
                    c.clone()
                } else {
                    let pad = widths[i] - c.chars().count();
                    format!("{c}{}", " ".repeat(pad))
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}
