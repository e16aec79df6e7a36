//! The one error type that crosses IPC: a stable `code` the front end branches on, a message
//! for people, and the config field when one is to blame.

use serde::Serialize;
use ts_rs::TS;

/// What went wrong, as the front end knows it. Stable: the UI switches on these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// No folder is open.
    NoFolder,
    /// The folder does not exist or cannot be read.
    FolderUnavailable,
    /// A path from the UI or an answer is outside the folder or reserved.
    PathRefused,
    /// config.json is not valid JSON or has unknown keys.
    ConfigBroken,
    /// A config value is out of range or missing.
    ConfigInvalid,
    /// The bridge or endpoint failed.
    Transport,
    /// No run with that id.
    RunNotFound,
    /// The run did not propose that file.
    NotProposed,
    /// Writing a file failed.
    WriteFailed,
    /// The history database failed.
    History,
    /// Anything else; the message says what.
    Internal,
}

/// An error for the front end: `{code, message, field}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS, thiserror::Error)]
#[error("{message}")]
pub struct AppError {
    /// What kind.
    pub code: ErrorCode,
    /// For people.
    pub message: String,
    /// The config key to fix, when one is to blame.
    pub field: Option<String>,
}

impl AppError {
    /// An error without a field.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> AppError {
        AppError {
            code,
            message: message.into(),
            field: None,
        }
    }
}

impl From<deepwork::ConfigError> for AppError {
    fn from(e: deepwork::ConfigError) -> AppError {
        let message = e.to_string();
        match e {
            deepwork::ConfigError::Invalid { field, .. } => AppError {
                code: ErrorCode::ConfigInvalid,
                message,
                field: Some(field.to_owned()),
            },
            _ => AppError::new(ErrorCode::ConfigBroken, message),
        }
    }
}

impl From<deepwork::TransportError> for AppError {
    fn from(e: deepwork::TransportError) -> AppError {
        AppError::new(ErrorCode::Transport, e.to_string())
    }
}

impl From<deepwork::RunError> for AppError {
    fn from(e: deepwork::RunError) -> AppError {
        AppError::new(ErrorCode::Transport, e.to_string())
    }
}

impl From<deepwork::ApplyError> for AppError {
    fn from(e: deepwork::ApplyError) -> AppError {
        let code = match e {
            deepwork::ApplyError::Refused { .. } => ErrorCode::PathRefused,
            _ => ErrorCode::WriteFailed,
        };
        AppError::new(code, e.to_string())
    }
}

impl From<sqlx::Error> for AppError {
    fn from(e: sqlx::Error) -> AppError {
        tracing::error!(error = %e, "history database");
        AppError::new(ErrorCode::History, format!("history database: {e}"))
    }
}

impl From<deepwork::PromptError> for AppError {
    fn from(e: deepwork::PromptError) -> AppError {
        AppError::new(ErrorCode::ConfigInvalid, e.to_string())
    }
}
