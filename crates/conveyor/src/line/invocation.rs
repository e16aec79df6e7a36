//! How the CLI is run for a step of the line: its session, worktree and environment, the
//! daemon's permissions and limits.

use std::path::PathBuf;
use std::time::Duration;

use crate::claude::Invocation;
use crate::state::Shared;
use crate::store::{LineRow, StepRow};

use super::folder::{journal_path, plan_path};

fn agent_env(
    sh: &Shared,
    line: &LineRow,
    step: &StepRow,
) -> std::collections::BTreeMap<String, String> {
    let mut env = sh.agent_base_env();
    env.insert(
        "CONVEYOR_JOURNAL".into(),
        journal_path(sh, &line.id).to_string_lossy().into_owned(),
    );
    env.insert(
        "CONVEYOR_PLAN".into(),
        plan_path(sh, &line.id).to_string_lossy().into_owned(),
    );
    env.extend(sh.command_env(&line.id));
    env.insert("CONVEYOR_STEP".into(), step.id.clone());
    env
}

/// How the CLI is run for every attempt of the step: the line's session, worktree and
/// environment, the daemon's permissions and limits. An attempt adds its prompt, its
/// `--resume`, its hook's settings, its budget cap and its log.
pub(super) fn invocation(sh: &Shared, line: &LineRow, step: &StepRow) -> Invocation {
    let bypass = sh.cfg.permission_mode == "bypassPermissions";
    Invocation {
        claude_bin: sh.cfg.claude_bin.clone(),
        cwd: PathBuf::from(line.worktree.clone().unwrap_or_default()),
        prompt: String::new(),
        session_id: line.session_id.clone(),
        resume: false,
        settings: PathBuf::new(),
        permission_mode: sh.cfg.permission_mode.clone(),
        allowed_tools: sh.cfg.allowed_tools.clone(),
        tools: None,
        agent: None,
        agents: None,
        add_dir: (!bypass).then(|| sh.line_dir(&line.id)),
        model: sh.cfg.model.clone(),
        env: agent_env(sh, line, step),
        user: sh.agent_user.as_ref().map(|u| (u.uid, u.gid)),
        inherit_env: sh.cfg.agent_env_inherit,
        max_budget_usd: None,
        log: PathBuf::new(),
        timeout: Duration::from_secs(sh.cfg.step_timeout_secs),
        wrap: None,
    }
}
