//! The tools over the daemon's projects: list them, register one.

use std::fmt::Write as _;

use conveyor_api::{ErrorCode, NewProject};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{schemars, tool, tool_router};
use serde::Deserialize;

use super::evening::{Evening, fail, ok};

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

#[tool_router(router = projects_router, vis = "pub(super)")]
impl Evening {
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
}
