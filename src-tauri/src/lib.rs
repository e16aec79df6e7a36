//! pult: the desktop control panel. The Rust side does the work — walking the folder,
//! running deepwork, keeping the history — and the front end shows state and sends intents
//! through `ui/src/lib/ipc.ts`. Commands are thin: the logic lives in the crates and in the
//! modules here, tested without a window.

pub mod commands;
pub mod conveyor;
pub mod diff;
pub mod error;
pub mod folder;
pub mod history;
pub mod settings;
pub mod state;
pub mod sync;

#[cfg(test)]
mod bindings;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::Context as _;
use tauri::{DragDropEvent, Emitter, Manager, Runtime, WindowEvent};

use crate::conveyor::{Conveyor, ConveyorPaths, Tokens};
use crate::history::History;
use crate::state::{AppState, Paths};

/// The event a dropped folder sends to the page (its payload: the folder's path).
pub const FOLDER_DROPPED: &str = "folder-dropped";

/// Where the app keeps its files: deepwork's config.json where the CLI reads it, the history
/// and preferences in the app's data folder.
///
/// # Errors
/// When the platform has no data or config folder.
pub fn paths<R: Runtime>(app: &tauri::AppHandle<R>) -> anyhow::Result<Paths> {
    let data = app
        .path()
        .app_data_dir()
        .context("no data folder for the app")?;
    let config = deepwork::default_path().context("no config folder for deepwork")?;
    Ok(Paths {
        config,
        prefs: data.join("prefs.json"),
        history: data.join("history.sqlite"),
    })
}

/// The folder named on the command line (`pult <folder>`), if any.
fn folder_argument(args: impl Iterator<Item = String>) -> Option<PathBuf> {
    args.skip(1)
        .find(|a| !a.starts_with('-'))
        .map(PathBuf::from)
}

/// Plugins, state, commands and window handlers: everything but the context, so a test can
/// build the app on the mock runtime.
pub fn run_app<R: Runtime>(builder: tauri::Builder<R>) -> tauri::Builder<R> {
    builder
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_shell::init())
        .plugin(tauri_plugin_notification::init())
        .setup(|app| {
            let paths = paths(app.handle())?;
            let data = app
                .path()
                .app_data_dir()
                .context("no data folder for the app")?;
            app.manage(Conveyor::new(
                ConveyorPaths {
                    settings: data.join("conveyor.json"),
                    embedded_config: data.join("conveyor.toml"),
                    embedded_data: data.join("conveyor"),
                },
                Tokens {
                    file: data.join("conveyor-token"),
                    // PULT_NO_KEYRING=1 keeps tests away from the user's keyring.
                    keyring: std::env::var_os("PULT_NO_KEYRING").is_none(),
                },
            ));
            // The daemon starts (or is reached) off the window's critical path.
            let handle = app.handle().clone();
            tauri::async_runtime::spawn(async move {
                handle.state::<Conveyor>().start(&handle).await;
            });
            let history = tauri::async_runtime::block_on(History::open(&paths.history))
                .with_context(|| {
                    format!("cannot open the history at {}", paths.history.display())
                })?;
            app.manage(AppState {
                paths,
                history,
                folder: Mutex::new(None),
                runs: Arc::new(Mutex::new(HashMap::new())),
                initial_folder: Mutex::new(folder_argument(std::env::args())),
            });
            Ok(())
        })
        .on_window_event(|window, event| {
            if let WindowEvent::DragDrop(DragDropEvent::Drop { paths, .. }) = event
                && let Some(dir) = folder::folder_from_drop(paths)
            {
                let _ = window.emit(FOLDER_DROPPED, dir.display().to_string());
            }
        })
        .invoke_handler(tauri::generate_handler![
            commands::folder::open_folder,
            commands::folder::initial_folder,
            commands::folder::list_dir,
            commands::folder::selection_size,
            commands::run::start_run,
            commands::run::stop_run,
            commands::run::write_proposed,
            commands::run::list_runs,
            commands::run::get_run,
            commands::settings::get_settings,
            commands::settings::save_settings,
            commands::settings::check_settings,
            commands::settings::get_prefs,
            commands::settings::save_prefs,
            commands::conveyor::conveyor_status,
            commands::conveyor::conveyor_connection,
            commands::conveyor::conveyor_connect,
            commands::conveyor::conveyor_projects,
            commands::conveyor::conveyor_create_project,
            commands::conveyor::conveyor_lines,
            commands::conveyor::conveyor_line,
            commands::conveyor::conveyor_line_diff,
            commands::conveyor::conveyor_line_runs,
            commands::conveyor::conveyor_transcript,
            commands::conveyor::conveyor_create_line,
            commands::conveyor::conveyor_set_priority,
            commands::conveyor::conveyor_reorder,
            commands::conveyor::conveyor_raise_level,
            commands::conveyor::conveyor_cancel,
            commands::conveyor::conveyor_accept,
            commands::conveyor::conveyor_remarks,
            commands::conveyor::conveyor_review,
            commands::conveyor::conveyor_answer,
            commands::conveyor::conveyor_take_back,
            commands::conveyor::conveyor_decisions,
            commands::conveyor::conveyor_budget,
            commands::conveyor::conveyor_preflight,
            commands::conveyor::conveyor_outbox,
            commands::conveyor::conveyor_outbox_test,
            commands::conveyor::conveyor_notify,
        ])
}

/// Starts the app.
pub fn run() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("PULT_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let app = match run_app(tauri::Builder::default()).build(tauri::generate_context!()) {
        Ok(app) => app,
        Err(e) => {
            tracing::error!(error = %e, "pult did not start");
            std::process::exit(1);
        }
    };
    app.run(|handle, event| {
        if let tauri::RunEvent::Exit = event {
            // Stop the embedded daemon's agents and close its database cleanly.
            tauri::async_runtime::block_on(handle.state::<Conveyor>().shutdown());
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_folder_argument_is_the_first_non_flag() {
        let args = |v: &[&str]| folder_argument(v.iter().map(|s| s.to_string()));
        assert_eq!(
            args(&["pult", "/p/мой проект"]),
            Some(PathBuf::from("/p/мой проект"))
        );
        assert_eq!(args(&["pult", "--flag", "/p"]), Some(PathBuf::from("/p")));
        assert_eq!(args(&["pult"]), None);
    }
}
