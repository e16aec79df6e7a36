//! The rules the daemon applies before any judge run (DESIGN.md, "The judge and the morning
//! list"): pure, given the entry, what its step read, the project's open validated questions,
//! the night and the time.

use crate::clock::Night;

/// Sent back this many times, an entry is no longer sent back: it is shown to Anton.
pub const MAX_REWORKS: i64 = 2;

/// An unvalidated entry as the rules see it.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    /// Normalised text ([`crate::store::questions::normalise`]).
    pub text: &'a str,
    pub created_at: i64,
    pub reversible: Option<bool>,
    pub expensive: Option<bool>,
    pub reworks: i64,
    /// Whether the step it counts from read any of the project's memory.
    pub read_memory: bool,
}

/// What the rules leave of the project.
#[derive(Debug, Clone)]
pub struct Context<'a> {
    /// The project has `memory` globs or there is a vault.
    pub has_memory: bool,
    /// `(id, normalised text)` of the project's open validated questions.
    pub open: &'a [(String, String)],
    pub night: Option<&'a Night>,
}

/// Where the rules put an entry.
#[derive(Debug, Clone, PartialEq)]
pub enum Sorted {
    /// Written by day, reversible or cheap: the default stands, no judge run.
    DecidedByDay,
    /// The same text as an open validated question of the project.
    Duplicate { of: String },
    /// Its step read none of the project's memory.
    ReadMemoryFirst,
    /// For the judge's run.
    Judge,
}

/// Irreversible and expensive: the only entries that may reach Anton by day.
pub fn grave(reversible: Option<bool>, expensive: Option<bool>) -> bool {
    reversible == Some(false) && expensive == Some(true)
}

/// Whether an entry written at `at` was written by day (a night is configured and `at` is not
/// in it).
pub fn by_day(night: Option<&Night>, at: i64) -> bool {
    night.is_some_and(|n| !n.contains(at))
}

/// Sorts one entry.
pub fn sort(e: &Entry<'_>, cx: &Context<'_>) -> Sorted {
    if by_day(cx.night, e.created_at) && !grave(e.reversible, e.expensive) {
        return Sorted::DecidedByDay;
    }
    if let Some((id, _)) = cx.open.iter().find(|(_, t)| t == e.text) {
        return Sorted::Duplicate { of: id.clone() };
    }
    if cx.has_memory && !e.read_memory && e.reworks < MAX_REWORKS {
        return Sorted::ReadMemoryFirst;
    }
    Sorted::Judge
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(text: &str) -> Entry<'_> {
        Entry {
            text,
            created_at: 0,
            reversible: Some(true),
            expensive: Some(false),
            reworks: 0,
            read_memory: false,
        }
    }

    #[test]
    fn the_rules_in_their_order() {
        let open = vec![("q-old".to_string(), "keep the old api".to_string())];
        let cx = Context {
            has_memory: true,
            open: &open,
            night: None,
        };
        assert_eq!(
            sort(&entry("keep the old api"), &cx),
            Sorted::Duplicate { of: "q-old".into() }
        );
        assert_eq!(sort(&entry("use sqlite"), &cx), Sorted::ReadMemoryFirst);
        let read = Entry {
            read_memory: true,
            ..entry("use sqlite")
        };
        assert_eq!(sort(&read, &cx), Sorted::Judge);
        // Sent back twice: judged, not sent back a third time.
        let twice = Entry {
            reworks: 2,
            ..entry("use sqlite")
        };
        assert_eq!(sort(&twice, &cx), Sorted::Judge);
        // No memory anywhere: nothing to have read.
        let bare = Context {
            has_memory: false,
            ..cx.clone()
        };
        assert_eq!(sort(&entry("use sqlite"), &bare), Sorted::Judge);
    }

    #[test]
    fn by_day_only_the_irreversible_and_expensive_are_judged() {
        let night = Night::parse("22:00-08:00", Some("UTC")).unwrap();
        let noon = chrono::DateTime::parse_from_rfc3339("2026-12-02T12:00:00Z")
            .unwrap()
            .timestamp_millis();
        let cx = Context {
            has_memory: false,
            open: &[],
            night: Some(&night),
        };
        let day = Entry {
            created_at: noon,
            ..entry("drop the table")
        };
        assert_eq!(sort(&day, &cx), Sorted::DecidedByDay);
        let grave_one = Entry {
            reversible: Some(false),
            expensive: Some(true),
            ..day.clone()
        };
        assert_eq!(sort(&grave_one, &cx), Sorted::Judge);
        let at_night = Entry {
            created_at: noon + 11 * 3_600_000,
            ..day
        };
        assert_eq!(sort(&at_night, &cx), Sorted::Judge);
    }
}
