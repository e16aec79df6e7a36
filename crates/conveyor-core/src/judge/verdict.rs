//! The judge's verdict file (`$CONVEYOR_VERDICT`): `{"entries": [{"id", "verdict":
//! "validated" | "duplicate" | "rework" | "decided", "duplicate_of"?, "why"}], "level"?}`.
//! One parser serves the run's Stop hook (`conveyord hook verdict`, so the judge can mend its
//! file within its run) and the daemon after the run, which trusts only its own reading.

use std::collections::HashSet;

use conveyor_api::Level;
use serde::Deserialize;

/// What the judge says of one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Call {
    /// It needs Anton.
    Validated,
    /// It repeats `duplicate_of`.
    Duplicate,
    /// Back to the line's session with `why`.
    Rework,
    /// The default stands.
    Decided,
}

/// One entry's verdict.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntryVerdict {
    pub id: String,
    pub verdict: Call,
    #[serde(default)]
    pub duplicate_of: Option<String>,
    pub why: String,
    /// The judge's own reading, when it differs from the agent's.
    #[serde(default)]
    pub reversible: Option<bool>,
    #[serde(default)]
    pub expensive: Option<bool>,
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Verdict {
    pub entries: Vec<EntryVerdict>,
    /// The line's level as the judge sees it (raise only).
    #[serde(default)]
    pub level: Option<Level>,
}

/// What is wrong with a verdict file: said to the judge by its Stop hook, and recorded as the
/// reason of a failed judge run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VerdictError {
    #[error("no verdict was written to $CONVEYOR_VERDICT")]
    Missing,
    #[error("the verdict is not valid JSON of the expected shape: {0}")]
    Shape(String),
    #[error("the verdict does not name these ids: {}", .0.join(", "))]
    Uncovered(Vec<String>),
    #[error("the verdict names ids that were not given: {}", .0.join(", "))]
    Unknown(Vec<String>),
    #[error("the verdict names {0} more than once")]
    Twice(String),
    #[error("entry {id}: `why` is empty")]
    NoWhy { id: String },
    #[error(
        "entry {id}: a duplicate needs `duplicate_of`, one of the open validated questions or an entry validated in this verdict"
    )]
    BadDuplicate { id: String },
}

/// Parses `text` and checks it covers exactly `ids`, each once, every duplicate pointing at
/// one of `open` (the project's open validated questions) or at an entry validated here.
///
/// # Errors
/// [`VerdictError`]: what to mend.
pub fn check(text: &str, ids: &[String], open: &[String]) -> Result<Verdict, VerdictError> {
    if text.trim().is_empty() {
        return Err(VerdictError::Missing);
    }
    let v: Verdict = serde_json::from_str(text).map_err(|e| VerdictError::Shape(e.to_string()))?;
    let given: HashSet<&str> = ids.iter().map(String::as_str).collect();
    let mut seen = HashSet::new();
    for e in &v.entries {
        if !seen.insert(e.id.as_str()) && given.contains(e.id.as_str()) {
            return Err(VerdictError::Twice(e.id.clone()));
        }
    }
    let unknown: Vec<String> = v
        .entries
        .iter()
        .filter(|e| !given.contains(e.id.as_str()))
        .map(|e| e.id.clone())
        .collect();
    if !unknown.is_empty() {
        return Err(VerdictError::Unknown(unknown));
    }
    let uncovered: Vec<String> = ids
        .iter()
        .filter(|id| !seen.contains(id.as_str()))
        .cloned()
        .collect();
    if !uncovered.is_empty() {
        return Err(VerdictError::Uncovered(uncovered));
    }
    let validated: HashSet<&str> = v
        .entries
        .iter()
        .filter(|e| e.verdict == Call::Validated)
        .map(|e| e.id.as_str())
        .collect();
    for e in &v.entries {
        if e.why.trim().is_empty() {
            return Err(VerdictError::NoWhy { id: e.id.clone() });
        }
        if e.verdict == Call::Duplicate {
            let ok = e.duplicate_of.as_deref().is_some_and(|of| {
                of != e.id && (open.iter().any(|o| o == of) || validated.contains(of))
            });
            if !ok {
                return Err(VerdictError::BadDuplicate { id: e.id.clone() });
            }
        }
    }
    Ok(v)
}

