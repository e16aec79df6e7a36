//! The MCP server over stdio: what it tells the client about itself, its tools gathered from
//! their areas, and a tool call's bare argument error reworded for the model.

use std::fmt::Write as _;
use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::stdio;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt, tool_handler};

use super::daemon::Daemon;
use super::evening::{Evening, fail};

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

impl Evening {
    pub fn new(daemon: Result<Daemon, String>) -> Evening {
        Evening {
            daemon: Arc::new(daemon),
            tool_router: Self::tool_router(),
        }
    }

    /// Every tool: a router per area of tools, each beside its tools.
    fn tool_router() -> ToolRouter<Evening> {
        Self::projects_router() + Self::lines_router() + Self::night_router()
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
    use super::*;

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
        assert_eq!(tools.len(), 9);
    }
}
