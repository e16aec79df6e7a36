//! pult: the desktop control panel. The Rust side does the work — walking the folder,
//! running deepwork, keeping the history — and the front end shows state and sends intents
//! through `ui/src/lib/ipc.ts`. Commands are thin: the logic lives in the crates and in the
//! modules here, tested without a window.

pub mod commands;
pub mod diff;
pub mod error;
pub mod folder;
pub mod history;
pub mod settings;
pub mod state;

#[cfg(test)]
mod bindings;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::Context as _;
use tauri::{DragDropEvent, Emitter, Manager, Runtime, WindowEvent};

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
        .setup(|app| {
            let paths = paths(app.handle())?;
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
    if let Err(e) = run_app(tauri::Builder::default()).run(tauri::generate_context!()) {
        tracing::error!(error = %e, "pult stopped");
        std::process::exit(1);
    }
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
