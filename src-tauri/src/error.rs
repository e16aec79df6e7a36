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
    /// No daemon is connected yet (the embedded one is starting, or the settings are
    /// incomplete).
    NotConnected,
    /// Nothing answers at the daemon's URL.
    DaemonUnreachable,
    /// The daemon refused the token.
    Unauthorized,
    /// The daemon speaks another version of the API.
    VersionMismatch,
    /// Accept refused: the line's branch holds commits main does not.
    Unmerged,
    /// The line is not in a state that allows this (e.g. accept before it awaits acceptance).
    InvalidState,
    /// Any other refusal of the daemon; the message carries its code and text.
    Daemon,
    /// Anything else; the message says what.
    Internal,
}

/// An error for the front end: `{code, message, field, daemon_code}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS, thiserror::Error)]
#[error("{message}")]
pub struct AppError {
    /// What kind.
    pub code: ErrorCode,
    /// For people.
    pub message: String,
    /// The config key to fix, when one is to blame.
    pub field: Option<String>,
    /// The daemon's own code when the daemon refused (so the page words it in the
    /// interface's language, with `message`, the daemon's text, beneath).
    #[ts(type = "DaemonErrorCode | null")]
    pub daemon_code: Option<conveyor_api::ErrorCode>,
}

impl AppError {
    /// An error without a field.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> AppError {
        AppError {
            code,
            message: message.into(),
            field: None,
            daemon_code: None,
        }
    }

    /// `config_invalid`, naming the config key to fix.
    pub fn invalid(field: &str, message: impl Into<String>) -> AppError {
        AppError {
            field: Some(field.to_owned()),
            ..AppError::new(ErrorCode::ConfigInvalid, message)
        }
    }
}

impl From<deepwork::ConfigError> for AppError {
    fn from(e: deepwork::ConfigError) -> AppError {
        let message = e.to_string();
        match e {
            deepwork::ConfigError::Invalid { field, .. } => AppError::invalid(field, message),
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

impl From<conveyor_api::ClientError> for AppError {
    fn from(e: conveyor_api::ClientError) -> AppError {
        let code = match &e {
            conveyor_api::ClientError::Api { status: 401, .. } => ErrorCode::Unauthorized,
            conveyor_api::ClientError::Api {
                code: Some(code), ..
            } => {
                use conveyor_api::ErrorCode as Api;
                // Every daemon code named: a new one must be placed here on purpose.
                match code {
                    Api::UnmergedCommits => ErrorCode::Unmerged,
                    // The answer can no longer change: a state refusal, worded by its code.
                    Api::InvalidState | Api::AnswerStarted | Api::LevelLower => {
                        ErrorCode::InvalidState
                    }
                    Api::Unauthorized => ErrorCode::Unauthorized,
                    // Refusals the form shows as the daemon worded them.
                    Api::NotFound
                    | Api::BadRequest
                    | Api::Exists
                    | Api::NotARepository
                    | Api::UnknownProject
                    | Api::NotAnOption
                    | Api::CatcherOff
                    | Api::BadPlanfixTask
                    | Api::DuplicateTitle
                    | Api::DuplicateLine
                    | Api::UnknownLine
                    | Api::Internal => ErrorCode::Daemon,
                }
            }
            conveyor_api::ClientError::Transport(_) => ErrorCode::DaemonUnreachable,
            _ => ErrorCode::Daemon,
        };
        let message = match &e {
            conveyor_api::ClientError::Api { message, .. } => message.clone(),
            // reqwest's text names the URL; say first that nothing answered there.
            conveyor_api::ClientError::Transport(t) => format!("no answer from the daemon: {t}"),
            other => other.to_string(),
        };
        let daemon_code = match &e {
            conveyor_api::ClientError::Api { code, .. } => *code,
            _ => None,
        };
        // A refusal that names one field of the request: the form marks that field.
        let field = match daemon_code {
            Some(conveyor_api::ErrorCode::BadPlanfixTask) => Some("planfix_task".to_owned()),
            Some(conveyor_api::ErrorCode::DuplicateTitle) => Some("title".to_owned()),
            _ => None,
        };
        AppError {
            daemon_code,
            field,
            ..AppError::new(code, message)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use conveyor_api::{ClientError, ErrorCode as Api};

    fn refused(status: u16, code: Option<Api>) -> AppError {
        AppError::from(ClientError::Api {
            status,
            code,
            message: "why".into(),
        })
    }

    #[test]
    fn the_daemons_codes_map_to_the_apps() {
        assert_eq!(
            refused(409, Some(Api::UnmergedCommits)),
            AppError {
                daemon_code: Some(Api::UnmergedCommits),
                ..AppError::new(ErrorCode::Unmerged, "why")
            }
        );
        assert_eq!(
            refused(409, Some(Api::InvalidState)).code,
            ErrorCode::InvalidState
        );
        // An answer whose step has started: a state refusal, its own code beside it so the
        // card can say why.
        let started = refused(409, Some(Api::AnswerStarted));
        assert_eq!(
            (started.code, started.daemon_code),
            (ErrorCode::InvalidState, Some(Api::AnswerStarted))
        );
        assert_eq!(
            refused(401, Some(Api::Unauthorized)).code,
            ErrorCode::Unauthorized
        );
        // A 401 is a refused token even when the answer is not the daemon's.
        assert_eq!(refused(401, None).code, ErrorCode::Unauthorized);
        for code in [Api::NotFound, Api::BadRequest, Api::Exists, Api::Internal] {
            let e = refused(400, Some(code));
            // The daemon's code travels along, so the page can word it.
            assert_eq!((e.code, e.daemon_code), (ErrorCode::Daemon, Some(code)));
        }
        // No Catcher configured: the daemon's refusal, worded by its code.
        let off = refused(409, Some(Api::CatcherOff));
        assert_eq!(
            (off.code, off.daemon_code, off.field),
            (ErrorCode::Daemon, Some(Api::CatcherOff), None)
        );
        // Not a PlanFix task number: the line form's field is named.
        let task = refused(422, Some(Api::BadPlanfixTask));
        assert_eq!(
            (task.code, task.daemon_code, task.field.as_deref()),
            (
                ErrorCode::Daemon,
                Some(Api::BadPlanfixTask),
                Some("planfix_task")
            )
        );
        // The same title as an open line of the project: the line form's title is named.
        let title = refused(409, Some(Api::DuplicateTitle));
        assert_eq!(
            (title.code, title.daemon_code, title.field.as_deref()),
            (ErrorCode::Daemon, Some(Api::DuplicateTitle), Some("title"))
        );
        // A reorder listing a line twice: the daemon's refusal, no field.
        let twice = refused(422, Some(Api::DuplicateLine));
        assert_eq!(
            (twice.code, twice.daemon_code, twice.field),
            (ErrorCode::Daemon, Some(Api::DuplicateLine), None)
        );
        assert_eq!(refused(502, None).code, ErrorCode::Daemon);
        assert_eq!(refused(502, None).daemon_code, None);
    }
}
