//! `config.json`: where it is, what it may say, and what it means.
//!
//! The file is found at `--config FILE`, else in the user's config folder
//! (`$XDG_CONFIG_HOME/deepwork/config.json` on Linux). Without a file the bridge is looked up
//! at `../ollama_orchestro/ask.mjs` beside the executable's folder. A broken file is an error
//! naming the file, line and column; an unknown key is an error too (a typo must not fall
//! back to a default silently). Relative paths in the file are relative to the file's folder.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

/// The default number of steps.
pub const DEFAULT_STEPS: usize = 4;
/// The default chat of the bridge (orchestro's `think` from its `chats.json`).
pub const DEFAULT_CHAT: &str = "think";
/// The default bridge timeout: 15 minutes.
pub const DEFAULT_TIMEOUT_SECS: u64 = 15 * 60;
/// The bridge's browser debugging port.
pub const DEFAULT_DEBUG_PORT: u16 = 9333;
/// What a chat tab's URL contains.
pub const DEFAULT_CHAT_URL: &str = "chat.deepseek.com";
/// The most steps a run may take.
pub const MAX_STEPS: usize = 50;
/// Whether a step's bridge is started before its message is ready (Linux only; see
/// [`BridgeConfig::prespawn`]).
pub const DEFAULT_PRESPAWN: bool = true;

/// Why the configuration cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file exists (or was named) but cannot be read.
    #[error("cannot read config file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid JSON, or a value has the wrong type, or a key is unknown.
    #[error("config file {} is broken at line {line}, column {column}: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong there.
        message: String,
    },
    /// A value is out of range or a needed value is missing.
    #[error("{}: `{field}` {message}", source_name(.path))]
    Invalid {
        /// The file, when the value came from one.
        path: Option<PathBuf>,
        /// The key.
        field: &'static str,
        /// What is wrong.
        message: String,
    },
}

fn source_name(path: &Option<PathBuf>) -> String {
    match path {
        Some(p) => format!("config file {}", p.display()),
        None => "settings".to_owned(),
    }
}

/// The keys of `config.json`, as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// Format version; 1 when absent.
    pub version: Option<u32>,
    /// `"bridge"` (default) or `"openai"`.
    pub transport: Option<TransportKind>,
    /// Path of the bridge's `ask.mjs`.
    pub bridge: Option<PathBuf>,
    /// The bridge's chat name.
    pub chat: Option<String>,
    /// Steps per run.
    pub steps: Option<usize>,
    /// The node binary.
    pub node: Option<PathBuf>,
    /// Seconds a step may take before the transport gives up.
    pub timeout_secs: Option<u64>,
    /// OpenAI-compatible endpoint, e.g. `http://127.0.0.1:11434/v1`.
    pub base_url: Option<String>,
    /// Model name for the OpenAI-compatible endpoint.
    pub model: Option<String>,
    /// Name of the environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// Folder with prompt overrides.
    pub prompts: Option<PathBuf>,
    /// The bridge browser's debugging port (for `--check`).
    pub debug_port: Option<u16>,
    /// What a chat tab's URL contains (for `--check`).
    pub chat_url: Option<String>,
    /// Start each step's bridge before its message is ready (Linux; ignored elsewhere).
    pub prespawn: Option<bool>,
}

/// Which transport a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TransportKind {
    /// Anton's Node bridge to the web chat.
    Bridge,
    /// An OpenAI-compatible HTTP endpoint.
    Openai,
}

/// Values given on the command line (or by the app), which win over the file.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--bridge`: also selects the bridge transport.
    pub bridge: Option<PathBuf>,
    /// `--chat`.
    pub chat: Option<String>,
    /// `--steps`.
    pub steps: Option<usize>,
}

/// The bridge transport's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BridgeConfig {
    /// The node binary.
    pub node: PathBuf,
    /// `ask.mjs`.
    pub bridge: PathBuf,
    /// The chat name.
    pub chat: String,
    /// Per step.
    pub timeout: Duration,
    /// The browser's debugging port.
    pub debug_port: u16,
    /// What a chat tab's URL contains.
    pub chat_url: String,
    /// On Linux, start a step's bridge as soon as the step is certain to be sent, its
    /// `--file` a named pipe that gets the message when it is ready, so that Node starts up
    /// while deepwork works. Ignored on other systems, where the bridge always starts when its
    /// message is ready, from a regular file.
    pub prespawn: bool,
}

/// The OpenAI-compatible transport's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenAiConfig {
    /// Up to and including `/v1`.
    pub base_url: String,
    /// The model.
    pub model: String,
    /// The environment variable with the key, if any.
    pub api_key_env: Option<String>,
    /// Per step.
    pub timeout: Duration,
}

/// The transport of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportConfig {
    /// See [`BridgeConfig`].
    Bridge(BridgeConfig),
    /// See [`OpenAiConfig`].
    OpenAi(OpenAiConfig),
}

