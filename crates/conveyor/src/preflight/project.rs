//! A project's items: its repository, its main branch, its checkout, where its tests live,
//! and its own `preflight` commands from `.conveyor.toml` on main.

use std::path::{Path, PathBuf};
use std::time::Duration;

use conveyor_api::{PreflightCode as Code, PreflightItem, PreflightLevel as Level};

use super::context::Context;
use super::item::{for_project, item, ok};
use crate::config::Checklist;
use crate::error::Result;
use crate::exec::{self, Spec};
use crate::git;
use crate::store::ProjectRow;

/// A project's repository, its main branch, its checkout, and its own `preflight` commands.
pub(super) async fn project(sh: &Context<'_>, p: &ProjectRow) -> Vec<PreflightItem> {
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
    items.extend(super::telegram::items(sh, repo, main, &list).await);
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
