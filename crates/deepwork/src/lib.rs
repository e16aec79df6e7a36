//! deepwork: a tool loop whose transport is text.
//!
//! A web-chat model sees only what is in the message. deepwork lets it ask for more: the
//! model answers with request lines (`=== NEED: … ===`, `=== LIST: … ===`,
//! `=== FIND: … ===`), deepwork runs them read-only inside the project folder and sends the
//! results as the next message of the same chat, until the model answers without requests.
//! Files the model proposes (`=== FILE: … ===` blocks) are written only when the user says
//! so, the old version kept in `backup/`.
//!
//! One walk per run: the folder tree of the first message, LIST and FIND all read one
//! [`Index`] of the folder, checked for changes before each step (or the caller's own live
//! index, as pult passes).
//!
//! The core is synchronous and pushes [`Event`]s to a callback: the `deepwork` CLI, the pult
//! app and the tests all drive it the same way.

mod apply;
mod check;
mod config;
mod exec;
mod find;
mod index;
mod list;
mod par;
mod prompt;
mod protocol;
mod run;
mod sandbox;
mod selftest;
mod tools;
mod transport;
mod tree;
mod walk;

pub use apply::{ApplyError, Written, backup_stamp, write};
pub use check::{CheckItem, CheckKind, CheckReport, check};
pub use config::{
    BridgeConfig, Config, ConfigError, ConfigFile, DEFAULT_CHAT, DEFAULT_STEPS,
    DEFAULT_TIMEOUT_SECS, MAX_STEPS, OpenAiConfig, Overrides, TransportConfig, TransportKind,
    default_bridge, default_path,
};
pub use exec::Cancel;
pub use find::{Found, Hit, find};
pub use index::{Index, IndexStats, IndexedFile, Refreshed};
pub use list::{GlobError, Listed, list};
pub use prompt::{PromptError, Prompts};
pub use protocol::{Parsed, ProposedFile, Request, RequestKind, parse, replace_files};
pub use run::{Ask, Event, Loop, Outcome, RunError, Step, StepRequest, StopReason};
pub use sandbox::{BACKUP_DIR, Sandbox, SandboxError};
pub use selftest::{SelfCheck, run as selftest};
pub use tools::{Executed, Limits, RequestStat, execute};
pub use transport::{
    Bridge, OpenAi, Transport, TransportError, from_config as transport_from_config,
};
pub use tree::{TreeLimits, render as render_tree};
pub use walk::{IGNORE_FILE, files as walk_files};