/// A validated configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// The file it came from, if any.
    pub source: Option<PathBuf>,
    /// How messages travel.
    pub transport: TransportConfig,
    /// Steps per run.
    pub steps: usize,
    /// Prompt overrides: the configured folder, else `prompts/` beside the config file when
    /// that exists.
    pub prompts: Option<PathBuf>,
}

/// Where the user's config file lives by default.
pub fn default_path() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "deepwork").map(|d| d.config_dir().join("config.json"))
}

/// Where the bridge is when nothing says otherwise: `../ollama_orchestro/ask.mjs` beside the
/// executable's folder.
pub fn default_bridge(exe: &Path) -> PathBuf {
    let dir = exe.parent().unwrap_or(Path::new("."));
    dir.join("..").join("ollama_orchestro").join("ask.mjs")
}

impl ConfigFile {
    /// Reads and parses a config file.
    ///
    /// # Errors
    /// [`ConfigError::Read`] or [`ConfigError::Parse`].
    pub fn read(path: &Path) -> Result<ConfigFile, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        ConfigFile::parse(&text, path)
    }

    /// Parses config text; `path` names it in errors.
    ///
    /// # Errors
    /// [`ConfigError::Parse`].
    pub fn parse(text: &str, path: &Path) -> Result<ConfigFile, ConfigError> {
        // A BOM is common in files saved by Windows editors.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        serde_json::from_str(text).map_err(|e| {
            let full = e.to_string();
            let message = match full.rfind(" at line ") {
                Some(i) => full[..i].to_owned(),
                None => full,
            };
            ConfigError::Parse {
                path: path.to_owned(),
                line: e.line(),
                column: e.column(),
                message,
            }
        })
    }
}

impl Config {
    /// Finds the config file (`explicit`, else the user's default if it exists), reads it and
    /// resolves it with the overrides.
    ///
    /// # Errors
    /// See [`ConfigError`]; an explicit file that does not exist is an error.
    pub fn load(
        explicit: Option<&Path>,
        overrides: &Overrides,
        exe: &Path,
    ) -> Result<Config, ConfigError> {
        let (file, path) = match explicit {
            Some(p) => (ConfigFile::read(p)?, Some(p.to_owned())),
            None => match default_path().filter(|p| p.exists()) {
                Some(p) => (ConfigFile::read(&p)?, Some(p)),
                None => (ConfigFile::default(), None),
            },
        };
        Config::resolve(file, path, overrides, exe)
    }

