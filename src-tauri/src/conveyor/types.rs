//! What crosses IPC about the connection to the conveyor daemon. The daemon's own wire types
//! (lines, review, budget…) come from `conveyor-api` and are generated into
//! `ui/src/lib/generated/conveyor.ts`.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where the daemon is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ConnectionMode {
    /// Started inside the app, its data in the app's data folder (the default).
    #[default]
    Embedded,
    /// A daemon elsewhere, by URL and token.
    Remote,
}

/// How the connection is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ConnectionState {
    /// The embedded daemon is starting, or the first call is on its way.
    Starting,
    /// Answering, with the right token and a compatible version.
    Connected,
    /// Nothing answers at the URL (or the embedded daemon could not start).
    Unreachable,
    /// The daemon refused the token (401).
    Unauthorized,
    /// The daemon speaks another version of the API.
    VersionMismatch,
    /// The settings cannot be used (no URL, no token…); the message says what.
    Failed,
}

/// The connection as the page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct ConnectionStatus {
    pub mode: ConnectionMode,
    /// The daemon's base URL (for the embedded one: its loopback address), once known.
    pub url: Option<String>,
    pub state: ConnectionState,
    /// What went wrong, for people.
    pub message: Option<String>,
    /// The daemon's version, from `/api/health`.
    pub daemon_version: Option<String>,
}

/// Where a remote daemon's token is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum TokenStore {
    /// The platform's keyring (Secret Service, Keychain, Credential Manager).
    Keyring,
    /// A file only the user can read (mode 0600), when no keyring answers.
    File,
}

/// The connection settings as the Settings page shows them (never the token itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct ConnectionView {
    pub mode: ConnectionMode,
    pub url: Option<String>,
    /// A token is stored for the remote daemon.
    pub token_set: bool,
    /// Where it is stored.
    pub token_store: Option<TokenStore>,
    /// The embedded daemon's optional config file (`conveyor.toml` keys: `claude_bin`,
    /// `slots`, `budget`, …); its data folder.
    pub embedded_config: String,
    pub embedded_data: String,
}

/// A change of connection from the Settings page.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, TS)]
pub struct ConnectRequest {
    pub mode: ConnectionMode,
    /// Required for `remote`.
    pub url: Option<String>,
    /// A new token for `remote`; `None` keeps the stored one.
    pub token: Option<String>,
}

/// An OS notification, worded by the page from its message catalogue.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, TS)]
pub struct Notice {
    pub title: String,
    pub body: String,
}
