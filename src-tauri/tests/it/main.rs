//! Smoke tests of the app through Tauri's mock runtime: the real builder (plugins, state,
//! commands) answering IPC the way the window's calls arrive. The logic under the commands is
//! tested beside it in the library; these check the wiring.

use serde_json::json;
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{INVOKE_KEY, get_ipc_response, mock_builder};
use tauri::webview::InvokeRequest;
use tauri::{Manager, WebviewWindow};

struct App {
    _home: tempfile::TempDir,
    config: std::path::PathBuf,
    _app: tauri::App<tauri::test::MockRuntime>,
    window: WebviewWindow<tauri::test::MockRuntime>,
}

/// The app with its config and data folders in a temp home (one test per process under
/// nextest, so the environment is the test's own).
fn app() -> App {
    let home = tempfile::tempdir().unwrap();
    isolate(&home);
    let mut app = pult_lib::run_app(mock_builder())
        .build(tauri::generate_context!())
        .unwrap();
    // The first iteration runs the setup hook: state managed, the main window made. Called
    // once, not in a loop, so the busy-loop its deprecation warns about cannot happen.
    #[allow(deprecated)]
    app.run_iteration(|_, _| {});
    let window = app.get_webview_window("main").expect("the main window");
    let config = home.path().join("config/deepwork/config.json");
    App {
        _home: home,
        config,
        _app: app,
        window,
    }
}

/// Points the app's config and data folders into the test's temp home.
#[allow(unsafe_code)]
fn isolate(home: &tempfile::TempDir) {
    // SAFETY: nextest runs each test in a process of its own, and this runs before the test
    // starts any thread that could read the environment.
    unsafe {
        std::env::set_var("XDG_CONFIG_HOME", home.path().join("config"));
        std::env::set_var("XDG_DATA_HOME", home.path().join("data"));
        std::env::set_var("HOME", home.path());
    }
}

fn invoke(
    app: &App,
    cmd: &str,
    body: serde_json::Value,
) -> Result<serde_json::Value, serde_json::Value> {
    get_ipc_response(
        &app.window,
        InvokeRequest {
            cmd: cmd.into(),
            callback: CallbackFn(0),
            error: CallbackFn(1),
            url: "tauri://localhost".parse().unwrap(),
            body: InvokeBody::Json(body),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        },
    )
    .map(|r| r.deserialize::<serde_json::Value>().unwrap())
}

#[test]
fn settings_round_trip_and_errors_carry_codes() {
    let app = app();
    let view = invoke(&app, "get_settings", json!({})).unwrap();
    assert_eq!(view["path"], app.config.display().to_string());
    assert_eq!(view["exists"], false);
    // Unset numbers are null, deepwork's defaults sent beside them for the placeholders.
    assert_eq!(view["settings"]["steps"], json!(null));
    assert_eq!(view["settings"]["timeout_secs"], json!(null));
    assert_eq!(view["defaults"]["steps"], 4);
    assert_eq!(view["defaults"]["timeout_secs"], 900);

    let bad = json!({"settings": {"transport": "openai", "bridge": "", "chat": "", "steps": null, "node": "",
        "timeout_secs": null, "base_url": "", "model": "m", "api_key_env": ""}});
    let err = invoke(&app, "save_settings", bad).unwrap_err();
    assert_eq!(err["code"], "config_invalid");
    assert_eq!(err["field"], "base_url");
    assert!(!app.config.exists());

    let good = json!({"settings": {"transport": "bridge", "bridge": "/oo/ask.mjs", "chat": "think", "steps": 5,
        "node": "", "timeout_secs": null, "base_url": "", "model": "", "api_key_env": ""}});
    let saved = invoke(&app, "save_settings", good).unwrap();
    assert_eq!(saved["settings"]["steps"], 5);
    assert_eq!(saved["settings"]["timeout_secs"], json!(null));
    let on_disk: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&app.config).unwrap()).unwrap();
    assert_eq!(
        on_disk,
        json!({"bridge": "/oo/ask.mjs", "chat": "think", "steps": 5})
    );
}

