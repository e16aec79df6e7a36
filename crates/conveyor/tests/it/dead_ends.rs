//! Dead ends stop the line with a clear reason, and the daemon goes on; the budget holds a
//! step that does not fit.

use conveyor_api::{Client, LineState, NewLine, NewProject, StepState};

use crate::support::*;

async fn daemon_with(
    tmp: &std::path::Path,
    claude: &std::path::Path,
    env: Option<toml::Table>,
    extra: &str,
) -> (conveyor::ServerHandle, Client, String) {
    let repo = tmp.join("repo");
    make_repo(&repo, &[("a.txt", "a\n")]);
    let cfg = config(&tmp.join("data"), claude, env, extra);
    let handle = conveyor::start(cfg).await.unwrap();
    let c = Client::new(format!("http://{}", handle.addr), Some(TOKEN.into()));
    let p = c
        .create_project(&NewProject {
            name: "p".into(),
            repo_path: repo.display().to_string(),
            main_branch: None,
        })
        .await
        .unwrap();
    (handle, c, p.id)
}

async fn line(c: &Client, project: &str, title: &str) -> String {
    c.create_line(&NewLine {
        project_id: project.into(),
        title: title.into(),
        task: "x".into(),
        priority: None,
    })
    .await
    .unwrap()
    .id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_claude_binary_stops_the_line_not_the_daemon() {
    let tmp = tempfile::tempdir().unwrap();
    let (handle, c, p) = daemon_with(
        tmp.path(),
        std::path::Path::new("/nonexistent/claude"),
        None,
        "",
    )
    .await;
    let a = line(&c, &p, "a").await;
    let l = wait_state(&c, &a, LineState::NeedsHuman, 30).await;
    let reason = l.line.reason.unwrap();
    assert!(
        reason.contains("claude binary cannot be started"),
        "{reason}"
    );
    assert_eq!(l.line.steps[0].state, StepState::Failed);
    // The daemon goes on: the next line of the project is taken up (and stops the same way).
    let b = line(&c, &p, "b").await;
    wait_state(&c, &b, LineState::NeedsHuman, 30).await;
    assert_eq!(c.health().await.unwrap().status, "ok");
    handle.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn not_logged_in_stops_the_line_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    // No login, and nowhere real to reach: the API base is a closed loopback port and every
    // optional traffic is off, as in the other tests.
    let dead_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut env = toml::Table::new();
    env.insert("HOME".into(), home.display().to_string().into());
    env.insert(
        "ANTHROPIC_BASE_URL".into(),
        format!("http://127.0.0.1:{dead_port}").into(),
    );
    env.insert("CLAUDE_CODE_MAX_RETRIES".into(), "0".into());
    for k in [
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        "DISABLE_AUTOUPDATER",
        "DISABLE_TELEMETRY",
        "DISABLE_ERROR_REPORTING",
    ] {
        env.insert(k.into(), "1".into());
    }
    let (handle, c, p) = daemon_with(tmp.path(), &claude_bin(), Some(env), "").await;
    let a = line(&c, &p, "a").await;
    let l = wait_state(&c, &a, LineState::NeedsHuman, 60).await;
    let reason = l.line.reason.unwrap();
    assert!(reason.contains("not logged in"), "{reason}");
    handle.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_that_does_not_fit_the_window_waits_at_its_checkpoint() {
    let tmp = tempfile::tempdir().unwrap();
    let (handle, c, p) = daemon_with(
        tmp.path(),
        std::path::Path::new("/nonexistent/claude"),
        None,
        "[budget]\nthreshold_usd = 0.5\ndefault_estimate_usd = 1.0\n",
    )
    .await;
    let a = line(&c, &p, "a").await;
    let l = wait_state(&c, &a, LineState::WaitingBudget, 30).await;
    assert!(l.line.reason.unwrap().contains("threshold"));
    assert!(l.line.park_until.is_some());
    // Nothing ran: the binary (missing) was never tried.
    assert!(l.line.steps.iter().all(|s| s.attempts == 0));
    handle.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checks_still_red_after_three_hook_rounds_fail_the_step_with_what_stayed_red() {
    let tmp = tempfile::tempdir().unwrap();
    let mock = Mock::start();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let (handle, c, p) = daemon_with(
        tmp.path(),
        &claude_bin(),
        Some(agent_env(&mock, &home, false)),
        "",
    )
    .await;
    let id = line(&c, &p, "stubborn").await;
    let session = c.line(&id).await.unwrap().line.session_id;
    let plan = serde_json::json!({"steps": [{"title": "never", "task": "x", "checks": [{"cmd": "test -f never.txt"}]}]});
    // The model keeps claiming it is done without doing anything.
    mock.script(
        &session,
        serde_json::json!({"1": [write_plan(&plan), text("planned")], "2": []}),
    )
    .await;
    let l = wait_state(&c, &id, LineState::NeedsHuman, 120).await;
    let reason = l.line.reason.unwrap();
    assert!(
        reason.contains("still red after 3 Stop-hook round(s)"),
        "{reason}"
    );
    assert!(reason.contains("test -f never.txt"), "{reason}");
    assert_eq!(l.line.steps[1].state, StepState::Failed);
    // One answer plus one per block.
    let step2 = mock
        .requests(&session)
        .await
        .into_iter()
        .filter(|e| e["step"] == 2)
        .count();
    assert_eq!(step2, 4);
    handle.stop().await;
}
