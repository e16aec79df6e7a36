//! Where states, kinds and outcomes meet SQL. They are stored by their wire names (the same
//! snake_case the API speaks), written with [`Stored::name`] and read with [`column`] /
//! [`column_opt`], which turn a name no variant carries into an error that names the column and
//! the value — never a silent default such as `blocked`. The wire types are stored here; a type
//! of the store's own (a run's outcome) implements [`Stored`] beside its definition, so this
//! file imports no table's file.

use conveyor_api::{JournalKind, Level, LineState, QuestionStatus, StepKind, StepSize, StepState};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

/// A value the database holds that no variant of its type carries.
#[derive(Debug, thiserror::Error)]
#[error("unknown {what} {value:?} in the database")]
pub struct UnknownName {
    /// The type: `line state`, `step kind`, …
    pub what: &'static str,
    /// The stored text.
    pub value: String,
}

/// A type stored by its name.
pub(crate) trait Stored: Sized + Copy + 'static {
    /// What it is, for errors.
    const WHAT: &'static str;
    /// Every value (the names are read back by looking them up here).
    const ALL: &'static [Self];
    /// The stored (and wire) name.
    fn name(self) -> &'static str;

    fn from_name(s: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.name() == s)
    }
}

/// The column `col` of `row`, by name.
pub(super) fn column<T: Stored>(row: &SqliteRow, col: &str) -> Result<T, sqlx::Error> {
    let s: String = row.try_get(col)?;
    parse(col, &s)
}

/// The nullable column `col` of `row`, by name.
pub(super) fn column_opt<T: Stored>(row: &SqliteRow, col: &str) -> Result<Option<T>, sqlx::Error> {
    let s: Option<String> = row.try_get(col)?;
    s.map(|s| parse(col, &s)).transpose()
}

/// A stored name read outside a row (a scalar query).
pub(super) fn parse<T: Stored>(col: &str, s: &str) -> Result<T, sqlx::Error> {
    T::from_name(s).ok_or_else(|| sqlx::Error::ColumnDecode {
        index: col.into(),
        source: Box::new(UnknownName {
            what: T::WHAT,
            value: s.into(),
        }),
    })
}

impl Stored for LineState {
    const WHAT: &'static str = "line state";
    const ALL: &'static [Self] = &LineState::ALL;
    fn name(self) -> &'static str {
        self.as_str()
    }
}

impl Stored for StepState {
    const WHAT: &'static str = "step state";
    const ALL: &'static [Self] = &StepState::ALL;
    fn name(self) -> &'static str {
        self.as_str()
    }
}

impl Stored for StepSize {
    const WHAT: &'static str = "step size";
    const ALL: &'static [Self] = StepSize::ALL;
    fn name(self) -> &'static str {
        self.as_str()
    }
}

impl Stored for StepKind {
    const WHAT: &'static str = "step kind";
    const ALL: &'static [Self] = StepKind::ALL;
    fn name(self) -> &'static str {
        self.as_str()
    }
}

impl Stored for conveyor_api::ReasonCode {
    const WHAT: &'static str = "reason code";
    const ALL: &'static [Self] = conveyor_api::ReasonCode::ALL;
    fn name(self) -> &'static str {
        self.as_str()
    }
}

impl Stored for Level {
    const WHAT: &'static str = "level";
    const ALL: &'static [Self] = &[Level::Light, Level::Medium, Level::Full];
    fn name(self) -> &'static str {
        self.as_str()
    }
}

impl Stored for JournalKind {
    const WHAT: &'static str = "journal kind";
    const ALL: &'static [Self] = &[
        JournalKind::Fork,
        JournalKind::Question,
        JournalKind::Decided,
        JournalKind::Uncovered,
    ];
    fn name(self) -> &'static str {
        match self {
            JournalKind::Fork => "fork",
            JournalKind::Question => "question",
            JournalKind::Decided => "decided",
            JournalKind::Uncovered => "uncovered",
        }
    }
}

impl Stored for QuestionStatus {
    const WHAT: &'static str = "question status";
    const ALL: &'static [Self] = QuestionStatus::ALL;
    fn name(self) -> &'static str {
        self.as_str()
    }
}

impl Stored for conveyor_api::QuestionKind {
    const WHAT: &'static str = "question kind";
    const ALL: &'static [Self] = conveyor_api::QuestionKind::ALL;
    fn name(self) -> &'static str {
        self.as_str()
    }
}

impl Stored for conveyor_api::DecisionSource {
    const WHAT: &'static str = "decision source";
    const ALL: &'static [Self] = conveyor_api::DecisionSource::ALL;
    fn name(self) -> &'static str {
        self.as_str()
    }
}

impl Stored for conveyor_api::DeployOutcome {
    const WHAT: &'static str = "deploy outcome";
    const ALL: &'static [Self] = conveyor_api::DeployOutcome::ALL;
    fn name(self) -> &'static str {
        self.as_str()
    }
}

impl Stored for conveyor_api::RefusalKind {
    const WHAT: &'static str = "refusal kind";
    const ALL: &'static [Self] = conveyor_api::RefusalKind::ALL;
    fn name(self) -> &'static str {
        self.as_str()
    }
}

impl Stored for conveyor_api::Channel {
    const WHAT: &'static str = "outbox channel";
    const ALL: &'static [Self] = conveyor_api::Channel::ALL;
    fn name(self) -> &'static str {
        self.as_str()
    }
}

impl Stored for conveyor_api::OutboxKind {
    const WHAT: &'static str = "outbox kind";
    const ALL: &'static [Self] = conveyor_api::OutboxKind::ALL;
    fn name(self) -> &'static str {
        self.as_str()
    }
}

impl Stored for conveyor_api::OutboxState {
    const WHAT: &'static str = "outbox state";
    const ALL: &'static [Self] = conveyor_api::OutboxState::ALL;
    fn name(self) -> &'static str {
        self.as_str()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name reads back as the value that wrote it, and it is the wire name (serde's).
    fn round_trips<T: Stored + serde::Serialize + PartialEq + std::fmt::Debug>() {
        for v in T::ALL {
            assert_eq!(T::from_name(v.name()), Some(*v));
            assert_eq!(
                serde_json::to_value(v).unwrap(),
                serde_json::Value::String(v.name().into()),
                "{}",
                T::WHAT
            );
        }
        assert_eq!(T::from_name("no such name"), None);
    }

    #[test]
    fn names_round_trip_and_match_the_wire() {
        round_trips::<LineState>();
        round_trips::<StepState>();
        round_trips::<StepKind>();
        round_trips::<Level>();
        round_trips::<JournalKind>();
        round_trips::<QuestionStatus>();
        round_trips::<conveyor_api::Channel>();
        round_trips::<conveyor_api::OutboxKind>();
        round_trips::<conveyor_api::OutboxState>();
        round_trips::<conveyor_api::RefusalKind>();
    }

    #[test]
    fn an_unknown_name_is_an_error_that_names_the_column_and_value() {
        let e = parse::<LineState>("state", "exploded").unwrap_err();
        let text = crate::error::Error::from(e).to_string();
        assert!(text.contains("state"), "{text}");
        assert!(text.contains("unknown line state \"exploded\""), "{text}");
    }
}