#[test]
fn commands_that_need_a_folder_say_so() {
    let app = app();
    let err = invoke(&app, "list_dir", json!({"dir": ""})).unwrap_err();
    assert_eq!(err["code"], "no_folder");
    let runs = invoke(&app, "list_runs", json!({})).unwrap();
    assert_eq!(runs, json!([]));
    let err = invoke(&app, "get_run", json!({"id": 42})).unwrap_err();
    assert_eq!(err["code"], "run_not_found");
}

#[test]
fn language_preference_defaults_to_russian_and_persists() {
    let app = app();
    assert_eq!(
        invoke(&app, "get_prefs", json!({})).unwrap(),
        json!({"language": "ru"})
    );
    invoke(&app, "save_prefs", json!({"prefs": {"language": "en"}})).unwrap();
    assert_eq!(
        invoke(&app, "get_prefs", json!({})).unwrap(),
        json!({"language": "en"})
    );
    let err = invoke(&app, "save_prefs", json!({"prefs": {"language": "xx"}})).unwrap_err();
    assert_eq!(err["code"], "config_invalid");
}

/// Polls `conveyor_status` until `done` holds (the connection is made off the main thread).
fn wait_status(
    app: &App,
    what: &str,
    done: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let s = invoke(app, "conveyor_status", json!({})).unwrap();
        if done(&s) {
            return s;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{what}: last status {s}"
        );
        std::thread::park_timeout(std::time::Duration::from_millis(50));
    }
}

#[test]
fn with_no_remote_set_the_embedded_daemon_starts_in_the_data_folder() {
    let app = app();
    let s = wait_status(&app, "embedded connected", |s| s["state"] != "starting");
    assert_eq!(
        (s["mode"].as_str(), s["state"].as_str()),
        (Some("embedded"), Some("connected")),
        "{s}"
    );
    assert!(
        s["url"].as_str().unwrap().starts_with("http://127.0.0.1:"),
        "{s}"
    );
    let view = invoke(&app, "conveyor_connection", json!({})).unwrap();
    let data = std::path::PathBuf::from(view["embedded_data"].as_str().unwrap());
    assert!(
        data.join("conveyor.sqlite").exists() || data.read_dir().unwrap().next().is_some(),
        "{}",
        data.display()
    );
    assert_eq!(
        invoke(&app, "conveyor_projects", json!({})).unwrap(),
        json!([])
    );
    let budget = invoke(&app, "conveyor_budget", json!({})).unwrap();
    assert_eq!(budget["pools"][0]["kind"], "window");
    // An unknown line: the daemon's 404 arrives as a stable code, not a crash.
    let e = invoke(&app, "conveyor_line", json!({"id": "nope"})).unwrap_err();
    assert_eq!(e["code"], "daemon", "{e}");

    // Nothing set for the Catcher or PlanFix: the outbox says so and is empty, and a test
    // message is the daemon's `catcher_off` refusal.
    let outbox = invoke(&app, "conveyor_outbox", json!({})).unwrap();
    assert_eq!(
        outbox,
        json!({"catcher": {"configured": false, "target": null},
            "planfix": {"configured": false, "target": null},
            "items": [], "pending": 0, "sent": 0, "failed": 0})
    );
    let e = invoke(&app, "conveyor_outbox_test", json!({})).unwrap_err();
    assert_eq!(
        (e["code"].as_str(), e["daemon_code"].as_str()),
        (Some("daemon"), Some("catcher_off")),
        "{e}"
    );
}

