//! Keeping the index fresh, not stale.
//!
//! Before each step the run calls [`Index::refresh`]. It stats every indexed folder
//! (creating, deleting or renaming an entry changes its folder's modification time, on every
//! platform's file systems) and every ignore file (editing one in place does not), and lists
//! again only the folders that changed, with the same rules as the full walk. A folder or
//! ignore file whose time is too close to when it was read to tell a later change apart
//! (coarse timestamps: a jiffy on Linux, 2 s on FAT) counts as changed until it is older than
//! that, as git does with its "racy" index entries. An edit inside a file changes no folder
//! and needs no check: the index holds no sizes or contents (see `files`).

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use crate::par::par_map;
use crate::walk::{self, Kind};

use super::files::{Index, IndexedFile, full_path_into, gather};
use super::journal::PathChanges;
use super::stamp::{Looked, Looks, Stamp};

/// What one freshness check did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Refreshed {
    /// Folders whose time was checked.
    pub checked: usize,
    /// Folders listed again (gone ones included).
    pub relisted: usize,
    /// An ignore file changed (or something the check cannot follow): the folder was walked
    /// again whole.
    pub rebuilt: bool,
}

impl Refreshed {
    /// Whether the index may differ from before the check.
    pub fn changed(&self) -> bool {
        self.relisted > 0 || self.rebuilt
    }
}

impl Index {
    /// Brings the index up to date with the disk: see the module's notes. What it adds and
    /// removes is kept in the index's journal ([`Index::changes_since`]); the paths are copied
    /// only when the check finds a change, so an unchanged folder costs a check alone.
    pub fn refresh(&mut self) -> Refreshed {
        let (done, before) = self.refresh_keeping();
        if let Some(old) = before {
            let changes = self.diff(&old);
            self.journal.record(&changes);
        }
        done
    }

    /// A mark of the index as it is now, for [`Index::changes_since`].
    #[must_use]
    pub fn generation(&self) -> u64 {
        self.journal.next
    }

    /// The files added to and removed from the index since `mark` (a [`Index::generation`]),
    /// by any refresh, each sorted; a file that came and went again in between is in neither.
    /// `None` when the journal no longer reaches back that far.
    #[must_use]
    pub fn changes_since(&self, mark: u64) -> Option<PathChanges> {
        if mark < self.journal.first {
            return None;
        }
        // Per path, its first and last change since the mark: added first and removed last is
        // a file that came and went; removed first and added last was there all along.
        let mut seen: HashMap<&str, (bool, bool)> = HashMap::new();
        for (n, added, path) in &self.journal.entries {
            if *n >= mark {
                seen.entry(path)
                    .and_modify(|(_, last)| *last = *added)
                    .or_insert((*added, *added));
            }
        }
        let mut changes = PathChanges::default();
        for (path, (first, last)) in seen {
            match (first, last) {
                (true, true) => changes.added.push(path.into()),
                (false, false) => changes.removed.push(path.into()),
                _ => {}
            }
        }
        changes.added.sort_unstable();
        changes.removed.sort_unstable();
        Some(changes)
    }

    /// The files in the index and not in `old`, and the other way round (both sorted).
    fn diff(&self, old: &[Box<str>]) -> PathChanges {
        let mut changes = PathChanges::default();
        let (mut i, mut j) = (0, 0);
        let new = &self.files;
        while i < old.len() || j < new.len() {
            match (old.get(i), new.get(j)) {
                (Some(o), Some(n)) if *o == n.path => {
                    i += 1;
                    j += 1;
                }
                (Some(o), Some(n)) if **o < *n.path => {
                    changes.removed.push(o.clone());
                    i += 1;
                }
                (Some(o), None) => {
                    changes.removed.push(o.clone());
                    i += 1;
                }
                (_, Some(n)) => {
                    changes.added.push(n.path.clone());
                    j += 1;
                }
                (None, None) => break,
            }
        }
        changes
    }

