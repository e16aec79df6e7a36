//! How `conveyord mcp` reaches the daemon: its API's address and client, where the token came
//! from, and a failed call put in words for the model (what was being done, what went wrong,
//! what to fix).

use std::path::Path;

use conveyor_api::{Client, ClientError, ErrorCode};

/// How the server reaches the daemon, or why it cannot.
#[derive(Debug, Clone)]
pub struct Daemon {
    pub(super) url: String,
    pub(super) client: Client,
    /// Where the token came from, in words ("the token file /etc/conveyor/token").
    pub(super) token_from: String,
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
    match crate::config::Config::load(config) {
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

impl Daemon {
    /// A failed call in words for the model: what was being done, what went wrong, what to fix.
    pub(super) fn explain(&self, e: &ClientError, doing: &str) -> String {
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