/// The Stop hook's answer for a verdict file: `None` lets the run end, else the JSON that
/// blocks it with what to mend.
pub fn hook_answer(text: Option<&str>, ids: &[String], open: &[String]) -> Option<String> {
    let e = check(text.unwrap_or_default(), ids, open).err()?;
    let reason = format!(
        "The verdict file is not right yet: {e}. Write $CONVEYOR_VERDICT again as \
         {{\"entries\": [{{\"id\", \"verdict\": \"validated\" | \"duplicate\" | \"rework\" | \"decided\", \
         \"duplicate_of\"?, \"why\"}}]}} with every id exactly once: {}.",
        ids.join(", ")
    );
    Some(serde_json::json!({"decision": "block", "reason": reason}).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_string()).collect()
    }

    #[test]
    fn a_verdict_covers_every_id_once() {
        let text = r#"{"entries": [
            {"id": "a", "verdict": "validated", "why": "only Anton knows"},
            {"id": "b", "verdict": "duplicate", "duplicate_of": "a", "why": "same as a"},
            {"id": "c", "verdict": "duplicate", "duplicate_of": "old", "why": "asked yesterday"},
            {"id": "d", "verdict": "decided", "why": "the default is safe"}
        ], "level": "full"}"#;
        let v = check(text, &ids(&["a", "b", "c", "d"]), &ids(&["old"])).unwrap();
        assert_eq!(v.entries.len(), 4);
        assert_eq!(v.level, Some(Level::Full));
        assert_eq!(
            check(text, &ids(&["a", "b", "c", "d", "e"]), &ids(&["old"])),
            Err(VerdictError::Uncovered(ids(&["e"])))
        );
        assert_eq!(
            check(text, &ids(&["a", "b", "d"]), &ids(&["old"])),
            Err(VerdictError::Unknown(ids(&["c"])))
        );
    }

    #[test]
    fn broken_verdicts_say_what_to_mend() {
        let given = ids(&["a"]);
        assert_eq!(check("  ", &given, &[]), Err(VerdictError::Missing));
        assert!(matches!(
            check("{\"entries\": [", &given, &[]),
            Err(VerdictError::Shape(_))
        ));
        assert!(matches!(
            check(
                r#"{"entries": [{"id": "a", "verdict": "maybe", "why": "x"}]}"#,
                &given,
                &[]
            ),
            Err(VerdictError::Shape(_))
        ));
        assert_eq!(
            check(
                r#"{"entries": [{"id": "a", "verdict": "decided", "why": "x"}, {"id": "a", "verdict": "rework", "why": "y"}]}"#,
                &given,
                &[]
            ),
            Err(VerdictError::Twice("a".into()))
        );
        assert_eq!(
            check(
                r#"{"entries": [{"id": "a", "verdict": "decided", "why": " "}]}"#,
                &given,
                &[]
            ),
            Err(VerdictError::NoWhy { id: "a".into() })
        );
        // A duplicate of nothing open, or of itself.
        for of in ["\"zzz\"", "\"a\"", "null"] {
            let t = format!(
                r#"{{"entries": [{{"id": "a", "verdict": "duplicate", "duplicate_of": {of}, "why": "x"}}]}}"#
            );
            assert_eq!(
                check(&t, &given, &[]),
                Err(VerdictError::BadDuplicate { id: "a".into() })
            );
        }
    }

    #[test]
    fn the_hook_blocks_until_the_file_is_right() {
        let given = ids(&["q1"]);
        let block = hook_answer(None, &given, &[]).unwrap();
        let v: serde_json::Value = serde_json::from_str(&block).unwrap();
        assert_eq!(v["decision"], "block");
        assert!(v["reason"].as_str().unwrap().contains("q1"), "{block}");
        let good = r#"{"entries": [{"id": "q1", "verdict": "validated", "why": "x"}]}"#;
        assert_eq!(hook_answer(Some(good), &given, &[]), None);
    }
}
