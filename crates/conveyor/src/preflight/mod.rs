//! The preflight: what would stop lines from running, found before a night is lost rather than
//! one failed line at a time. It runs at start, every `preflight_interval_secs`, and on
//! `GET /api/preflight`; while an item blocks, the scheduler starts nothing it blocks and the
//! lines say why (`reason_code: preflight`), and they go on by themselves once it clears.
//!
//! Each check is a small function of what it observed, so the judgement (which level, which
//! words, which fix) is tested without the world it looks at; [`run`] gathers the
//! observations: the agent CLI and bubblewrap (the agents' sandbox) run as the agent runs
//! (same user, same environment), git, the data folder, each project's repository and its
//! own `preflight` commands.

mod context;
mod daemon;
mod item;
mod project;
mod report;
mod sandbox;
mod telegram;

pub use context::Context;
pub use daemon::{
    DISK_BLOCKING_BYTES, DISK_WARNING_BYTES, agent_binary, agent_login, catcher_item, data_dir,
    disk_space, git_found, judge_hooks, root_guard, vault,
};
pub use project::{project_command, tests_paths};
pub use report::{Report, render};

use conveyor_api::PreflightCode as Code;

use crate::error::Result;
use crate::exec::{self, Spec};
use crate::store::{self, now_ms};
use context::{AGENT_TIMEOUT, agent};
use daemon::{catcher, free_bytes, planfix};
use item::ok;
use project::project;

/// Runs every check now.
///
/// # Errors
/// Database errors (reading the projects); a check that cannot run is an item, not an error.
pub async fn run(sh: &Context<'_>) -> Result<Report> {
    let cfg = sh.cfg;
    let config_file = cfg.file.as_deref().map_or_else(
        || "the daemon's config".to_string(),
        |p| p.display().to_string(),
    );
    let mut items = Vec::new();
    let version = agent(sh, &["--version"]).await;
    let found = version.as_ref().is_ok_and(|o| o.code == Some(0));
    items.push(agent_binary(&cfg.claude_bin, &version, &config_file));
    if found {
        let status = agent(sh, &["auth", "status"]).await;
        items.push(agent_login(&status));
    }
    items.push(root_guard(
        exec::is_root(),
        sh.root_mode,
        &cfg.permission_mode,
        &config_file,
    ));
    let git_version = exec::run(
        &Spec::new("git", &cfg.data_dir).args(["--version"]),
        AGENT_TIMEOUT,
        sh.cancel,
    )
    .await;
    items.push(judge_hooks(
        crate::judge::hook_bin(cfg).as_deref(),
        &config_file,
    ));
    items.push(git_found(&git_version));
    items.push(sandbox::sandbox(sh, &config_file).await);
    items.push(ok(
        Code::GitIdentity,
        format!(
            "checkpoint and merge commits are made as {} <{}> where a repository has no identity of its own",
            cfg.git_name, cfg.git_email
        ),
    ));
    items.push(data_dir(&cfg.data_dir));
    items.push(disk_space(&cfg.data_dir, free_bytes(&cfg.data_dir)));
    items.push(catcher(cfg, &config_file).await);
    items.push(planfix(cfg, &config_file));
    if let Some(v) = &cfg.vault
        && let Some(check) = &v.check
    {
        let out = exec::run(&Spec::shell(check, &cfg.data_dir), AGENT_TIMEOUT, sh.cancel).await;
        items.push(vault(check, &out));
    }
    let projects = store::projects::all(&mut *sh.store.conn().await?).await?;
    for p in &projects {
        items.extend(project(sh, p).await);
    }
    Ok(Report {
        checked_at_ms: now_ms(),
        items,
    })
}

#[cfg(test)]
mod tests;
