//! What the index knew of a folder or an ignore file when it read it: its time, and whether
//! that time was too recent to trust.
//!
//! The ignore files are looked for during the walk itself, each folder's just before the
//! walker reads them: a change after that look shows in their times, or in the folder's.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::walk::RULE_FILES;

/// How far apart a change and the listing must be for the folder's time to tell them apart on
/// any file system we may meet (FAT keeps times to 2 s).
const RACY: Duration = Duration::from_secs(2);

/// What the index knew of a folder when it listed it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Stamp {
    pub(super) modified: Option<SystemTime>,
    /// Changed too shortly before it was read: read it again at the next check.
    pub(super) racy: bool,
}

impl Stamp {
    /// A folder's: one without a time is always listed again.
    fn new(modified: Option<SystemTime>, listed: SystemTime) -> Stamp {
        let racy = match (modified, listed.checked_sub(RACY)) {
            (Some(m), Some(edge)) => m > edge,
            _ => true,
        };
        Stamp { modified, racy }
    }

    /// An ignore file's, `None` when it is absent (and stays so while it stays absent).
    fn of_rule(meta: std::io::Result<std::fs::Metadata>, read: SystemTime) -> Stamp {
        match meta {
            Ok(m) => Stamp::new(m.modified().ok(), read),
            Err(_) => Stamp {
                modified: None,
                racy: false,
            },
        }
    }

    /// Whether the file or folder now differs from what was read.
    pub(super) fn stale(&self, now: &std::io::Result<std::fs::Metadata>) -> bool {
        self.racy || modified(now) != self.modified
    }
}

/// What the walk's looks at folders found: their times and ignore files. Behind a lock: the
/// filter that looks runs on every walker thread (one lock per folder, not per file).
#[derive(Default)]
pub(super) struct Looks(std::sync::Mutex<Looked>);

/// Folders with their stamps, ignore files with theirs.
#[derive(Default)]
pub(super) struct Looked {
    pub(super) dirs: Vec<(Box<str>, Stamp)>,
    pub(super) rules: Vec<(PathBuf, Stamp)>,
}

impl Looks {
    /// Looks at the folder at `path` (`rel` from the root) before the walker reads it: its
    /// time, and its ignore files' times. A file added or removed after this look changes
    /// the folder's time; an ignore file edited after it changes its own; a change in the
    /// same clock tick as the look is caught by the racy rule. A folder gone meanwhile is
    /// not recorded.
    pub(super) fn look(&self, path: &Path, rel: &str, listed: SystemTime) {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return;
        };
        let stamp = Stamp::new(meta.modified().ok(), listed);
        let mut rules = Vec::new();
        rule_files(path, listed, &mut rules);
        let mut found = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        found.dirs.push((rel.into(), stamp));
        found.rules.extend(rules);
    }

    pub(super) fn take(&self) -> Looked {
        std::mem::take(
            &mut *self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}

/// The ignore files of the folder at `dir` that exist, and its repository's `info/exclude`
/// (present or not) when it holds a `.git`.
fn rule_files(dir: &Path, read: SystemTime, out: &mut Vec<(PathBuf, Stamp)>) {
    for name in RULE_FILES {
        let p = dir.join(name);
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if name == ".git" {
            // The walk reads a repository's info/exclude: follow it, present or not.
            let exclude = p.join("info").join("exclude");
            let stamp = Stamp::of_rule(std::fs::symlink_metadata(&exclude), read);
            out.push((exclude, stamp));
        } else {
            out.push((p, Stamp::of_rule(Ok(meta), read)));
        }
    }
}

fn modified(meta: &std::io::Result<std::fs::Metadata>) -> Option<SystemTime> {
    meta.as_ref().ok().and_then(|m| m.modified().ok())
}
