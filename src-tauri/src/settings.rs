//! Settings: the deepwork transport lives in deepwork's own `config.json` (the one the CLI
//! reads, so the app and the command line agree), validated by deepwork before it is saved;
//! the app's own preferences (the interface language) in `prefs.json` beside the history.

use std::path::{Path, PathBuf};

use deepwork::{Config, ConfigFile, Overrides, TransportKind};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error::{AppError, ErrorCode};

/// The transport settings as the form edits them; empty strings mean "not set".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct DeepworkSettings {
    /// `"bridge"` or `"openai"`.
    pub transport: String,
    /// Path of ask.mjs.
    pub bridge: String,
    /// The bridge's chat.
    pub chat: String,
    /// Steps per run; `null` for deepwork's default (the key stays out of the file).
    pub steps: Option<u32>,
    /// The node binary.
    pub node: String,
    /// Seconds per step; `null` for deepwork's default.
    pub timeout_secs: Option<u32>,
    /// OpenAI-compatible endpoint.
    pub base_url: String,
    /// Its model.
    pub model: String,
    /// The environment variable with its key.
    pub api_key_env: String,
}

/// The settings page's view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct SettingsView {
    /// Where config.json lives.
    pub path: String,
    /// Whether it exists yet.
    pub exists: bool,
    /// What it says (defaults where it says nothing).
    pub settings: DeepworkSettings,
    /// Why the file on disk cannot be used, if it cannot.
    pub error: Option<AppError>,
    /// What deepwork uses for what the file leaves out (the form's placeholders).
    pub defaults: DeepworkDefaults,
}

/// deepwork's own defaults and limits, sent so the form shows them and never keeps a copy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct DeepworkDefaults {
    /// Steps per run when `steps` is unset.
    pub steps: u32,
    /// The most steps deepwork accepts.
    pub max_steps: u32,
    /// Seconds per step when `timeout_secs` is unset.
    pub timeout_secs: u32,
    /// The bridge's chat when `chat` is unset.
    pub chat: String,
}

impl DeepworkDefaults {
    fn new() -> DeepworkDefaults {
        let n = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
        DeepworkDefaults {
            steps: n(deepwork::DEFAULT_STEPS as u64),
            max_steps: n(deepwork::MAX_STEPS as u64),
            timeout_secs: n(deepwork::DEFAULT_TIMEOUT_SECS),
            chat: deepwork::DEFAULT_CHAT.to_owned(),
        }
    }
}

/// The app's own preferences.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Prefs {
    /// `"ru"` or `"en"`.
    pub language: String,
}

impl Default for Prefs {
    fn default() -> Self {
        Prefs {
            language: "ru".into(),
        }
    }
}

fn opt(s: &str) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_owned())
}

impl DeepworkSettings {
    fn from_file(f: &ConfigFile) -> DeepworkSettings {
        let s = |o: &Option<String>| o.clone().unwrap_or_default();
        let p = |o: &Option<PathBuf>| {
            o.as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        };
        DeepworkSettings {
            transport: match f.transport {
                Some(TransportKind::Openai) => "openai".into(),
                _ => "bridge".into(),
            },
            bridge: p(&f.bridge),
            chat: s(&f.chat),
            steps: f.steps.and_then(|v| u32::try_from(v).ok()),
            node: p(&f.node),
            timeout_secs: f.timeout_secs.and_then(|v| u32::try_from(v).ok()),
            base_url: s(&f.base_url),
            model: s(&f.model),
            api_key_env: s(&f.api_key_env),
        }
    }

    /// The JSON object to save: only the keys that are set, so deepwork's defaults apply to
    /// the rest. Keys the form does not edit (prompts, debug_port, chat_url, prespawn) are
    /// kept.
    fn to_json(&self, keep: &ConfigFile) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        let mut put = |k: &str, v: Option<serde_json::Value>| {
            if let Some(v) = v {
                m.insert(k.to_owned(), v);
            }
        };
        put(
            "transport",
            Some(self.transport.clone().into()).filter(|_| self.transport == "openai"),
        );
        put("bridge", opt(&self.bridge).map(Into::into));
        put("chat", opt(&self.chat).map(Into::into));
        put("steps", self.steps.map(Into::into));
        put("node", opt(&self.node).map(Into::into));
        put("timeout_secs", self.timeout_secs.map(Into::into));
        put("base_url", opt(&self.base_url).map(Into::into));
        put("model", opt(&self.model).map(Into::into));
        put("api_key_env", opt(&self.api_key_env).map(Into::into));
        put(
            "prompts",
            keep.prompts
                .as_ref()
                .map(|p| p.display().to_string().into()),
        );
        put("debug_port", keep.debug_port.map(Into::into));
        put("chat_url", keep.chat_url.clone().map(Into::into));
        put("prespawn", keep.prespawn.map(Into::into));
        serde_json::Value::Object(m)
    }
}

/// Reads the settings page's view of `path`.
pub fn load(path: &Path) -> SettingsView {
    let exists = path.exists();
    let (file, error) = if exists {
        match ConfigFile::read(path) {
            Ok(f) => (f, None),
            Err(e) => (ConfigFile::default(), Some(AppError::from(e))),
        }
    } else {
        (ConfigFile::default(), None)
    };
    SettingsView {
        path: path.display().to_string(),
        exists,
        settings: DeepworkSettings::from_file(&file),
        error,
        defaults: DeepworkDefaults::new(),
    }
}

