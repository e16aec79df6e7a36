//! One headless Claude Code run: `claude -p <prompt> --output-format stream-json --verbose`,
//! `--session-id` on a session's first run and `--resume` after. The output is streamed to a
//! log file and parsed as it comes: `system/init` (the session now exists), `rate_limit_event`
//! (recorded), and the LAST `result` (cost, error, session). `notes/claude-cli.md` has the
//! observed contract of CLI 2.1.332 that this follows.

mod config;
mod events;
mod invocation;
mod report;
mod resume;
mod run;

pub use config::{broken_config, repair as repair_config};
pub use invocation::{Invocation, Wrap};
pub use report::{Report, Verdict};
pub use resume::Resumer;
pub use run::{Signal, SignalFuture, run};
