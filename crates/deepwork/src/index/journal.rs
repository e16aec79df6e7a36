//! What the index's refreshes added and removed, kept in order (see [`Journal`]). A leaf: the
//! index holds one, and its refresh writes to it.

use std::collections::VecDeque;

/// Files that appeared in or disappeared from the index in one check.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathChanges {
    /// Paths now indexed that were not, sorted.
    pub added: Vec<Box<str>>,
    /// Paths indexed before and no longer, sorted.
    pub removed: Vec<Box<str>>,
}

/// The paths a journal keeps before it drops its oldest: far more than a model is ever named
/// at once (`list_paths`), and a few MB at most.
const JOURNAL_PATHS: usize = 20_000;

/// Every path the index's refreshes added or removed, numbered by refresh, so that whoever
/// told the model the folder's files at some point can name what changed since, whoever
/// refreshed the index meanwhile: a run asks at each step, while pult's watcher refreshes the
/// same index whenever the disk changes, and what the watcher saw first must still reach the
/// model. Bounded: past [`JOURNAL_PATHS`] the oldest are dropped, and a question about a point
/// before them has no answer (`Index::changes_since` is `None`: too much changed to name).
#[derive(Debug, Clone, Default)]
pub(super) struct Journal {
    /// The number the next refresh that changes something gets.
    pub(super) next: u64,
    /// The oldest refresh whose paths are all still here.
    pub(super) first: u64,
    /// `(refresh, added, path)`, oldest first.
    pub(super) entries: VecDeque<(u64, bool, Box<str>)>,
}

impl Journal {
    pub(super) fn record(&mut self, changes: &PathChanges) {
        if !changes.changed() {
            return;
        }
        let n = self.next;
        self.next += 1;
        let added = changes.added.iter().map(|p| (n, true, p.clone()));
        let removed = changes.removed.iter().map(|p| (n, false, p.clone()));
        self.entries.extend(added.chain(removed));
        while self.entries.len() > JOURNAL_PATHS {
            if let Some((dropped, ..)) = self.entries.pop_front() {
                self.first = dropped + 1;
            }
        }
    }
}

impl PathChanges {
    /// Whether any file came or went.
    pub fn changed(&self) -> bool {
        !self.added.is_empty() || !self.removed.is_empty()
    }
}