/// Validates the settings with deepwork's own rules and saves them; nothing is written when
/// they are invalid.
///
/// # Errors
/// `config_invalid` naming the field, or `internal` when the file cannot be written.
pub fn save(path: &Path, settings: &DeepworkSettings) -> Result<SettingsView, AppError> {
    if !matches!(settings.transport.as_str(), "bridge" | "openai") {
        return Err(AppError::invalid(
            "transport",
            format!("unknown transport {:?}", settings.transport),
        ));
    }
    let keep = ConfigFile::read(path).unwrap_or_default();
    let json = settings.to_json(&keep);
    let text = serde_json::to_string_pretty(&json)
        .map_err(|e| AppError::new(ErrorCode::Internal, e.to_string()))?;
    let file = ConfigFile::parse(&text, path)?;
    let exe = std::env::current_exe().unwrap_or_default();
    Config::resolve(file, Some(path.to_owned()), &Overrides::default(), &exe)?;
    let write_err = |e: std::io::Error| {
        AppError::new(
            ErrorCode::Internal,
            format!("cannot write {}: {e}", path.display()),
        )
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(write_err)?;
    }
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text + "\n").map_err(write_err)?;
    std::fs::rename(&tmp, path).map_err(write_err)?;
    Ok(load(path))
}

/// The validated config for a run or a check: `path` when it exists, defaults otherwise.
///
/// # Errors
/// When config.json is broken or invalid.
pub fn config(path: &Path) -> Result<Config, AppError> {
    let exe = std::env::current_exe().unwrap_or_default();
    let explicit = path.exists().then_some(path);
    Ok(Config::load(explicit, &Overrides::default(), &exe)?)
}

/// Reads the preferences, defaults when missing or unreadable.
pub fn load_prefs(path: &Path) -> Prefs {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// Saves the preferences.
///
/// # Errors
/// `config_invalid` for an unknown language, `internal` when the file cannot be written.
pub fn save_prefs(path: &Path, prefs: &Prefs) -> Result<(), AppError> {
    if !matches!(prefs.language.as_str(), "ru" | "en") {
        return Err(AppError::invalid(
            "language",
            format!("unknown language {:?}", prefs.language),
        ));
    }
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let text = serde_json::to_string_pretty(prefs).unwrap_or_default();
    std::fs::write(path, text).map_err(|e| {
        AppError::new(
            ErrorCode::Internal,
            format!("cannot write {}: {e}", path.display()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_validates_and_keeps_only_set_keys() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("deepwork").join("config.json");
        let s = DeepworkSettings {
            transport: "bridge".into(),
            bridge: "/oo/ask.mjs".into(),
            steps: Some(6),
            ..Default::default()
        };
        let view = save(&path, &s).unwrap();
        assert!(view.exists);
        assert_eq!(view.settings.steps, Some(6));
        let text = std::fs::read_to_string(&path).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v, serde_json::json!({"bridge": "/oo/ask.mjs", "steps": 6}));
    }

    #[test]
    fn invalid_settings_name_the_field_and_write_nothing() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("config.json");
        let s = DeepworkSettings {
            transport: "openai".into(),
            model: "m".into(),
            ..Default::default()
        };
        let e = save(&path, &s).unwrap_err();
        assert_eq!(
            (e.code, e.field.as_deref()),
            (ErrorCode::ConfigInvalid, Some("base_url"))
        );
        let s = DeepworkSettings {
            transport: "bridge".into(),
            steps: Some(99),
            ..Default::default()
        };
        assert_eq!(save(&path, &s).unwrap_err().field.as_deref(), Some("steps"));
        // 0 is a value deepwork refuses, not a way to say "the default".
        let s = DeepworkSettings {
            transport: "bridge".into(),
            timeout_secs: Some(0),
            ..Default::default()
        };
        assert_eq!(
            save(&path, &s).unwrap_err().field.as_deref(),
            Some("timeout_secs")
        );
        assert!(!path.exists());
    }

    #[test]
    fn unset_numbers_stay_unset_and_the_defaults_are_deepworks() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("config.json");
        let fresh = load(&path);
        assert_eq!(
            (fresh.settings.steps, fresh.settings.timeout_secs),
            (None, None)
        );
        assert_eq!(
            (fresh.defaults.steps, fresh.defaults.timeout_secs),
            (4, 900)
        );
        let s = DeepworkSettings {
            transport: "bridge".into(),
            chat: "fast".into(),
            ..Default::default()
        };
        let view = save(&path, &s).unwrap();
        assert_eq!(
            (view.settings.steps, view.settings.timeout_secs),
            (None, None)
        );
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v, serde_json::json!({"chat": "fast"}));
    }

    #[test]
    fn keys_the_form_does_not_edit_survive_a_save() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("config.json");
        std::fs::write(
            &path,
            r#"{"chat": "old", "debug_port": 9444, "chat_url": "example.org", "prespawn": false}"#,
        )
        .unwrap();
        let s = DeepworkSettings {
            transport: "bridge".into(),
            chat: "new".into(),
            ..Default::default()
        };
        save(&path, &s).unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "chat": "new", "debug_port": 9444, "chat_url": "example.org", "prespawn": false
            })
        );
    }

    #[test]
    fn a_broken_file_is_reported_not_replaced_by_defaults() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("config.json");
        std::fs::write(&path, "{\n  \"steps\": 4,,\n}").unwrap();
        let v = load(&path);
        let e = v.error.unwrap();
        assert_eq!(e.code, ErrorCode::ConfigBroken);
        assert!(e.message.contains("line 2"), "{}", e.message);
    }

    #[test]
    fn prefs_default_to_russian_and_refuse_unknown_languages() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("prefs.json");
        assert_eq!(load_prefs(&path).language, "ru");
        save_prefs(
            &path,
            &Prefs {
                language: "en".into(),
            },
        )
        .unwrap();
        assert_eq!(load_prefs(&path).language, "en");
        assert!(
            save_prefs(
                &path,
                &Prefs {
                    language: "de".into()
                }
            )
            .is_err()
        );
    }
}
