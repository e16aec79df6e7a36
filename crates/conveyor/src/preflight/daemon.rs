//! The daemon's own items: the agent CLI and its login, the root guard, the judge's hooks,
//! git, the data folder and its free space, the Catcher, PlanFix and the vault. Each is judged
//! by a small function of what was observed, so the judgement is tested without the world.

use std::path::Path;

use conveyor_api::{PreflightCode as Code, PreflightItem, PreflightLevel as Level};

use super::item::{item, ok};
use crate::config::{Config, RootMode};
use crate::error::Result;
use crate::exec;

/// Free space below which new worktrees may fail: blocking.
pub const DISK_BLOCKING_BYTES: u64 = 512 << 20;
/// Free space below which a night of worktrees and logs may run out: a warning.
pub const DISK_WARNING_BYTES: u64 = 5 << 30;

/// The Catcher: configured, its token readable, its bot answering `getMe`.
pub(super) async fn catcher(cfg: &Config, config_file: &str) -> PreflightItem {
    let Some(c) = &cfg.catcher else {
        return item(
            Code::Catcher,
            Level::Warning,
            "the Catcher is not configured: nothing reaches Anton outside the app".into(),
            Some(format!(
                "add [catcher] bot_token_file and chat_id to {config_file}"
            )),
        );
    };
    let me = match crate::config::read_secret(&c.bot_token_file, "catcher.bot_token_file") {
        Ok(token) => crate::tell::telegram::Bot::new(&c.api_base, &token)
            .get_me()
            .await
            .map_err(|e| e.to_string()),
        Err(e) => Err(e),
    };
    catcher_item(c.chat_id, &me)
}

/// The Catcher's item from what `getMe` said.
pub fn catcher_item(chat_id: i64, me: &std::result::Result<String, String>) -> PreflightItem {
    match me {
        Ok(name) => ok(
            Code::Catcher,
            format!("the Catcher sends as @{name} to chat {chat_id}"),
        ),
        Err(e) => item(
            Code::Catcher,
            Level::Warning,
            format!("the Catcher cannot reach its bot: {e}; messages wait in the outbox"),
            Some("check catcher.bot_token_file (one line, mode 0600) and catcher.api_base".into()),
        ),
    }
}

/// PlanFix: configured and its token readable (posting is the only call: nothing is written
/// to check it).
pub(super) fn planfix(cfg: &Config, config_file: &str) -> PreflightItem {
    let Some(p) = &cfg.planfix else {
        return ok(
            Code::Planfix,
            format!(
                "PlanFix is not configured: lines that name a task get no report ([planfix] in {config_file})"
            ),
        );
    };
    match crate::config::read_secret(&p.token_file, "planfix.token_file") {
        Ok(_) => ok(
            Code::Planfix,
            format!("PlanFix reports go to {}", p.base_url),
        ),
        Err(e) => item(
            Code::Planfix,
            Level::Warning,
            format!("PlanFix reports cannot be sent: {e}; they wait in the outbox"),
            Some("put the REST API token in planfix.token_file (one line, mode 0600)".into()),
        ),
    }
}

/// The vault's check: open, or closed (steps that need memory wait; nothing else).
pub fn vault(check: &str, out: &Result<exec::Output>) -> PreflightItem {
    match out {
        Ok(o) if o.code == Some(0) => ok(Code::Vault, format!("the vault is open (`{check}`)")),
        _ => item(
            Code::Vault,
            Level::Warning,
            format!("the vault is closed (`{check}` failed): steps that need memory wait for it"),
            Some("open the vault; the lines go on by themselves within a minute".into()),
        ),
    }
}

/// `claude --version`: found, and which version; or why it cannot be run.
pub fn agent_binary(
    bin: &Path,
    version: &Result<exec::Output>,
    config_file: &str,
) -> PreflightItem {
    let fix = format!(
        "install the CLI where the agent's user finds it (npm i -g @anthropic-ai/claude-code), or set claude_bin in {config_file}"
    );
    match version {
        Ok(o) if o.code == Some(0) => ok(
            Code::AgentBinary,
            format!("{} {}", bin.display(), o.stdout.trim()),
        ),
        Ok(o) => item(
            Code::AgentBinary,
            Level::Blocking,
            format!(
                "{} --version failed ({}): {}",
                bin.display(),
                o.code
                    .map_or("no exit code".into(), |c| format!("exit {c}")),
                o.tail(300)
            ),
            Some(fix),
        ),
        Err(e) => item(
            Code::AgentBinary,
            Level::Blocking,
            format!("the agent CLI cannot be started: {e}"),
            Some(fix),
        ),
    }
}

/// `claude auth status` (JSON, exit 0 logged in, 1 not): logged in, by which method.
pub fn agent_login(status: &Result<exec::Output>) -> PreflightItem {
    let fix = "log in as the agent's user (`claude` then /login), or give the agent ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN in agent_env".to_string();
    let parsed = status.as_ref().ok().and_then(|o| {
        serde_json::from_str::<serde_json::Value>(o.stdout.trim())
            .ok()
            .filter(|v| v.get("loggedIn").is_some())
    });
    match parsed {
        Some(v) if v["loggedIn"] == true => ok(
            Code::AgentLogin,
            format!(
                "claude is logged in ({})",
                v["authMethod"].as_str().unwrap_or("unknown method")
            ),
        ),
        Some(v) => item(
            Code::AgentLogin,
            Level::Blocking,
            format!(
                "claude is not logged in (authMethod {})",
                v["authMethod"].as_str().unwrap_or("unknown")
            ),
            Some(fix),
        ),
        None => item(
            Code::AgentLogin,
            Level::Warning,
            format!(
                "`claude auth status` gave no answer to read: {}",
                match status {
                    Ok(o) => o.tail(300),
                    Err(e) => e.to_string(),
                }
            ),
            Some("run `claude auth status` as the agent's user to see why".into()),
        ),
    }
}

