//! Settings: deepwork's transport (validated by deepwork), the check, and the language.

use deepwork::CheckReport;
use tauri::State;

use crate::error::{AppError, ErrorCode};
use crate::settings::{self, DeepworkSettings, Prefs, SettingsView};
use crate::state::AppState;

/// The transport settings and where they live.
#[tauri::command]
pub fn get_settings(state: State<'_, AppState>) -> SettingsView {
    settings::load(&state.paths.config)
}

/// Validates and saves the transport settings.
#[tauri::command]
pub fn save_settings(
    state: State<'_, AppState>,
    settings: DeepworkSettings,
) -> Result<SettingsView, AppError> {
    settings::save(&state.paths.config, &settings)
}

/// What `deepwork --check` does, on the saved settings.
#[tauri::command]
pub async fn check_settings(state: State<'_, AppState>) -> Result<CheckReport, AppError> {
    let config = settings::config(&state.paths.config)?;
    tauri::async_runtime::spawn_blocking(move || deepwork::check(&config))
        .await
        .map_err(|e| AppError::new(ErrorCode::Internal, e.to_string()))
}

/// The app's preferences.
#[tauri::command]
pub fn get_prefs(state: State<'_, AppState>) -> Prefs {
    settings::load_prefs(&state.paths.prefs)
}

/// Saves the app's preferences.
#[tauri::command]
pub fn save_prefs(state: State<'_, AppState>, prefs: Prefs) -> Result<(), AppError> {
    settings::save_prefs(&state.paths.prefs, &prefs)
}
