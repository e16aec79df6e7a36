//! The MCP server's state: the tools over one daemon (or why there is none), and what a tool
//! answers: a text result, or an error result worded for the model, never a protocol error.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{CallToolResult, ContentBlock};

use super::daemon::Daemon;

/// The MCP server: the tools over one daemon.
#[derive(Debug, Clone)]
pub struct Evening {
    pub(super) daemon: Arc<Result<Daemon, String>>,
    pub(super) tool_router: ToolRouter<Evening>,
}

impl Evening {
    /// The daemon, or the tool result saying why there is none.
    pub(super) fn daemon(&self) -> Result<&Daemon, CallToolResult> {
        self.daemon.as_ref().as_ref().map_err(|e| {
            fail(format!(
                "conveyord mcp has no daemon to talk to: {e}. Fix the arguments of `conveyord \
                 mcp` where this MCP server is configured (.mcp.json, or `claude mcp add`): \
                 --config FILE, or --url URL --token-file FILE; then restart the server (/mcp \
                 in Claude Code)."
            ))
        })
    }
}

/// A tool's answer.
pub(super) fn ok(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text.into())])
}

/// A tool's refusal, in words for the model.
pub(super) fn fail(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}
