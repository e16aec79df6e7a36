//! Dead ends stop the line with a clear reason, and the daemon goes on; the budget holds a
//! step that does not fit.

use conveyor_api::{
    LineState, PreflightCode, PreflightLevel, PreflightScope, ReasonCode, StepState,
};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_claude_binary_holds_every_line_with_the_reason_and_the_daemon_goes_on() {
    let mut d = Daemon::start().await;
    let c = d.client();
    let a = d.line("a", "x").await.id;
    let l = wait_for(30, "line a to say why it waits", || async {
        let l = c.line(&a).await.ok()?;
        (l.line.reason_code == Some(ReasonCode::Preflight)).then_some(l)
    })
    .await;
    // Not failed one by one: the line waits, no step was tried, and the preflight says why.
    assert_eq!(l.line.state, LineState::Queued);
    let reason = l.line.reason.unwrap();
    assert!(
        reason.starts_with("waiting: the agent CLI cannot be started"),
        "{reason}"
    );
    assert!(
        l.line.steps.iter().all(|s| s.attempts == 0),
        "{:?}",
        l.line.steps
    );
    let p = c.preflight().await.unwrap();
    assert!(p.blocking);
    let item = p
        .items
        .iter()
        .find(|i| i.code == PreflightCode::AgentBinary)
        .unwrap();
    assert_eq!(
        (item.level, item.scope),
        (PreflightLevel::Blocking, PreflightScope::Daemon)
    );
    assert!(
        item.fix.as_deref().unwrap().contains("claude_bin"),
        "{item:?}"
    );
    // The daemon goes on serving and the next line waits the same way.
    let b = d.line("b", "x").await.id;
    assert_eq!(c.line(&b).await.unwrap().line.state, LineState::Queued);
    assert_eq!(c.health().await.unwrap().status, "ok");
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_cli_not_logged_in_holds_the_lines_before_any_step() {
    // No login, and nowhere real to reach: the API base is a closed loopback port and every
    // optional traffic is off, as in the other tests.
    let mut d = Daemon::builder().not_logged_in().start().await;
    let a = d.line("a", "x").await.id;
    let l = wait_for(60, "line a to say why it waits", || async {
        let l = d.client().line(&a).await.ok()?;
        (l.line.reason_code == Some(ReasonCode::Preflight)).then_some(l)
    })
    .await;
    assert_eq!(
        l.line.reason.as_deref(),
        Some("waiting: claude is not logged in (authMethod none)")
    );
    assert!(l.line.steps.iter().all(|s| s.attempts == 0));
    d.stop().await;
}

/// A fake `claude` that answers `auth status` as the real one does when not logged in, until
/// `flag` exists; everything else goes to the real CLI.
fn login_switch(dir: &std::path::Path, flag: &std::path::Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("claude-login-switch");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nif [ \"$1\" = auth ] && [ \"$2\" = status ] && [ ! -e '{flag}' ]; then\n  echo '{{\"loggedIn\": false, \"authMethod\": \"none\"}}'\n  exit 1\nfi\nexec '{real}' \"$@\"\n",
            flag = flag.display(),
            real = claude_bin().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_waits_while_the_agent_is_not_logged_in_and_runs_once_it_is() {
    let tmp = tempfile::tempdir().unwrap();
    let flag = tmp.path().join("logged-in");
    let fake = login_switch(tmp.path(), &flag);
    let mut d = Daemon::builder().mock().claude_bin(&fake).start().await;
    let (c, mock) = (d.client(), d.mock());
    let line = d.line("after login", "x").await;
    let plan = serde_json::json!({"steps": [{"title": "write", "task": "x", "checks": []}]});
    mock.script(
        &line.session_id,
        serde_json::json!({"1": [write_plan(&plan), text("planned")], "2": [write("b.txt", "b\n"), text("done")]}),
    )
    .await;
    let l = wait_for(60, "the line to say it waits for the login", || async {
        let l = c.line(&line.id).await.ok()?;
        (l.line.reason_code == Some(ReasonCode::Preflight)).then_some(l)
    })
    .await;
    assert_eq!(l.line.state, LineState::Queued);
    assert_eq!(
        l.line.reason.as_deref(),
        Some("waiting: claude is not logged in (authMethod none)")
    );
    let p = c.preflight().await.unwrap();
    let login = p
        .items
        .iter()
        .find(|i| i.code == PreflightCode::AgentLogin)
        .unwrap();
    assert_eq!(login.level, PreflightLevel::Blocking);
    // Nothing started: no request reached the API, no step was tried.
    assert!(mock.requests(&line.session_id).await.is_empty());
    assert!(l.line.steps.iter().all(|s| s.attempts == 0));

    // Logged in now: the next preflight (here asked for, as pult's Check does) lets the line
    // go on in the same daemon, no restart.
    std::fs::write(&flag, "").unwrap();
    let p = c.preflight().await.unwrap();
    assert!(!p.blocking, "{p:?}");
    let login = p
        .items
        .iter()
        .find(|i| i.code == PreflightCode::AgentLogin)
        .unwrap();
    assert_eq!(login.message, "claude is logged in (api_key)");
    let done = wait_state(c, &line.id, LineState::AwaitingAcceptance, 120).await;
    assert_eq!(done.line.reason_code, None);
    assert!(!mock.requests(&line.session_id).await.is_empty());
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_that_does_not_fit_the_window_waits_at_its_checkpoint() {
    let mut d = Daemon::builder()
        .config("[budget]\nthreshold_usd = 0.5\ndefault_estimate_usd = 1.0\n")
        .mock()
        .start()
        .await;
    let a = d.line("a", "x").await.id;
    let l = wait_state(d.client(), &a, LineState::WaitingBudget, 30).await;
    assert!(l.line.reason.unwrap().contains("threshold"));
    assert!(l.line.park_until.is_some());
    assert_eq!(l.line.reason_code, Some(ReasonCode::Budget));
    // Nothing ran: no step was tried.
    assert!(l.line.steps.iter().all(|s| s.attempts == 0));
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checks_still_red_after_three_hook_rounds_fail_the_step_with_what_stayed_red() {
    let mut d = Daemon::builder().mock().start().await;
    let c = d.client();
    let id = d.line("stubborn", "x").await.id;
    let session = c.line(&id).await.unwrap().line.session_id;
    let plan = serde_json::json!({"steps": [{"title": "never", "task": "x", "checks": [{"cmd": "test -f never.txt"}]}]});
    // The model keeps claiming it is done without doing anything.
    d.mock()
        .script(
            &session,
            serde_json::json!({"1": [write_plan(&plan), text("planned")], "2": []}),
        )
        .await;
    let l = wait_state(c, &id, LineState::NeedsHuman, 120).await;
    let reason = l.line.reason.unwrap();
    assert!(
        reason.contains("still red after 3 Stop-hook round(s)"),
        "{reason}"
    );
    assert!(reason.contains("test -f never.txt"), "{reason}");
    assert_eq!(l.line.steps[1].state, StepState::Failed);
    // One answer plus one per block.
    let step2 = d
        .mock()
        .requests(&session)
        .await
        .into_iter()
        .filter(|e| e["step"] == 2)
        .count();
    assert_eq!(step2, 4);
    d.stop().await;
}

/// An external service down is nobody's fault: the line waits at the gate and tries again, no
/// fixer, no failed round; once the service is back it merges.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_external_service_down_makes_the_line_wait_never_fail() {
    let svc = tempfile::tempdir().unwrap();
    let toml = format!(
        "checklist = [{{ cmd = \"test -f {}/up || {{ echo 'curl: (7) connection refused: svc.example'; exit 7; }}\" }}]\nexternal_errors = [\"connection refused\"]\n",
        svc.path().display()
    );
    let d = Daemon::builder()
        .files(&[("a.txt", "a\n"), (".conveyor.toml", &toml)])
        .config("preflight_interval_secs = 1")
        .mock()
        .start()
        .await;
    let (c, mock) = (d.client(), d.mock());
    let l = d.line("net", "a change").await;
    let plan = serde_json::json!({"level": "light", "steps": [{"title": "change", "task": "change", "checks": [{"cmd": "true"}]}]});
    mock.script(
        &l.session_id,
        serde_json::json!({"1": [write_plan(&plan), text("planned")], "2": [write("b.txt", "b\n"), text("done")]}),
    )
    .await;
    let waiting = wait_for(120, "the line to wait for the service", || async {
        let l = c.line(&l.id).await.ok()?;
        (l.line.reason_code == Some(ReasonCode::ExternalDown)).then_some(l)
    })
    .await;
    assert_eq!(waiting.line.state, LineState::Gate);
    assert!(waiting.line.park_until.is_some());
    assert!(
        waiting
            .line
            .reason
            .as_deref()
            .unwrap()
            .contains("connection refused"),
        "{:?}",
        waiting.line.reason
    );
    // It tried again, and again: still waiting, no fixer, no round spent.
    wait_for(30, "another try", || async {
        let now = c.line(&l.id).await.ok()?;
        (now.line.park_until != waiting.line.park_until).then_some(())
    })
    .await;
    let still = c.line(&l.id).await.unwrap();
    assert_eq!((still.line.state, still.line.rounds), (LineState::Gate, 0));
    assert!(
        still
            .line
            .steps
            .iter()
            .all(|s| s.kind != conveyor_api::StepKind::Fixer),
        "{:#?}",
        still.line.steps
    );
    std::fs::write(svc.path().join("up"), "").unwrap();
    wait_state(c, &l.id, LineState::AwaitingAcceptance, 120).await;
}

/// Someone's uncommitted work in the project's checkout holds the line's merge (the line keeps
/// its project and its place, saying why) until the checkout is clean; then it merges.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dirty_checkout_of_main_holds_the_merge_until_it_is_clean() {
    let d = Daemon::builder()
        .files(&[("a.txt", "a\n")])
        .config("preflight_interval_secs = 1")
        .mock()
        .start()
        .await;
    let (c, mock) = (d.client(), d.mock());
    // Anton's own edit, not committed.
    std::fs::write(d.repo().join("a.txt"), "Anton's work in progress\n").unwrap();
    let l = d.line("b", "add b").await;
    let plan = serde_json::json!({"level": "light", "steps": [{"title": "b", "task": "b", "checks": [{"cmd": "true"}]}]});
    mock.script(
        &l.session_id,
        serde_json::json!({"1": [write_plan(&plan), text("planned")], "2": [write("b.txt", "b\n"), text("done")]}),
    )
    .await;
    let held = wait_for(120, "the merge to wait for the checkout", || async {
        let l = c.line(&l.id).await.ok()?;
        (l.line.state == LineState::Merging
            && matches!(
                l.line.reason_code,
                Some(ReasonCode::DirtyCheckout | ReasonCode::Preflight)
            ))
        .then_some(l)
    })
    .await;
    assert!(
        held.line.reason.as_deref().unwrap().contains("a.txt")
            || held.line.reason.as_deref().unwrap().contains("uncommitted"),
        "{:?}",
        held.line.reason
    );
    // Nothing of Anton's was touched, and main did not move.
    assert_eq!(
        std::fs::read_to_string(d.repo().join("a.txt")).unwrap(),
        "Anton's work in progress\n"
    );
    assert!(!git(d.repo(), &["log", "--format=%s", "main"]).contains("Merge line/"));
    git(d.repo(), &["checkout", "--", "a.txt"]);
    wait_state(c, &l.id, LineState::AwaitingAcceptance, 120).await;
    assert!(
        d.repo().join("b.txt").exists(),
        "the clean checkout was brought along"
    );
}

/// The CLI's `~/.claude.json` cut by a run killed mid-write (seen in the kill -9 storm): the
/// real CLI then refuses every run until the file is repaired. The daemon puts back the newest
/// backup the CLI kept, after the first run that says so, and the step's next attempt runs.
#[tokio::test(flavor = "multi_thread")]
async fn a_broken_cli_config_is_put_back_from_its_backup_and_the_line_goes_on() {
    let d = Daemon::builder().mock().start().await;
    let home = d.agent_home();
    let backups = home.join(".claude/backups");
    std::fs::create_dir_all(&backups).unwrap();
    std::fs::write(
        backups.join(".claude.json.backup.1796391977534"),
        r#"{"numStartups": 2, "kept": "from the backup"}"#,
    )
    .unwrap();
    let config = home.join(".claude.json");
    std::fs::write(
        &config,
        "{\"numStartups\": 2,\n  \"projects\": {\"/x\": {\"allowedTo",
    )
    .unwrap();
    let (c, mock) = (d.client(), d.mock());
    let line = d.line("broken config", "x").await;
    let plan = serde_json::json!({"steps": [{"title": "write", "task": "x", "checks": []}]});
    mock.script(
        &line.session_id,
        serde_json::json!({"1": [write_plan(&plan), text("planned")], "2": [write("b.txt", "b\n"), text("done")]}),
    )
    .await;
    let done = wait_state(c, &line.id, LineState::AwaitingAcceptance, 180).await;
    let planner = &done.line.steps[0];
    assert_eq!(
        planner.attempts, 2,
        "one attempt met the broken file: {done:#?}"
    );
    let text = std::fs::read_to_string(&config).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["kept"], "from the backup", "{text}");
}
