//! The rules the daemon applies before any judge run (DESIGN.md, "The judge and the morning
//! list"): pure, given the entry, what its step read, the project's open validated questions,
//! the night and the time.

use crate::night::Night;

/// Sent back this many times, an entry is no longer sent back: it is shown to Anton.
pub const MAX_REWORKS: i64 = 2;

/// An unvalidated entry as the rules see it.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    /// Normalised text ([`crate::text::normalise`]).
    pub text: &'a str,
    pub created_at: i64,
    pub reversible: Option<bool>,
    pub expensive: Option<bool>,
    pub reworks: i64,
    /// Whether the step it counts from read any of the project's memory.
    pub read_memory: bool,
    /// Whether it has a default, and a why.
    pub has_default: bool,
    pub has_why: bool,
    /// The step that wrote it, when one did.
    pub step: Option<&'a str>,
}

/// What the rules leave of the project.
#[derive(Debug, Clone)]
pub struct Context<'a> {
    /// The project has `memory` globs or there is a vault.
    pub has_memory: bool,
    /// `(id, normalised text)` of the project's open validated questions.
    pub open: &'a [(String, String)],
    pub night: Option<&'a Night>,
    /// `(id, normalised text)` of the complete entries being sorted with it: an incomplete
    /// entry asked again in full is superseded by the full one.
    pub complete: &'a [(String, String)],
    /// `(step, id, normalised text, created_at)` of the line's entries that are no duplicates:
    /// a step run again after an interrupted attempt (a daemon crash) writes its entries
    /// again, and the second is the first one.
    pub written: &'a [(String, String, String, i64)],
}

/// Where the rules put an entry.
#[derive(Debug, Clone, PartialEq)]
pub enum Sorted {
    /// Written by day, reversible or cheap: the default stands, no judge run.
    DecidedByDay,
    /// The same text as an open validated question of the project, or as an entry its own step
    /// wrote before (in an attempt that was cut).
    Duplicate { of: String },
    /// It lacks what a question needs before it reaches Anton (the before-question boundary:
    /// text, a default, a why; options or a free answer): back to its session, saying what.
    Incomplete { lacks: Vec<&'static str> },
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
    if let Some(step) = e.step
        && let Some((_, id, ..)) = cx
            .written
            .iter()
            .find(|(s, _, t, at)| s == step && t == e.text && *at < e.created_at)
    {
        return Sorted::Duplicate { of: id.clone() };
    }
    if by_day(cx.night, e.created_at) && !grave(e.reversible, e.expensive) {
        return Sorted::DecidedByDay;
    }
    if let Some((id, _)) = cx.open.iter().find(|(_, t)| t == e.text) {
        return Sorted::Duplicate { of: id.clone() };
    }
    let mut lacks = Vec::new();
    if e.text.trim().is_empty() {
        lacks.push("a text");
    }
    if !e.has_default {
        lacks.push("a default");
    }
    if !e.has_why {
        lacks.push("a why");
    }
    if !lacks.is_empty()
        && let Some((id, _)) = cx.complete.iter().find(|(_, t)| t == e.text)
    {
        return Sorted::Duplicate { of: id.clone() };
    }
    if !lacks.is_empty() && e.reworks < MAX_REWORKS {
        return Sorted::Incomplete { lacks };
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
            has_default: true,
            has_why: true,
            step: None,
        }
    }

    /// Before a question reaches Anton it has a default and a why (its text was checked when
    /// the journal was read); one without is sent back saying what it lacks, twice at most.
    #[test]
    fn a_question_without_a_default_or_why_goes_back_saying_what_it_lacks() {
        let cx = Context {
            has_memory: false,
            open: &[],
            night: None,
            complete: &[],
            written: &[],
        };
        let bare = Entry {
            has_default: false,
            has_why: false,
            ..entry("use sqlite")
        };
        assert_eq!(
            sort(&bare, &cx),
            Sorted::Incomplete {
                lacks: vec!["a default", "a why"]
            }
        );
        let twice = Entry {
            reworks: 2,
            ..bare.clone()
        };
        assert_eq!(sort(&twice, &cx), Sorted::Judge);
        // A duplicate never reaches Anton: nothing to complete.
        let open = vec![("q".to_string(), "use sqlite".to_string())];
        let dup = Context {
            open: &open,
            ..cx.clone()
        };
        assert_eq!(sort(&bare, &dup), Sorted::Duplicate { of: "q".into() });
        // Asked again in full (the rework asked for that): the full one stands for it.
        let full = vec![("q-full".to_string(), "use sqlite".to_string())];
        let again = Context {
            complete: &full,
            ..cx.clone()
        };
        assert_eq!(
            sort(&bare, &again),
            Sorted::Duplicate {
                of: "q-full".into()
            }
        );
    }

    /// A step run again after a cut attempt writes its entries again: the repeat is the entry
    /// written before, whatever became of it; another step's same words are not.
    #[test]
    fn an_entry_its_own_step_wrote_before_is_that_entry() {
        let written = vec![(
            "s2".to_string(),
            "q-first".to_string(),
            "cache in memory".to_string(),
            5,
        )];
        let cx = Context {
            has_memory: false,
            open: &[],
            night: None,
            complete: &[],
            written: &written,
        };
        let again = Entry {
            step: Some("s2"),
            created_at: 9,
            ..entry("cache in memory")
        };
        assert_eq!(
            sort(&again, &cx),
            Sorted::Duplicate {
                of: "q-first".into()
            }
        );
        // The first itself, another step's, and another text go on as before.
        let itself = Entry {
            created_at: 5,
            ..again.clone()
        };
        assert_eq!(sort(&itself, &cx), Sorted::Judge);
        let other_step = Entry {
            step: Some("s3"),
            ..again.clone()
        };
        assert_eq!(sort(&other_step, &cx), Sorted::Judge);
        assert_eq!(
            sort(
                &Entry {
                    step: Some("s2"),
                    created_at: 9,
                    ..entry("cache on disk")
                },
                &cx
            ),
            Sorted::Judge
        );
    }

    #[test]
    fn the_rules_in_their_order() {
        let open = vec![("q-old".to_string(), "keep the old api".to_string())];
        let cx = Context {
            has_memory: true,
            open: &open,
            night: None,
            complete: &[],
            written: &[],
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
            complete: &[],
            written: &[],
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