/// Agents as root: the CLI refuses `bypassPermissions` as root unless it is told the machine
/// is a sandbox (`IS_SANDBOX=1`) or the agent runs as another user.
pub fn root_guard(
    is_root: bool,
    mode: &RootMode,
    permission_mode: &str,
    config_file: &str,
) -> PreflightItem {
    let user_fix = format!(
        "run the agents as a user of their own: root_mode = {{ user = \"conveyor\" }} in {config_file}"
    );
    match (is_root, mode) {
        (false, _) => ok(Code::RootGuard, "the daemon and its agents do not run as root".into()),
        (true, RootMode::User(u)) => ok(Code::RootGuard, format!("agents run as the user {u}, not root")),
        (true, RootMode::Sandbox) => item(
            Code::RootGuard,
            Level::Warning,
            "agents run as root with the CLI's root guard lifted (IS_SANDBOX=1): the machine itself is their sandbox".into(),
            Some(user_fix),
        ),
        (true, RootMode::None) if permission_mode == "bypassPermissions" => item(
            Code::RootGuard,
            Level::Blocking,
            "agents would run as root with bypassPermissions, which the CLI refuses".into(),
            Some(user_fix),
        ),
        (true, RootMode::None) => item(
            Code::RootGuard,
            Level::Warning,
            format!("agents run as root (permission mode {permission_mode})"),
            Some(user_fix),
        ),
    }
}

/// The binary a judge's hooks run.
pub fn judge_hooks(bin: Option<&Path>, config_file: &str) -> PreflightItem {
    match bin {
        Some(b) if b.is_file() => ok(
            Code::JudgeHooks,
            format!("a judge's hooks run {}", b.display()),
        ),
        found => item(
            Code::JudgeHooks,
            Level::Warning,
            match found {
                Some(b) => format!("hook_bin {} is not a file: a judge's verdict is checked only after its run, and its writes are not kept to the verdict", b.display()),
                None => "no conveyord binary found to run a judge's hooks: its verdict is checked only after its run, and its writes are not kept to the verdict".into(),
            },
            Some(format!("set hook_bin to the conveyord binary in {config_file}")),
        ),
    }
}

/// `git --version`.
pub fn git_found(version: &Result<exec::Output>) -> PreflightItem {
    match version {
        Ok(o) if o.code == Some(0) => ok(Code::Git, o.stdout.trim().to_string()),
        Ok(o) => item(
            Code::Git,
            Level::Blocking,
            format!("git --version failed: {}", o.tail(300)),
            Some("install git".into()),
        ),
        Err(e) => item(
            Code::Git,
            Level::Blocking,
            format!("git cannot be started: {e}"),
            Some("install git (apt install git)".into()),
        ),
    }
}

/// The data folder exists and takes a new file.
pub fn data_dir(dir: &Path) -> PreflightItem {
    let probe = dir.join(format!(".preflight-{}", uuid::Uuid::new_v4().simple()));
    match std::fs::write(&probe, b"") {
        Ok(()) => {
            let _ = std::fs::remove_file(&probe);
            ok(Code::DataDir, format!("{} is writable", dir.display()))
        }
        Err(e) => item(
            Code::DataDir,
            Level::Blocking,
            format!("{} is not writable: {e}", dir.display()),
            Some(format!(
                "give the daemon's user write access to {}, or set data_dir",
                dir.display()
            )),
        ),
    }
}

/// Free space where worktrees, logs and the database grow.
pub fn disk_space(dir: &Path, free: Option<u64>) -> PreflightItem {
    let Some(free) = free else {
        return ok(
            Code::DiskSpace,
            format!(
                "free space in {} is not measured on this platform",
                dir.display()
            ),
        );
    };
    let mib = free >> 20;
    let fix = Some(format!(
        "free space on the file system of {}",
        dir.display()
    ));
    if free < DISK_BLOCKING_BYTES {
        item(
            Code::DiskSpace,
            Level::Blocking,
            format!("{mib} MiB free in {}", dir.display()),
            fix,
        )
    } else if free < DISK_WARNING_BYTES {
        item(
            Code::DiskSpace,
            Level::Warning,
            format!("{mib} MiB free in {}", dir.display()),
            fix,
        )
    } else {
        ok(
            Code::DiskSpace,
            format!("{} GiB free in {}", free >> 30, dir.display()),
        )
    }
}

#[cfg(unix)]
pub(super) fn free_bytes(dir: &Path) -> Option<u64> {
    let s = nix::sys::statvfs::statvfs(dir).ok()?;
    // The counts are u64 on Linux and u32 on macOS.
    #[allow(clippy::useless_conversion)]
    Some(u64::from(s.blocks_available()) * u64::from(s.fragment_size()))
}

#[cfg(not(unix))]
pub(super) fn free_bytes(_dir: &Path) -> Option<u64> {
    None
}