    /// The check, and the paths as they were before it changed anything (none when it
    /// changed nothing).
    fn refresh_keeping(&mut self) -> (Refreshed, Option<Vec<Box<str>>>) {
        let snapshot = |index: &Index| {
            Some(
                index
                    .files
                    .iter()
                    .map(|f| f.path.clone())
                    .collect::<Vec<_>>(),
            )
        };
        self.stats.checks += 1;
        let mut done = Refreshed {
            checked: self.dirs.len(),
            ..Refreshed::default()
        };
        let rules_changed = self
            .rules
            .iter()
            .any(|(p, was)| was.stale(&std::fs::symlink_metadata(p)));
        // An empty map means the root itself could not be walked: try again whole.
        if rules_changed || self.dirs.is_empty() {
            let before = snapshot(self);
            self.rebuild();
            done.rebuilt = true;
            return (done, before);
        }
        let listed = SystemTime::now();
        let (gone, changed) = self.check_dirs();
        if gone.is_empty() && changed.is_empty() {
            return (done, None);
        }
        let before = snapshot(self);
        if gone.iter().any(|g| g.is_empty()) {
            // The root itself is gone or no longer a folder.
            self.rebuild();
            done.rebuilt = true;
            return (done, before);
        }
        done.relisted = gone.len() + changed.len();
        self.stats.relisted += done.relisted;
        self.forget(&gone);
        let targets: HashSet<Box<str>> = changed
            .into_iter()
            .filter(|d| !gone.iter().any(|g| under_or_at(d, g)))
            .collect();
        if !targets.is_empty() && !self.relist(targets, listed) {
            self.rebuild();
            done.rebuilt = true;
        }
        (done, before)
    }

    /// Stats every indexed folder, on all cores; returns the ones that are gone (or no longer
    /// folders) and the ones whose listing may have changed.
    fn check_dirs(&self) -> (Vec<Box<str>>, Vec<Box<str>>) {
        let dirs: Vec<(&Box<str>, &Stamp)> = self.dirs.iter().collect();
        let root = &self.root;
        let verdicts = par_map(&dirs, 64, PathBuf::new, |path, _, (rel, stamp)| {
            full_path_into(root, rel, path);
            match std::fs::symlink_metadata(&*path) {
                Ok(m) if m.is_dir() => (stamp.racy || m.modified().ok() != stamp.modified)
                    .then(|| (false, (*rel).clone())),
                _ => Some((true, (*rel).clone())),
            }
        });
        let (gone, changed): (Vec<_>, Vec<_>) = verdicts.into_iter().partition(|(_, (g, _))| *g);
        let strip =
            |v: Vec<(usize, (bool, Box<str>))>| v.into_iter().map(|(_, (_, d))| d).collect();
        (strip(gone), strip(changed))
    }

    /// Drops the folders in `gone`, everything below them, and their files.
    fn forget(&mut self, gone: &[Box<str>]) {
        if gone.is_empty() {
            return;
        }
        // A deleted folder reports every folder below it gone too: only the topmost ones are
        // tested against each path, or a big deletion would cost paths × folders.
        let all: HashSet<&str> = gone.iter().map(|g| &**g).collect();
        let tops: Vec<&str> = all
            .iter()
            .copied()
            .filter(|g| {
                let mut up = *g;
                while let Some((parent, _)) = up.rsplit_once('/') {
                    if all.contains(parent) {
                        return false;
                    }
                    up = parent;
                }
                g.is_empty() || !all.contains("")
            })
            .collect();
        self.dirs
            .retain(|d, _| !tops.iter().any(|g| under_or_at(d, g)));
        retain_files(&mut self.files, |f| !tops.iter().any(|g| under_or_at(f, g)));
    }

