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

    let bad = json!({"settings": {"transport": "openai", "bridge": "", "chat": "", "steps": 0, "node": "",
        "timeout_secs": 0, "base_url": "", "model": "m", "api_key_env": ""}});
    let err = invoke(&app, "save_settings", bad).unwrap_err();
    assert_eq!(err["code"], "config_invalid");
    assert_eq!(err["field"], "base_url");
    assert!(!app.config.exists());

    let good = json!({"settings": {"transport": "bridge", "bridge": "/oo/ask.mjs", "chat": "think", "steps": 5,
        "node": "", "timeout_secs": 0, "base_url": "", "model": "", "api_key_env": ""}});
    let saved = invoke(&app, "save_settings", good).unwrap();
    assert_eq!(saved["settings"]["steps"], 5);
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
