use std::path::Path;

use conveyor_api::{PreflightItem, PreflightLevel as Level, PreflightScope as Scope};

use super::item::{for_project, item};
use super::*;
use crate::config::RootMode;
use crate::git;
use crate::store::ProjectRow;

/// A project that does not say where its tests live is warned, not blocked: the
/// before-deploy check is off for it.
#[test]
fn a_project_without_tests_paths_is_warned_that_the_test_check_is_off() {
    let i = tests_paths(&[]);
    assert_eq!((i.code, i.level), (Code::TestsPaths, Level::Warning));
    assert!(i.fix.unwrap().contains("tests_paths = ["));
    let i = tests_paths(&["tests/**".to_string()]);
    assert_eq!(i.level, Level::Ok);
    assert!(i.message.contains("tests/**"), "{}", i.message);
}

fn out(code: Option<i32>, stdout: &str) -> Result<exec::Output> {
    Ok(exec::Output {
        code,
        stdout: stdout.into(),
        stderr: String::new(),
        timed_out: false,
        cancelled: false,
    })
}

fn spawn_error() -> Result<exec::Output> {
    Err(crate::error::Error::Spawn {
        program: "claude".into(),
        source: std::io::Error::from(std::io::ErrorKind::NotFound),
    })
}

#[test]
fn the_agent_binary_is_found_or_blocks_with_the_config_to_fix() {
    let bin = Path::new("/opt/claude");
    let i = agent_binary(bin, &out(Some(0), "2.1.332 (Claude Code)\n"), "c.toml");
    assert_eq!(
        (i.level, i.message.as_str()),
        (Level::Ok, "/opt/claude 2.1.332 (Claude Code)")
    );
    let i = agent_binary(bin, &spawn_error(), "c.toml");
    assert_eq!((i.level, i.scope), (Level::Blocking, Scope::Daemon));
    assert!(i.message.contains("cannot be started"), "{}", i.message);
    assert!(i.fix.unwrap().contains("claude_bin in c.toml"));
    let i = agent_binary(bin, &out(Some(127), "boom"), "c.toml");
    assert_eq!(i.level, Level::Blocking);
    assert!(
        i.message.contains("exit 127") && i.message.contains("boom"),
        "{}",
        i.message
    );
}

#[test]
fn the_login_is_read_from_auth_status_whatever_its_exit_code() {
    // As observed from claude 2.1.332 (docs/conveyor.md): exit 0 logged in, 1 not.
    let i = agent_login(&out(
        Some(0),
        r#"{"loggedIn": true, "authMethod": "api_key"}"#,
    ));
    assert_eq!(
        (i.level, i.message.as_str()),
        (Level::Ok, "claude is logged in (api_key)")
    );
    let i = agent_login(&out(
        Some(1),
        r#"{"loggedIn": false, "authMethod": "none"}"#,
    ));
    assert_eq!(i.level, Level::Blocking);
    assert_eq!(i.message, "claude is not logged in (authMethod none)");
    assert!(i.fix.unwrap().contains("/login"));
    // An answer that cannot be read is a warning, not a block: the steps will tell.
    let i = agent_login(&out(Some(0), "Usage: claude …"));
    assert_eq!(i.level, Level::Warning);
    assert!(i.message.contains("Usage: claude"), "{}", i.message);
    assert_eq!(agent_login(&spawn_error()).level, Level::Warning);
}

#[test]
fn root_blocks_only_where_the_cli_would_refuse() {
    let user = RootMode::User("conveyor".into());
    let bypass = "bypassPermissions";
    assert_eq!(
        root_guard(false, &RootMode::None, bypass, "c").level,
        Level::Ok
    );
    assert_eq!(root_guard(true, &user, bypass, "c").level, Level::Ok);
    let i = root_guard(true, &RootMode::Sandbox, bypass, "c.toml");
    assert_eq!(i.level, Level::Warning);
    assert!(
        i.fix
            .unwrap()
            .contains(r#"root_mode = { user = "conveyor" } in c.toml"#)
    );
    assert_eq!(
        root_guard(true, &RootMode::None, bypass, "c").level,
        Level::Blocking
    );
    assert_eq!(
        root_guard(true, &RootMode::None, "acceptEdits", "c").level,
        Level::Warning
    );
}

#[test]
fn a_missing_hook_binary_is_a_warning_that_names_the_key() {
    let d = tempfile::tempdir().unwrap();
    let i = judge_hooks(None, "/etc/conveyor/conveyor.toml");
    assert_eq!((i.code, i.level), (Code::JudgeHooks, Level::Warning));
    assert!(i.fix.unwrap().contains("hook_bin"));
    let gone = judge_hooks(Some(&d.path().join("conveyord")), "c");
    assert_eq!(gone.level, Level::Warning);
    let bin = d.path().join("conveyord");
    std::fs::write(&bin, "").unwrap();
    assert_eq!(judge_hooks(Some(&bin), "c").level, Level::Ok);
}

#[test]
fn git_must_be_there() {
    assert_eq!(
        git_found(&out(Some(0), "git version 2.47.3\n")).message,
        "git version 2.47.3"
    );
    assert_eq!(git_found(&spawn_error()).level, Level::Blocking);
}

#[test]
fn the_data_folder_must_take_a_file() {
    let d = tempfile::tempdir().unwrap();
    assert_eq!(data_dir(d.path()).level, Level::Ok);
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "the probe is removed"
    );
    // A file where the folder should be (root writes through permissions).
    let f = d.path().join("file");
    std::fs::write(&f, "").unwrap();
    let i = data_dir(&f);
    assert_eq!(i.level, Level::Blocking);
    assert!(i.message.contains("not writable"), "{}", i.message);
}

