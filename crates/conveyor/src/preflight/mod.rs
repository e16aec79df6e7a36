//! The preflight: what would stop lines from running, found before a night is lost rather than
//! one failed line at a time. It runs at start, every `preflight_interval_secs`, and on
//! `GET /api/preflight`; while an item blocks, the scheduler starts nothing it blocks and the
//! lines say why (`reason_code: preflight`), and they go on by themselves once it clears.
//!
//! Each check is a small function of what it observed, so the judgement (which level, which
//! words, which fix) is tested without the world it looks at; [`run`] gathers the
//! observations: the agent CLI run as the agent runs (same user, same environment), git, the
//! data folder, each project's repository and its own `preflight` commands.

use std::path::{Path, PathBuf};
use std::time::Duration;

use conveyor_api::{
    Preflight, PreflightCode as Code, PreflightItem, PreflightLevel as Level,
    PreflightScope as Scope,
};
use tokio_util::sync::CancellationToken;

use crate::Result;
use crate::config::{Checklist, Config, RootMode};
use crate::exec::{self, AgentUser, Spec};
use crate::git;
use crate::store::{self, ProjectRow, Store, now_ms, rfc3339};

/// How long the agent CLI gets to say its version or its login.
const AGENT_TIMEOUT: Duration = Duration::from_secs(30);

/// Free space below which new worktrees may fail: blocking.
pub const DISK_BLOCKING_BYTES: u64 = 512 << 20;
/// Free space below which a night of worktrees and logs may run out: a warning.
pub const DISK_WARNING_BYTES: u64 = 5 << 30;

/// One run of every check.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub checked_at_ms: i64,
    pub items: Vec<PreflightItem>,
}

impl Report {
    /// The first item that stops every step: a daemon-scope blocking item.
    pub fn blocks_steps(&self) -> Option<&PreflightItem> {
        self.items
            .iter()
            .find(|i| i.level == Level::Blocking && i.scope == Scope::Daemon)
    }

    /// The first item that stops everything of `project_id` (its checkout aside, which stops
    /// only merges: [`Report::blocks_merge`]).
    pub fn blocks_project<'a>(&'a self, project_id: &'a str) -> Option<&'a PreflightItem> {
        self.of_project(project_id)
            .find(|i| i.level == Level::Blocking && i.code != Code::CleanCheckout)
    }

    /// What stops `project_id`'s merges: its checkout of main has uncommitted changes.
    pub fn blocks_merge<'a>(&'a self, project_id: &'a str) -> Option<&'a PreflightItem> {
        self.of_project(project_id)
            .find(|i| i.level == Level::Blocking && i.code == Code::CleanCheckout)
    }

    fn of_project<'a>(&'a self, project_id: &'a str) -> impl Iterator<Item = &'a PreflightItem> {
        self.items
            .iter()
            .filter(move |i| i.project_id.as_deref() == Some(project_id))
    }

    /// Whether two reports say the same (the time aside): a change is worth an event.
    pub fn same_outcome(&self, other: &Report) -> bool {
        self.items == other.items
    }

    pub fn to_api(&self) -> Preflight {
        Preflight {
            blocking: self.items.iter().any(|i| i.level == Level::Blocking),
            checked_at: rfc3339(self.checked_at_ms),
            items: self.items.clone(),
        }
    }
}

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
}

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

