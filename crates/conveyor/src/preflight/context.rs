//! What the checks look at (the daemon's config, how its agents run, its projects), and the
//! agent CLI run the way a step runs it.

use std::path::Path;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::config::{Config, RootMode};
use crate::error::Result;
use crate::exec::{self, AgentUser, Spec};
use crate::store::Store;

/// How long the agent CLI gets to say its version or its login.
pub(super) const AGENT_TIMEOUT: Duration = Duration::from_secs(30);

/// What the checks look at: the daemon's config, how its agents run, its projects.
#[derive(Debug)]
pub struct Context<'a> {
    pub cfg: &'a Config,
    pub root_mode: &'a RootMode,
    pub agent_user: Option<&'a AgentUser>,
    /// The agent's environment on top of the daemon's (as every step gets it).
    pub agent_env: std::collections::BTreeMap<String, String>,
    pub store: &'a Store,
    pub cancel: &'a CancellationToken,
    /// What Telegram last said of the test account's session (asked rarely, kept here).
    pub telegram_session: &'a crate::telegram::SessionMemo,
}

/// The agent CLI, run as a step runs it: the agent's user, environment and `PATH`.
pub(super) async fn agent(sh: &Context<'_>, args: &[&str]) -> Result<exec::Output> {
    as_agent(sh, &sh.cfg.claude_bin, &sh.cfg.data_dir, args).await
}

/// `program args…` in `cwd` as the agent runs: its user, environment and `PATH`.
pub(super) async fn as_agent(
    sh: &Context<'_>,
    program: &Path,
    cwd: &Path,
    args: &[&str],
) -> Result<exec::Output> {
    let mut spec = Spec::new(program, cwd).args(args.iter().copied());
    spec.env = sh.agent_env.clone();
    spec.user = sh.agent_user.map(|u| (u.uid, u.gid));
    spec.clear_env = !sh.cfg.agent_env_inherit;
    exec::run(&spec, AGENT_TIMEOUT, sh.cancel).await
}
