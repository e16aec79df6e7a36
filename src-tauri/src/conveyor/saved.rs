//! The connection's own files: where they live, and what `conveyor.json` holds (the mode and
//! the URL; the token is kept apart, see `token`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::types::ConnectionMode;
use crate::error::{AppError, ErrorCode};

/// Where the connection's files live.
#[derive(Debug, Clone)]
pub struct ConveyorPaths {
    /// `conveyor.json`: mode and URL (never the token).
    pub settings: PathBuf,
    /// The embedded daemon's optional `conveyor.toml`.
    pub embedded_config: PathBuf,
    /// The embedded daemon's data folder.
    pub embedded_data: PathBuf,
}

/// What `conveyor.json` holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Saved {
    pub mode: ConnectionMode,
    pub url: Option<String>,
}

impl Saved {
    /// Reads `conveyor.json`; a missing file is the default (embedded).
    ///
    /// # Errors
    /// `config_broken` naming the file when it does not parse.
    pub fn load(path: &std::path::Path) -> Result<Saved, AppError> {
        match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| {
                AppError::new(
                    ErrorCode::ConfigBroken,
                    format!(
                        "{}: line {}, column {}: {e}",
                        path.display(),
                        e.line(),
                        e.column()
                    ),
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Saved::default()),
            Err(e) => Err(AppError::new(
                ErrorCode::ConfigBroken,
                format!("{}: {e}", path.display()),
            )),
        }
    }

    pub(super) fn save(&self, path: &std::path::Path) -> Result<(), AppError> {
        let fail = |e: std::io::Error| {
            AppError::new(ErrorCode::Internal, format!("{}: {e}", path.display()))
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(fail)?;
        }
        let text = serde_json::to_string_pretty(self).unwrap_or_default();
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, text).map_err(fail)?;
        std::fs::rename(&tmp, path).map_err(fail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_settings_default_to_embedded_and_name_a_broken_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("conveyor.json");
        assert_eq!(Saved::load(&p).unwrap().mode, ConnectionMode::Embedded);
        let s = Saved {
            mode: ConnectionMode::Remote,
            url: Some("http://h:1".into()),
        };
        s.save(&p).unwrap();
        assert_eq!(Saved::load(&p).unwrap(), s);
        std::fs::write(&p, "{\"mode\": \"remote\",\n \"tokn\": 1}").unwrap();
        let e = Saved::load(&p).unwrap_err();
        assert_eq!(e.code, ErrorCode::ConfigBroken);
        assert!(
            e.message.contains("conveyor.json") && e.message.contains("line 2"),
            "{}",
            e.message
        );
    }
}
