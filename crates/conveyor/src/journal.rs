//! The journal: the agent appends JSON lines to `$CONVEYOR_JOURNAL`
//! (`{"kind", "text", "options", "default", "why", "reversible", "expensive"}`); the daemon
//! ingests them after every step and on recovery. Each line is validated; a malformed one is
//! kept raw and flagged, never dropped. Ingestion resumes at a stored byte offset and every
//! entry is keyed on its offset, so ingesting twice stores nothing twice.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use crate::error::{Error, Result};
use crate::store::journal::{At, NewEntry};
use crate::store::{self, Store, now_ms};
use conveyor_api::{JournalKind, QuestionKind};
use serde::Deserialize;

/// A well-formed entry.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub kind: String,
    pub text: String,
    #[serde(default)]
    pub options: Vec<String>,
    #[serde(default)]
    pub default: Option<String>,
    #[serde(default)]
    pub why: Option<String>,
    #[serde(default)]
    pub reversible: Option<bool>,
    #[serde(default)]
    pub expensive: Option<bool>,
}

impl Entry {
    /// The entry's kind (always known for an entry [`parse_line`] accepted).
    pub fn kind(&self) -> Option<JournalKind> {
        match self.kind.as_str() {
            "fork" => Some(JournalKind::Fork),
            "question" => Some(JournalKind::Question),
            "decided" => Some(JournalKind::Decided),
            "uncovered" => Some(JournalKind::Uncovered),
            _ => None,
        }
    }
}

/// What is wrong with a journal line (kept with the raw line, flagged).
#[derive(Debug, thiserror::Error)]
pub enum EntryError {
    #[error("not a journal entry: {0}")]
    NotAnEntry(#[from] serde_json::Error),
    #[error("unknown kind {0:?} (fork, question, decided, uncovered)")]
    UnknownKind(String),
    #[error("empty text")]
    EmptyText,
    #[error("default {0:?} is not one of the options")]
    DefaultNotAnOption(String),
}

/// Validates one journal line.
///
/// # Errors
/// [`EntryError`]: what is wrong with it.
pub fn parse_line(raw: &str) -> std::result::Result<Entry, EntryError> {
    let e: Entry = serde_json::from_str(raw)?;
    if e.kind().is_none() {
        return Err(EntryError::UnknownKind(e.kind));
    }
    if e.text.trim().is_empty() {
        return Err(EntryError::EmptyText);
    }
    if let Some(d) = &e.default
        && !e.options.is_empty()
        && !e.options.contains(d)
    {
        return Err(EntryError::DefaultNotAnOption(d.clone()));
    }
    Ok(e)
}

/// What one ingestion added.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Ingested {
    pub entries: usize,
    pub malformed: usize,
    /// Forks and questions: the entries the judge looks at.
    pub questions: usize,
}

/// Reads the journal file from the line's stored offset and stores each new line.
/// `final_read` also takes a last line without its newline (the step has ended).
///
/// # Errors
/// [`Error::Io`] or [`Error::Db`].
pub async fn ingest(
    db: &Store,
    line_id: &str,
    step_id: Option<&str>,
    file: &Path,
    final_read: bool,
) -> Result<Ingested> {
    let offset = store::lines::journal_offset(&mut *db.conn().await?, line_id).await?;
    let path = file.to_path_buf();
    let start = u64::try_from(offset).unwrap_or(0);
    let bytes = tokio::task::spawn_blocking(move || -> std::io::Result<Vec<u8>> {
        let mut f = match std::fs::File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        f.seek(SeekFrom::Start(start))?;
        let mut b = Vec::new();
        f.read_to_end(&mut b)?;
        Ok(b)
    })
    .await
    .map_err(|e| Error::Internal(e.to_string()))?
    .map_err(|e| Error::io(file, e))?;

    let mut out = Ingested::default();
    let mut tx = db.begin().await?;
    let mut pos = 0usize;
    while pos < bytes.len() {
        let (line, next) = match bytes[pos..].iter().position(|b| *b == b'\n') {
            Some(i) => (&bytes[pos..pos + i], pos + i + 1),
            None if final_read => (&bytes[pos..], bytes.len()),
            None => break,
        };
        let at = offset + i64::try_from(pos).unwrap_or(0);
        pos = next;
        let raw = String::from_utf8_lossy(line)
            .trim_end_matches('\r')
            .to_string();
        if raw.trim().is_empty() {
            continue;
        }
        let now = now_ms();
        let parsed = parse_line(&raw);
        let at = At {
            line_id,
            step_id,
            offset: at,
            now,
        };
        match parsed {
            Ok(e) => {
                let Some(kind) = e.kind() else { continue };
                let entry = NewEntry {
                    kind,
                    text: &e.text,
                    options: &e.options,
                    default: e.default.as_deref(),
                    why: e.why.as_deref(),
                    reversible: e.reversible,
                    expensive: e.expensive,
                    raw: &raw,
                };
                let Some(id) = store::journal::insert(&mut tx, at, entry).await? else {
                    continue;
                };
                out.entries += 1;
                // Every fork and question is judged: it gets a row that says where it stands.
                let qkind = match kind {
                    JournalKind::Fork => Some(QuestionKind::Fork),
                    JournalKind::Question => Some(QuestionKind::Question),
                    JournalKind::Decided | JournalKind::Uncovered => None,
                };
                if let Some(qkind) = qkind {
                    store::questions::insert(&mut tx, line_id, id, qkind, step_id, now).await?;
                    out.questions += 1;
                }
            }
            Err(e) => {
                if store::journal::insert_malformed(&mut tx, at, &e.to_string(), &raw).await? {
                    out.entries += 1;
                    out.malformed += 1;
                }
            }
        }
    }
    let new_offset = offset + i64::try_from(pos).unwrap_or(0);
    store::lines::set_journal_offset(&mut tx, line_id, new_offset).await?;
    tx.commit().await?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validates_entries() {
        assert!(parse_line(r#"{"kind":"decided","text":"used sqlite","why":"simple"}"#).is_ok());
        assert!(
            parse_line(r#"{"kind":"question","text":"a or b?","options":["a","b"],"default":"a"}"#)
                .is_ok()
        );
        assert!(matches!(
            parse_line(r#"{"kind":"question","text":"x","options":["a"],"default":"c"}"#),
            Err(EntryError::DefaultNotAnOption(d)) if d == "c"
        ));
        let e = parse_line(r#"{"kind":"gossip","text":"x"}"#).unwrap_err();
        assert!(matches!(&e, EntryError::UnknownKind(k) if k == "gossip"));
        assert!(e.to_string().contains("unknown kind"));
        assert!(matches!(
            parse_line(r#"{"kind":"fork","text":" "}"#),
            Err(EntryError::EmptyText)
        ));
        assert!(matches!(
            parse_line("not json at all"),
            Err(EntryError::NotAnEntry(_))
        ));
        assert!(matches!(
            parse_line(r#"{"kind":"fork","text":"x","extra":1}"#),
            Err(EntryError::NotAnEntry(_))
        ));
    }
}