    /// Validates a parsed file together with the overrides.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming the field.
    pub fn resolve(
        file: ConfigFile,
        path: Option<PathBuf>,
        overrides: &Overrides,
        exe: &Path,
    ) -> Result<Config, ConfigError> {
        let invalid = |field, message: String| ConfigError::Invalid {
            path: path.clone(),
            field,
            message,
        };
        let base = path
            .as_deref()
            .and_then(Path::parent)
            .map(Path::to_path_buf);
        let rel = |p: PathBuf| match &base {
            Some(b) if p.is_relative() => b.join(p),
            _ => p,
        };
        if let Some(v) = file.version
            && v != 1
        {
            return Err(invalid(
                "version",
                format!("is {v}; this deepwork reads version 1"),
            ));
        }
        let steps = overrides.steps.or(file.steps).unwrap_or(DEFAULT_STEPS);
        if !(1..=MAX_STEPS).contains(&steps) {
            return Err(invalid(
                "steps",
                format!("must be between 1 and {MAX_STEPS}, got {steps}"),
            ));
        }
        let timeout_secs = file.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS);
        if timeout_secs == 0 {
            return Err(invalid("timeout_secs", "must be at least 1".into()));
        }
        let timeout = Duration::from_secs(timeout_secs);
        let kind = if overrides.bridge.is_some() {
            TransportKind::Bridge
        } else {
            file.transport.unwrap_or(TransportKind::Bridge)
        };
        let transport = match kind {
            TransportKind::Bridge => {
                let chat = overrides
                    .chat
                    .clone()
                    .or(file.chat)
                    .unwrap_or_else(|| DEFAULT_CHAT.to_owned());
                if chat.trim().is_empty() {
                    return Err(invalid("chat", "must not be empty".into()));
                }
                let bridge = match overrides.bridge.clone() {
                    Some(b) => b,
                    None => file.bridge.map(&rel).unwrap_or_else(|| default_bridge(exe)),
                };
                TransportConfig::Bridge(BridgeConfig {
                    node: file.node.unwrap_or_else(|| PathBuf::from("node")),
                    bridge,
                    chat,
                    timeout,
                    debug_port: file.debug_port.unwrap_or(DEFAULT_DEBUG_PORT),
                    chat_url: file.chat_url.unwrap_or_else(|| DEFAULT_CHAT_URL.to_owned()),
                    prespawn: file.prespawn.unwrap_or(DEFAULT_PRESPAWN),
                })
            }
            TransportKind::Openai => {
                let base_url = file.base_url.ok_or_else(|| {
                    invalid(
                        "base_url",
                        "is required when transport is \"openai\"".into(),
                    )
                })?;
                if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
                    return Err(invalid(
                        "base_url",
                        format!("must start with http:// or https://, got {base_url:?}"),
                    ));
                }
                let model = file.model.ok_or_else(|| {
                    invalid("model", "is required when transport is \"openai\"".into())
                })?;
                TransportConfig::OpenAi(OpenAiConfig {
                    base_url: base_url.trim_end_matches('/').to_owned(),
                    model,
                    api_key_env: file.api_key_env,
                    timeout,
                })
            }
        };
        let prompts = match file.prompts {
            Some(p) => Some(rel(p)),
            None => base.map(|b| b.join("prompts")).filter(|p| p.is_dir()),
        };
        Ok(Config {
            source: path,
            transport,
            steps,
            prompts,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ConfigFile, ConfigError> {
        ConfigFile::parse(text, Path::new("/cfg/config.json"))
    }

    #[test]
    fn broken_json_names_file_line_and_column() {
        let e = parse("{\n  \"chat\": \"think\",\n  \"steps\": 4,,\n}").unwrap_err();
        let ConfigError::Parse { line, column, .. } = &e else {
            panic!("{e:?}")
        };
        assert_eq!((*line, *column), (3, 14));
        let text = e.to_string();
        assert!(
            text.starts_with("config file /cfg/config.json is broken at line 3, column 14: "),
            "{text}"
        );
    }

    #[test]
    fn unknown_keys_and_wrong_types_are_errors() {
        assert!(
            parse(r#"{"stepz": 4}"#)
                .unwrap_err()
                .to_string()
                .contains("unknown field `stepz`")
        );
        assert!(
            parse(r#"{"steps": "four"}"#)
                .unwrap_err()
                .to_string()
                .contains("invalid type")
        );
        assert!(parse("\u{feff}{\"steps\": 2}").is_ok());
    }

    #[test]
    fn defaults_without_a_file() {
        let c = Config::resolve(
            ConfigFile::default(),
            None,
            &Overrides::default(),
            Path::new("/opt/deepwork/deepwork"),
        )
        .unwrap();
        assert_eq!(c.steps, 4);
        let TransportConfig::Bridge(b) = c.transport else {
            panic!()
        };
        assert_eq!(b.chat, "think");
        assert_eq!(
            b.bridge,
            Path::new("/opt/deepwork/../ollama_orchestro/ask.mjs")
        );
        assert_eq!(b.timeout, Duration::from_secs(900));
        assert!(b.prespawn);
    }

    #[test]
    fn prespawn_can_be_turned_off_and_must_be_a_boolean() {
        let file = parse(r#"{"prespawn": false}"#).unwrap();
        let c = Config::resolve(file, None, &Overrides::default(), Path::new("/x")).unwrap();
        let TransportConfig::Bridge(b) = c.transport else {
            panic!()
        };
        assert!(!b.prespawn);
        let e = parse("{\n  \"prespawn\": \"no\"\n}").unwrap_err();
        let ConfigError::Parse { line, message, .. } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(*line, 2, "{e}");
        assert!(message.contains("expected a boolean"), "{e}");
    }

    #[test]
    fn relative_paths_are_relative_to_the_file_and_overrides_win() {
        let file = parse(r#"{"bridge": "../oo/ask.mjs", "chat": "fast", "steps": 3}"#).unwrap();
        let ov = Overrides {
            chat: Some("think".into()),
            steps: Some(6),
            bridge: None,
        };
        let c = Config::resolve(
            file,
            Some("/cfg/config.json".into()),
            &ov,
            Path::new("/x/dw"),
        )
        .unwrap();
        let TransportConfig::Bridge(b) = &c.transport else {
            panic!()
        };
        assert_eq!(b.bridge, Path::new("/cfg/../oo/ask.mjs"));
        assert_eq!((b.chat.as_str(), c.steps), ("think", 6));
    }

    #[test]
    fn openai_needs_url_and_model() {
        let file = parse(r#"{"transport": "openai", "model": "m"}"#).unwrap();
        let e = Config::resolve(
            file,
            Some("/c.json".into()),
            &Overrides::default(),
            Path::new("/x"),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "config file /c.json: `base_url` is required when transport is \"openai\""
        );
        let file =
            parse(r#"{"transport": "openai", "base_url": "http://127.0.0.1:1/v1/", "model": "m"}"#)
                .unwrap();
        let c = Config::resolve(file, None, &Overrides::default(), Path::new("/x")).unwrap();
        let TransportConfig::OpenAi(o) = c.transport else {
            panic!()
        };
        assert_eq!(o.base_url, "http://127.0.0.1:1/v1");
    }

    #[test]
    fn out_of_range_values_name_the_field() {
        let file = parse(r#"{"steps": 0}"#).unwrap();
        let e = Config::resolve(file, None, &Overrides::default(), Path::new("/x")).unwrap_err();
        assert!(
            matches!(e, ConfigError::Invalid { field: "steps", .. }),
            "{e}"
        );
    }
}