#[test]
fn a_remote_daemon_wrong_token_unreachable_and_right_token() {
    // SAFETY: as in `isolate`; set before any thread starts.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var("PULT_NO_KEYRING", "1");
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let daemon = rt.block_on(async {
        let mut cfg = conveyor::Config::new(dir.path().join("data"));
        cfg.listen = "127.0.0.1:0".parse().unwrap();
        cfg.token = Some("right-token".into());
        cfg.run_lines = false;
        conveyor::start(cfg).await.unwrap()
    });
    let url = format!("http://{}", daemon.addr);
    let app = app();
    wait_status(&app, "embedded settled", |s| s["state"] != "starting");

    // No URL: the field is named.
    let e = invoke(
        &app,
        "conveyor_connect",
        json!({"request": {"mode": "remote", "url": " ", "token": "x"}}),
    )
    .unwrap_err();
    assert_eq!(
        (e["code"].as_str(), e["field"].as_str()),
        (Some("config_invalid"), Some("url")),
        "{e}"
    );

    let s = invoke(
        &app,
        "conveyor_connect",
        json!({"request": {"mode": "remote", "url": url, "token": "wrong"}}),
    )
    .unwrap();
    assert_eq!(s["state"], "unauthorized", "{s}");
    assert!(s["message"].as_str().unwrap().contains("401"), "{s}");
    let e = invoke(&app, "conveyor_projects", json!({})).unwrap_err();
    assert_eq!(e["code"], "unauthorized", "{e}");

    // The right token (kept: a later connect without one reuses it), stored outside
    // conveyor.json in a file only the user reads.
    let s = invoke(
        &app,
        "conveyor_connect",
        json!({"request": {"mode": "remote", "url": url, "token": "right-token"}}),
    )
    .unwrap();
    assert_eq!(s["state"], "connected", "{s}");
    let s = invoke(
        &app,
        "conveyor_connect",
        json!({"request": {"mode": "remote", "url": url, "token": null}}),
    )
    .unwrap();
    assert_eq!(s["state"], "connected", "{s}");
    let view = invoke(&app, "conveyor_connection", json!({})).unwrap();
    assert_eq!(
        (
            view["mode"].as_str(),
            view["token_set"].as_bool(),
            view["token_store"].as_str()
        ),
        (Some("remote"), Some(true), Some("file"))
    );
    let data = std::path::PathBuf::from(view["embedded_data"].as_str().unwrap());
    let saved = std::fs::read_to_string(data.with_file_name("conveyor.json")).unwrap();
    assert!(!saved.contains("right-token"), "{saved}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let meta = std::fs::metadata(data.with_file_name("conveyor-token")).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    }
    assert_eq!(
        invoke(&app, "conveyor_projects", json!({})).unwrap(),
        json!([])
    );

    // The daemon goes away: unreachable, said as such.
    rt.block_on(daemon.stop());
    let s = invoke(
        &app,
        "conveyor_connect",
        json!({"request": {"mode": "remote", "url": url, "token": null}}),
    )
    .unwrap();
    assert_eq!(s["state"], "unreachable", "{s}");
    let e = invoke(&app, "conveyor_budget", json!({})).unwrap_err();
    assert_eq!(e["code"], "daemon_unreachable", "{e}");
}

#[test]
fn a_level_is_raised_through_the_app_and_a_lower_one_refused_with_the_daemons_code() {
    // SAFETY: as in `isolate`; set before any thread starts.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var("PULT_NO_KEYRING", "1");
    }
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    for args in [
        &["init", "-q", "-b", "main"][..],
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@localhost",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "init",
        ],
    ] {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(&repo)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }
    // A daemon that runs no lines: the line stays queued while its level is raised.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let daemon = rt.block_on(async {
        let mut cfg = conveyor::Config::new(dir.path().join("data"));
        cfg.listen = "127.0.0.1:0".parse().unwrap();
        cfg.token = Some("level-token".into());
        cfg.run_lines = false;
        conveyor::start(cfg).await.unwrap()
    });
    let app = app();
    wait_status(&app, "embedded settled", |s| s["state"] != "starting");
    let s = invoke(
        &app,
        "conveyor_connect",
        json!({"request": {"mode": "remote", "url": format!("http://{}", daemon.addr), "token": "level-token"}}),
    )
    .unwrap();
    assert_eq!(s["state"], "connected", "{s}");
    let p = invoke(
        &app,
        "conveyor_create_project",
        json!({"project": {"name": "p", "repo_path": repo}}),
    )
    .unwrap();
    let l = invoke(
        &app,
        "conveyor_create_line",
        json!({"line": {"project_id": p["id"], "title": "t", "task": "do it"}}),
    )
    .unwrap();
    assert_eq!(l["level"], json!(null), "{l}");
    assert_eq!(l["planfix_task"], json!(null), "{l}");

    // A PlanFix task: its number kept without the '#'; anything else refused at its field.
    let with_task = invoke(
        &app,
        "conveyor_create_line",
        json!({"line": {"project_id": p["id"], "title": "t2", "task": "do it", "planfix_task": "#4217"}}),
    )
    .unwrap();
    assert_eq!(with_task["planfix_task"], "4217", "{with_task}");
    let e = invoke(
        &app,
        "conveyor_create_line",
        json!({"line": {"project_id": p["id"], "title": "t3", "task": "do it", "planfix_task": "PF-1"}}),
    )
    .unwrap_err();
    assert_eq!(
        (
            e["code"].as_str(),
            e["daemon_code"].as_str(),
            e["field"].as_str()
        ),
        (
            Some("daemon"),
            Some("bad_planfix_task"),
            Some("planfix_task")
        ),
        "{e}"
    );

    let raised = invoke(
        &app,
        "conveyor_raise_level",
        json!({"id": l["id"], "level": "medium"}),
    )
    .unwrap();
    assert_eq!(
        (raised["level"].as_str(), raised["level_why"].as_str()),
        (Some("medium"), Some("Anton raised it")),
        "{raised}"
    );
    // Lower: a state refusal for the app, the daemon's own code beside it for the page.
    let e = invoke(
        &app,
        "conveyor_raise_level",
        json!({"id": l["id"], "level": "light"}),
    )
    .unwrap_err();
    assert_eq!(
        (e["code"].as_str(), e["daemon_code"].as_str()),
        (Some("invalid_state"), Some("level_lower")),
        "{e}"
    );

    // The "decided without Anton" catalogue: nothing decided yet on this project (the e2e
    // tests fill it), the project passed through; a limit out of range is the daemon's refusal.
    let decided = invoke(
        &app,
        "conveyor_decisions",
        json!({"project": p["id"], "limit": 5}),
    )
    .unwrap();
    assert_eq!(decided, json!([]));
    let e = invoke(&app, "conveyor_decisions", json!({"limit": 0})).unwrap_err();
    assert_eq!(
        (e["code"].as_str(), e["daemon_code"].as_str()),
        (Some("daemon"), Some("bad_request")),
        "{e}"
    );

    // The queue reordered with one call: the lines come back in the new order; a line listed
    // twice is the daemon's refusal. A title the project has open is refused at its field.
    let order = json!([with_task["id"], l["id"]]);
    let lines = invoke(&app, "conveyor_reorder", json!({ "ids": order })).unwrap();
    let ids: Vec<&serde_json::Value> = lines.as_array().unwrap().iter().map(|l| &l["id"]).collect();
    assert_eq!(json!(ids), order, "{lines}");
    let e = invoke(&app, "conveyor_reorder", json!({"ids": [l["id"], l["id"]]})).unwrap_err();
    assert_eq!(
        (e["code"].as_str(), e["daemon_code"].as_str()),
        (Some("daemon"), Some("duplicate_line")),
        "{e}"
    );
    let e = invoke(
        &app,
        "conveyor_create_line",
        json!({"line": {"project_id": p["id"], "title": "T2 ", "task": "again"}}),
    )
    .unwrap_err();
    assert_eq!(
        (e["daemon_code"].as_str(), e["field"].as_str()),
        (Some("duplicate_title"), Some("title")),
        "{e}"
    );
    rt.block_on(daemon.stop());
}