    /// Lists the `targets` again (their files, and whole any folder that appeared in them),
    /// walking down to them from the root so that every ignore file above them applies, as in
    /// the full walk. Returns `false` when an ignore file appeared in a target: the subtrees
    /// kept from before may then be wrong, and the caller walks again whole.
    fn relist(&mut self, targets: HashSet<Box<str>>, listed: SystemTime) -> bool {
        let mut ancestors: HashSet<Box<str>> = HashSet::new();
        for t in &targets {
            let mut rest: &str = t;
            while let Some((up, _)) = rest.rsplit_once('/') {
                ancestors.insert(up.into());
                rest = up;
            }
            if !t.is_empty() {
                ancestors.insert("".into());
            }
        }
        let known: HashSet<Box<str>> = self.dirs.keys().cloned().collect();
        let looks = Arc::new(Looks::default());
        // The targets are looked at before the walk reads them, new folders from the filter
        // (see `Index::rebuild`).
        let mut path = PathBuf::new();
        for t in &targets {
            full_path_into(&self.root, t, &mut path);
            looks.look(&path, t, listed);
        }
        let scope = Arc::new(Scope {
            targets,
            ancestors,
            known,
        });
        let filter = Arc::clone(&scope);
        let seen = Arc::clone(&looks);
        let root = self.root.clone();
        let parts = walk::par_walk(
            &self.root,
            move |e| {
                let Ok(rel) = e.path().strip_prefix(&root) else {
                    return true;
                };
                let is_dir = e.file_type().is_some_and(|t| t.is_dir());
                let rel = walk::slash(rel);
                let enters = filter.enters(is_dir, &rel);
                if enters && is_dir && !filter.known.contains(rel.as_str()) {
                    seen.look(e.path(), &rel, listed);
                }
                enters
            },
            Vec::new,
            |files, kind, rel, _| {
                if kind == Kind::File {
                    gather(files, rel);
                }
            },
        );
        let Looked { dirs, rules } = looks.take();
        for (rule, stamp) in rules {
            let in_target = rule
                .parent()
                .and_then(|d| d.strip_prefix(&self.root).ok())
                .is_some_and(|d| scope.targets.contains(walk::slash(d).as_str()));
            let known = self.rules.get(&rule).is_some_and(|s| s.modified.is_some());
            if in_target && stamp.modified.is_some() && !known {
                return false;
            }
            self.rules.insert(rule, stamp);
        }
        let seen: HashSet<Box<str>> = dirs.iter().map(|(d, _)| d.clone()).collect();
        self.dirs.extend(dirs);
        // A target gone between the check and its look: drop it now.
        let vanished: Vec<Box<str>> = scope
            .targets
            .iter()
            .filter(|t| !seen.contains(*t))
            .cloned()
            .collect();
        self.forget(&vanished);
        retain_files(&mut self.files, |f| !scope.targets.contains(parent(f)));
        let mut new_files: Vec<IndexedFile> = parts.into_iter().flatten().collect();
        new_files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        self.files = merge(std::mem::take(&mut self.files), new_files);
        true
    }
}

/// Which part of the tree a partial walk enters and lists.
struct Scope {
    /// Folders to list again.
    targets: HashSet<Box<str>>,
    /// Folders above them (entered, not listed).
    ancestors: HashSet<Box<str>>,
    /// Every folder indexed before.
    known: HashSet<Box<str>>,
}

impl Scope {
    /// Whether the walk goes into (or yields) this entry.
    fn enters(&self, is_dir: bool, rel: &str) -> bool {
        if is_dir {
            // A folder not seen before is new: walk it whole. A known one below a target
            // keeps its own files, checked by its own time.
            !self.known.contains(rel) || self.targets.contains(rel) || self.ancestors.contains(rel)
        } else {
            let up = parent(rel);
            self.targets.contains(up) || !self.known.contains(up)
        }
    }
}

/// The folder of a relative path (`""` for the root's own files).
fn parent(rel: &str) -> &str {
    rel.rsplit_once('/').map_or("", |(up, _)| up)
}

/// Whether `path` is `dir` or below it.
fn under_or_at(path: &str, dir: &str) -> bool {
    dir.is_empty()
        || path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

fn retain_files(files: &mut Vec<IndexedFile>, keep: impl Fn(&str) -> bool) {
    files.retain(|f| keep(&f.path));
}

/// Two path-sorted lists as one; on the same path the newer entry wins.
fn merge(old: Vec<IndexedFile>, new: Vec<IndexedFile>) -> Vec<IndexedFile> {
    if new.is_empty() {
        return old;
    }
    let mut out = Vec::with_capacity(old.len() + new.len());
    let mut old = old.into_iter().peekable();
    let mut new = new.into_iter().peekable();
    loop {
        let take_old = match (old.peek(), new.peek()) {
            (Some(o), Some(n)) => match o.path.cmp(&n.path) {
                std::cmp::Ordering::Less => true,
                std::cmp::Ordering::Equal => {
                    old.next();
                    false
                }
                std::cmp::Ordering::Greater => false,
            },
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return out,
        };
        let next = if take_old { old.next() } else { new.next() };
        out.extend(next);
    }
}