/// The Catcher: configured, its token readable, its bot answering `getMe`.
async fn catcher(cfg: &Config, config_file: &str) -> PreflightItem {
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
fn planfix(cfg: &Config, config_file: &str) -> PreflightItem {
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

/// The agent CLI, run as a step runs it: the agent's user, environment and `PATH`.
async fn agent(sh: &Context<'_>, args: &[&str]) -> Result<exec::Output> {
    let mut spec = Spec::new(&sh.cfg.claude_bin, &sh.cfg.data_dir).args(args.iter().copied());
    spec.env = sh.agent_env.clone();
    spec.user = sh.agent_user.map(|u| (u.uid, u.gid));
    spec.clear_env = !sh.cfg.agent_env_inherit;
    exec::run(&spec, AGENT_TIMEOUT, sh.cancel).await
}

fn ok(code: Code, message: String) -> PreflightItem {
    item(code, Level::Ok, message, None)
}

fn item(code: Code, level: Level, message: String, fix: Option<String>) -> PreflightItem {
    PreflightItem {
        code,
        level,
        scope: Scope::Daemon,
        project_id: None,
        message,
        fix,
    }
}

fn for_project(mut i: PreflightItem, project: &ProjectRow) -> PreflightItem {
    i.scope = Scope::Project;
    i.project_id = Some(project.id.clone());
    i
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

/// `git --version`.
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
fn free_bytes(dir: &Path) -> Option<u64> {
    let s = nix::sys::statvfs::statvfs(dir).ok()?;
    // The counts are u64 on Linux and u32 on macOS.
    #[allow(clippy::useless_conversion)]
    Some(u64::from(s.blocks_available()) * u64::from(s.fragment_size()))
}

#[cfg(not(unix))]
fn free_bytes(_dir: &Path) -> Option<u64> {
    None
}

/// A project's repository, its main branch, its checkout, and its own `preflight` commands.
async fn project(sh: &Context<'_>, p: &ProjectRow) -> Vec<PreflightItem> {
    let repo = PathBuf::from(&p.repo_path);
    let mut items = Vec::new();
    let fix_repo = Some(format!(
        "restore the repository at {}, or cancel the project's lines",
        repo.display()
    ));
    let is_repo = git::git(&repo, &["rev-parse", "--git-dir"], sh.cancel).await;
    if let Err(e) = is_repo {
        items.push(for_project(
            item(
                Code::Repository,
                Level::Blocking,
                format!("{}: {e}", repo.display()),
                fix_repo,
            ),
            p,
        ));
        return items;
    }
    items.push(for_project(
        ok(
            Code::Repository,
            format!("{} is a git repository", repo.display()),
        ),
        p,
    ));
    let main = match git::branch_head(&repo, &p.main_branch).await {
        Ok(head) => {
            items.push(for_project(
                ok(
                    Code::MainBranch,
                    format!("{} is at {}", p.main_branch, &head[..head.len().min(12)]),
                ),
                p,
            ));
            head
        }
        Err(e) => {
            items.push(for_project(
                item(
                    Code::MainBranch,
                    Level::Blocking,
                    format!("no branch {} in {}: {e}", p.main_branch, repo.display()),
                    Some(format!(
                        "create {} there, or re-add the project with its main branch",
                        p.main_branch
                    )),
                ),
                p,
            ));
            return items;
        }
    };
    items.push(for_project(
        match git::checkout_of(&repo, &p.main_branch).await {
            Ok(git::Checkout::Dirty(detail)) => item(
                Code::CleanCheckout,
                Level::Blocking,
                format!("{detail} (only this project's merges wait)"),
                Some(format!("commit or stash the changes in {}", repo.display())),
            ),
            Ok(git::Checkout::Clean) => ok(
                Code::CleanCheckout,
                format!("the checkout of {} is clean", p.main_branch),
            ),
            Ok(git::Checkout::NotCheckedOut) => ok(
                Code::CleanCheckout,
                format!(
                    "{} is not checked out in {}: merges touch no files there",
                    p.main_branch,
                    repo.display()
                ),
            ),
            Err(e) => item(
                Code::CleanCheckout,
                Level::Warning,
                format!("git status failed: {e}"),
                None,
            ),
        },
        p,
    ));
    items.extend(
        project_commands(sh, p, &repo, &main)
            .await
            .into_iter()
            .map(|i| for_project(i, p)),
    );
    items
}

/// The project's own items: `preflight = [{cmd, expect_exit}]` in `.conveyor.toml` on main,
/// run in the repository's folder (e.g. that Playwright's browser is installed).
async fn project_commands(
    sh: &Context<'_>,
    p: &ProjectRow,
    repo: &Path,
    main: &str,
) -> Vec<PreflightItem> {
    let text = match git::read_file_at(repo, main, ".conveyor.toml").await {
        Ok(Some(t)) => t,
        Ok(None) => return vec![tests_paths(&[])],
        Err(e) => {
            return vec![item(
                Code::ProjectCommand,
                Level::Warning,
                format!("reading .conveyor.toml on {}: {e}", p.main_branch),
                None,
            )];
        }
    };
    let list = match Checklist::parse(&text) {
        Ok(l) => l,
        Err(e) => {
            return vec![item(
                Code::ProjectCommand,
                Level::Blocking,
                format!(".conveyor.toml on {}: {e}", p.main_branch),
                Some("fix the project's .conveyor.toml on its main branch".into()),
            )];
        }
    };
    let mut items = vec![tests_paths(&list.tests_paths)];
    for check in &list.preflight {
        let mut spec = Spec::shell(&check.cmd, repo);
        spec.user = sh.agent_user.map(|u| (u.uid, u.gid));
        let timeout = Duration::from_secs(sh.cfg.command_timeout_secs);
        let out = exec::run(&spec, timeout, sh.cancel).await;
        items.push(project_command(&check.cmd, check.expect_exit, &out));
    }
    items
}

/// Whether the before-deploy check has a place to look for tests.
pub fn tests_paths(paths: &[String]) -> PreflightItem {
    if paths.is_empty() {
        return item(
            Code::TestsPaths,
            Level::Warning,
            "no tests_paths in .conveyor.toml: before deploy nothing asks whether the change was tested".into(),
            Some("say where the project's tests live: tests_paths = [\"tests/**\"] in .conveyor.toml on main".into()),
        );
    }
    ok(
        Code::TestsPaths,
        format!("tests live in {}", paths.join(", ")),
    )
}

/// One of a project's own `preflight` commands, judged by its exit code.
pub fn project_command(cmd: &str, expect_exit: i32, out: &Result<exec::Output>) -> PreflightItem {
    match out {
        Ok(o) if o.code == Some(expect_exit) => ok(Code::ProjectCommand, format!("`{cmd}` exits {expect_exit}")),
        Ok(o) => item(
            Code::ProjectCommand,
            Level::Blocking,
            format!(
                "`{cmd}` gave {} instead of exit {expect_exit}: {}",
                o.code.map_or("no exit code (timed out or killed)".into(), |c| format!("exit {c}")),
                o.tail(300)
            ),
            Some("make it pass on the daemon's machine (install what it checks), or change the project's .conveyor.toml".into()),
        ),
        Err(e) => item(Code::ProjectCommand, Level::Blocking, format!("`{cmd}` cannot be run: {e}"), None),
    }
}

/// The preflight as text for a terminal (`conveyord check`): one line per item, the fix
/// beneath what is not ok, and a last line saying whether anything blocks.
pub fn render(p: &Preflight) -> String {
    let mut out = String::new();
    for i in &p.items {
        let scope = i
            .project_id
            .as_deref()
            .map_or(String::new(), |id| format!(" [project {id}]"));
        out.push_str(&format!(
            "{:<8} {}{scope}: {}\n",
            i.level.as_str(),
            i.code.as_str(),
            i.message
        ));
        if let Some(fix) = &i.fix {
            out.push_str(&format!("         fix: {fix}\n"));
        }
    }
    out.push_str(if p.blocking {
        "something blocks: lines it concerns wait until it is fixed\n"
    } else {
        "nothing blocks\n"
    });
    out
}

#[cfg(test)]
mod tests;
