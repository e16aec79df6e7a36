//! What reading a config file can find in it besides the values: a value that cannot be used
//! (an error), a key no code reads yet (a warning), and where in the text a TOML error is.
//! Below every part of the config, which all report this way.

/// A key that is parsed (a wrong type is an error) and documented, but that no code reads yet:
/// the feature that reads it comes with its own issue. When set, it is named in a warning
/// (`conveyor.toml` at load, a project's `.conveyor.toml` at each gate), never silently ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotYetRead {
    pub key: &'static str,
    /// The feature that will read it.
    pub read_by: &'static str,
}

/// A `conveyor.toml` that parses but cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Invalid {
    #[error("slots must be at least 1")]
    NoSlots,
    #[error("budget.{field} {rule}")]
    Budget { field: String, rule: &'static str },
    #[error("token_file is required")]
    NoToken,
    #[error("{0}")]
    Night(String),
    #[error("{field} {rule}")]
    Field {
        field: &'static str,
        rule: &'static str,
    },
}

/// "line L, column C: message" for a TOML error.
pub(crate) fn describe_toml_error(text: &str, e: &toml::de::Error) -> String {
    match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!("line {line}, column {col}: {}", e.message())
        }
        None => e.message().to_string(),
    }
}