#[test]
fn free_space_warns_then_blocks() {
    let d = Path::new("/data");
    assert_eq!(disk_space(d, Some(DISK_WARNING_BYTES)).level, Level::Ok);
    let i = disk_space(d, Some(DISK_WARNING_BYTES - 1));
    assert_eq!(i.level, Level::Warning);
    assert!(i.message.starts_with("5119 MiB free"), "{}", i.message);
    assert_eq!(
        disk_space(d, Some(DISK_BLOCKING_BYTES - 1)).level,
        Level::Blocking
    );
    assert_eq!(disk_space(d, None).level, Level::Ok);
    assert!(free_bytes(&std::env::temp_dir()).is_some_and(|b| b > 0) || cfg!(not(unix)));
}

#[test]
fn a_project_command_is_judged_by_its_exit_code() {
    assert_eq!(
        project_command("true", 0, &out(Some(0), "")).level,
        Level::Ok
    );
    let i = project_command("npx playwright --version", 0, &out(Some(1), "not found"));
    assert_eq!(i.level, Level::Blocking);
    assert!(i.message.contains("exit 1 instead of exit 0") && i.message.contains("not found"));
    assert_eq!(project_command("x", 3, &out(Some(3), "")).level, Level::Ok);
    assert!(
        project_command("x", 0, &out(None, ""))
            .message
            .contains("no exit code")
    );
}

fn report(items: Vec<PreflightItem>) -> Report {
    Report {
        checked_at_ms: 0,
        items,
    }
}

#[test]
fn what_blocks_what() {
    let p = ProjectRow {
        id: "p".into(),
        name: "p".into(),
        repo_path: "/r".into(),
        main_branch: "main".into(),
        created_at: 0,
    };
    let login = item(Code::AgentLogin, Level::Blocking, "no login".into(), None);
    let dirty = for_project(
        item(Code::CleanCheckout, Level::Blocking, "dirty".into(), None),
        &p,
    );
    let gone = for_project(
        item(Code::Repository, Level::Blocking, "gone".into(), None),
        &p,
    );
    let r = report(vec![dirty.clone()]);
    assert!(r.blocks_steps().is_none() && r.blocks_project("p").is_none());
    assert_eq!(r.blocks_merge("p"), Some(&dirty));
    assert!(r.blocks_merge("q").is_none());
    assert!(r.to_api().blocking);
    let r = report(vec![login.clone(), gone.clone()]);
    assert_eq!(r.blocks_steps(), Some(&login));
    assert_eq!(r.blocks_project("p"), Some(&gone));
    let warn = item(Code::RootGuard, Level::Warning, "root".into(), None);
    let r = report(vec![warn]);
    assert!(r.blocks_steps().is_none() && !r.to_api().blocking);
    assert!(r.same_outcome(&Report {
        checked_at_ms: 99,
        ..r.clone()
    }));
}

#[tokio::test]
async fn a_dirty_checkout_of_main_is_found_and_another_branch_is_not_dirty() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path();
    git::testing::repo_with_main(repo).await;
    assert_eq!(
        git::checkout_of(repo, "main").await.unwrap(),
        git::Checkout::Clean
    );
    std::fs::write(repo.join("a.txt"), "changed\n").unwrap();
    let git::Checkout::Dirty(detail) = git::checkout_of(repo, "main").await.unwrap() else {
        panic!("a changed tracked file is a dirty checkout");
    };
    assert!(detail.contains("a.txt"), "{detail}");
    git::testing::run(repo, &["checkout", "-q", "-b", "other"]).await;
    assert_eq!(
        git::checkout_of(repo, "main").await.unwrap(),
        git::Checkout::NotCheckedOut
    );
}
