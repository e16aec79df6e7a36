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

mod daemon;
mod evening;
mod lines;
mod night;
mod projects;
mod server;
mod text;

pub use daemon::{Daemon, token_origin};
pub use evening::Evening;
pub use lines::{AddLinesArgs, CancelLineArgs, LineArgs, ListLinesArgs, SetPriorityArgs};
pub use projects::AddProjectArgs;
pub use server::{INSTRUCTIONS, serve};
