//! The index of a project folder: every file the walk yields, with its size and modification
//! time, walked once and then kept fresh.
//!
//! A run used to walk the folder three times over (the tree of the first message, each LIST,
//! each FIND's file list). Now the walk is done once per run — or not at all, when the caller
//! already keeps a live index (pult does, for its tree view) — and the tree, LIST and FIND
//! read the index.
//!
//! Fresh, not stale: before each step the run calls [`Index::refresh`]. It stats every indexed
//! folder (creating, deleting or renaming an entry changes its folder's modification time, on
//! every platform's file systems) and every ignore file (editing one in place does not), and
//! lists again only the folders that changed, with the same rules as the full walk. A folder
//! or ignore file whose time is too close to when it was read to tell a later change apart
//! (coarse timestamps: a jiffy on Linux, 2 s on FAT) counts as changed until it is older than
//! that, as git does with its "racy" index entries. A caller with a file watcher hands the
//! changed paths to [`Index::refresh_paths`], which also renews the size and time of files
//! edited in place (which no folder time shows).
//!
//! The walk yields paths; a stat per file (its size and time) costs about as much again.
//! [`Index::walk`] leaves it to [`Index::stat`], so that a run sends its first message (the
//! tree needs only the paths) before paying for it. The ignore files are looked for during
//! the walk itself, each folder's just before the walker reads them: a change after that look
//! shows in their times, or in the folder's.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::par::par_map;
use crate::sandbox::Sandbox;
use crate::walk::{self, Kind, RULE_FILES};

/// How far apart a change and the listing must be for the folder's time to tell them apart on
/// any file system we may meet (FAT keeps times to 2 s).
const RACY: Duration = Duration::from_secs(2);

/// One file of the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedFile {
    /// Relative to the root, with `/`.
    pub path: Box<str>,
    /// Bytes, when it was last looked at.
    pub size: u64,
    /// Last modification, when it was last looked at (`None` where the platform has none).
    pub modified: Option<SystemTime>,
}

/// What the index knew of a folder when it listed it.
#[derive(Debug, Clone, Copy)]
struct Stamp {
    modified: Option<SystemTime>,
    /// Changed too shortly before it was read: read it again at the next check.
    racy: bool,
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
    fn stale(&self, now: &std::io::Result<std::fs::Metadata>) -> bool {
        self.racy || modified(now) != self.modified
    }
}

/// Counters, for tests and the benchmark.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IndexStats {
    /// Full walks of the folder.
    pub walks: usize,
    /// Freshness checks.
    pub checks: usize,
    /// Folders listed again by the checks.
    pub relisted: usize,
}

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

/// The files of a project folder with their sizes and times, sorted by path.
#[derive(Debug, Clone)]
pub struct Index {
    root: PathBuf,
    /// Sorted by path, bytewise (the order LIST, FIND and the tree show).
    files: Vec<IndexedFile>,
    /// Every folder the walk entered (`""` is the root).
    dirs: HashMap<Box<str>, Stamp>,
    /// Ignore files (and repositories' `info/exclude`, present or not) with their times.
    rules: HashMap<PathBuf, Stamp>,
    /// The files' sizes and times are yet to be read (see [`Index::walk`]).
    unstated: bool,
    stats: IndexStats,
}

impl Index {
    /// Walks the folder once and indexes every file with its size and time.
    pub fn build(sandbox: &Sandbox) -> Index {
        let mut index = Index::walk(sandbox);
        index.stat();
        index
    }

    /// Walks the folder once for the paths alone; every size is 0 and every time `None` until
    /// [`Index::stat`] reads them, and changes are noticed only after it ran. A run builds its
    /// first message from the paths and stats while the model thinks.
    pub fn walk(sandbox: &Sandbox) -> Index {
        let mut index = Index {
            root: sandbox.root().to_path_buf(),
            files: Vec::new(),
            dirs: HashMap::new(),
            rules: HashMap::new(),
            unstated: false,
            stats: IndexStats::default(),
        };
        index.rebuild();
        index
    }

    /// Reads what [`Index::walk`] left out, on all cores: every file's size and time. Does
    /// nothing when nothing is left out. A file gone meanwhile keeps size 0 until the next
    /// check drops it.
    pub fn stat(&mut self) {
        if !self.unstated {
            return;
        }
        let root = &self.root;
        let metas = par_map(&self.files, 256, PathBuf::new, |path, _, f| {
            full_path_into(root, &f.path, path);
            std::fs::symlink_metadata(&*path).ok()
        });
        for (i, meta) in metas {
            let f = &mut self.files[i];
            f.size = meta.len();
            f.modified = meta.modified().ok();
        }
        self.unstated = false;
    }

    /// The full walk, paths only (see [`Index::walk`]).
    fn rebuild(&mut self) {
        let listed = SystemTime::now();
        let looks = Arc::new(Looks::default());
        // The walker reads a folder's entries and ignore files before it yields the folder,
        // so each folder is looked at from the filter, when its parent's listing offers it:
        // a change after the look then shows in a time (see `look`). The root is offered to
        // no filter: look at it first.
        looks.look(&self.root, "", listed);
        let seen = Arc::clone(&looks);
        let root = self.root.clone();
        let parts = walk::par_walk(
            &self.root,
            move |e| {
                if e.file_type().is_some_and(|t| t.is_dir())
                    && let Ok(rel) = e.path().strip_prefix(&root)
                {
                    seen.look(e.path(), &walk::slash(rel), listed);
                }
                true
            },
            Vec::new,
            |files, kind, rel, e| {
                if kind == Kind::File {
                    gather(files, rel, e, false);
                }
            },
        );
        let mut files: Vec<IndexedFile> = parts.into_iter().flatten().collect();
        files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        let looked = looks.take();
        self.files = files;
        self.dirs = looked.dirs.into_iter().collect();
        self.rules = looked.rules.into_iter().collect();
        self.unstated = true;
        self.stats.walks += 1;
    }

    /// The project root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Every file, sorted by path.
    pub fn files(&self) -> &[IndexedFile] {
        &self.files
    }

    /// The relative paths, sorted.
    pub fn paths(&self) -> impl ExactSizeIterator<Item = &str> + Clone {
        self.files.iter().map(|f| &*f.path)
    }

    /// Files in all.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether the folder has no files (to the walk).
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The counters so far.
    pub fn stats(&self) -> IndexStats {
        self.stats
    }

    /// Bytes the index holds on the heap (its paths, entries and folder stamps), as the
    /// allocator was asked for them: the figure the benchmark reports.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let files = self.files.capacity() * size_of::<IndexedFile>()
            + self.files.iter().map(|f| f.path.len()).sum::<usize>();
        // A hash map holds its capacity in slots plus one control byte each.
        let dirs = self.dirs.capacity() * (size_of::<(Box<str>, Stamp)>() + 1)
            + self.dirs.keys().map(|k| k.len()).sum::<usize>();
        let rules = self.rules.capacity() * (size_of::<(PathBuf, Stamp)>() + 1)
            + self
                .rules
                .keys()
                .map(|k| k.as_os_str().len())
                .sum::<usize>();
        files + dirs + rules
    }

    /// The full path of an indexed relative path.
    pub fn full_path(&self, rel: &str) -> PathBuf {
        let mut p = PathBuf::new();
        full_path_into(&self.root, rel, &mut p);
        p
    }

    /// Brings the index up to date with the disk: see the module's notes.
    pub fn refresh(&mut self) -> Refreshed {
        self.stats.checks += 1;
        let mut done = Refreshed {
            checked: self.dirs.len(),
            ..Refreshed::default()
        };
        // A run's own index stats on another thread; a check waits for it here (its lock) or
        // does it itself.
        self.stat();
        let rules_changed = self
            .rules
            .iter()
            .any(|(p, was)| was.stale(&std::fs::symlink_metadata(p)));
        // An empty map means the root itself could not be walked: try again whole.
        if rules_changed || self.dirs.is_empty() {
            self.rebuild();
            self.stat();
            done.rebuilt = true;
            return done;
        }
        let listed = SystemTime::now();
        let (gone, changed) = self.check_dirs();
        if gone.is_empty() && changed.is_empty() {
            return done;
        }
        if gone.iter().any(|g| g.is_empty()) {
            // The root itself is gone or no longer a folder.
            self.rebuild();
            self.stat();
            done.rebuilt = true;
            return done;
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
            self.stat();
            done.rebuilt = true;
        }
        done
    }

    /// Renews the size and time of the indexed files among `paths` (absolute, as a file
    /// watcher reports them), then runs [`Index::refresh`] for what the folders show.
    pub fn refresh_paths(&mut self, paths: &[PathBuf]) -> Refreshed {
        for p in paths {
            let Ok(rel) = p.strip_prefix(&self.root) else {
                continue;
            };
            let rel = walk::slash(rel);
            if let Ok(i) = self.files.binary_search_by(|f| (*f.path).cmp(rel.as_str()))
                && let Ok(meta) = std::fs::symlink_metadata(p)
                && meta.is_file()
            {
                let f = &mut self.files[i];
                f.size = meta.len();
                f.modified = meta.modified().ok();
            }
        }
        self.refresh()
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
        // (see `rebuild`).
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
            |files, kind, rel, e| {
                if kind == Kind::File {
                    gather(files, rel, e, true);
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

/// What the walk's looks at folders found: their times and ignore files. Behind a lock: the
/// filter that looks runs on every walker thread (one lock per folder, not per file).
#[derive(Default)]
struct Looks(std::sync::Mutex<Looked>);

/// Folders with their stamps, ignore files with theirs.
#[derive(Default)]
struct Looked {
    dirs: Vec<(Box<str>, Stamp)>,
    rules: Vec<(PathBuf, Stamp)>,
}

impl Looks {
    /// Looks at the folder at `path` (`rel` from the root) before the walker reads it: its
    /// time, and its ignore files' times. A file added or removed after this look changes
    /// the folder's time; an ignore file edited after it changes its own; a change in the
    /// same clock tick as the look is caught by the racy rule. A folder gone meanwhile is
    /// not recorded.
    fn look(&self, path: &Path, rel: &str, listed: SystemTime) {
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

    fn take(&self) -> Looked {
        std::mem::take(
            &mut *self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
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

/// A file of the walk into `files`, with its size and time only when `stat` is set.
fn gather(files: &mut Vec<IndexedFile>, rel: &Path, e: &ignore::DirEntry, stat: bool) {
    if !stat {
        files.push(IndexedFile {
            path: walk::slash(rel).into(),
            size: 0,
            modified: None,
        });
    } else if let Ok(meta) = e.metadata() {
        // A file that vanished between the listing and the stat is simply not indexed.
        files.push(IndexedFile {
            path: walk::slash(rel).into(),
            size: meta.len(),
            modified: meta.modified().ok(),
        });
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

/// `root` joined with a relative path spelled with `/`, into a reused buffer. Pushed part by
/// part, so that the result uses the platform's own separator.
pub(crate) fn full_path_into(root: &Path, rel: &str, out: &mut PathBuf) {
    out.as_mut_os_string().clear();
    out.push(root);
    if cfg!(unix) {
        if !rel.is_empty() {
            out.push(rel);
        }
    } else {
        for part in rel.split('/').filter(|p| !p.is_empty()) {
            out.push(part);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn write(root: &Path, rel: &str, body: &str) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, body).unwrap();
    }

    /// What a fresh full walk sees now: the index must always agree with it.
    fn walked(sb: &Sandbox) -> Vec<String> {
        walk::files(sb)
    }

    fn paths(index: &Index) -> Vec<String> {
        index.paths().map(str::to_owned).collect()
    }

    fn project() -> (tempfile::TempDir, Sandbox) {
        let x = b"x".as_slice();
        let (d, sb) = crate::sandbox::project(&[
            ("src/a.rs", x),
            ("src/deep/b.rs", x),
            ("src/b.log", x),
            ("node_modules/x/index.js", x),
            (".git/config", x),
            (".hidden/x", x),
            ("backup/20260101-000000/src/a.rs", x),
            ("мой проект #1/файл.txt", x),
            ("README.md", x),
            (".gitignore", b"node_modules/\n*.log\n"),
        ]);
        let r = sb.root();
        // An ignore file changed within the last seconds is racy (a change to it walks the
        // folder again at every check): make it an old one, as in a real project.
        let old = SystemTime::now() - Duration::from_secs(3600);
        fs::File::options()
            .write(true)
            .open(r.join(".gitignore"))
            .unwrap()
            .set_modified(old)
            .unwrap();
        (d, sb)
    }

    #[test]
    fn the_index_holds_what_the_walk_yields_with_sizes() {
        let (_d, sb) = project();
        write(sb.root(), "src/a.rs", "12345");
        let index = Index::build(&sb);
        assert_eq!(paths(&index), walked(&sb));
        assert_eq!(
            paths(&index),
            [
                "README.md",
                "src/a.rs",
                "src/deep/b.rs",
                "мой проект #1/файл.txt"
            ]
        );
        let a = &index.files()[1];
        assert_eq!((&*a.path, a.size), ("src/a.rs", 5));
        assert!(a.modified.is_some());
        assert_eq!(index.stats().walks, 1);
        assert!(index.heap_bytes() > 0);

        let mut paths_first = Index::walk(&sb);
        assert_eq!(paths(&paths_first), paths(&index));
        assert_eq!(paths_first.files()[1].size, 0, "sizes wait for stat");
        paths_first.stat();
        assert_eq!(paths_first.files(), index.files());
    }

    #[test]
    fn files_created_and_deleted_between_checks_are_seen_without_a_new_walk() {
        let (_d, sb) = project();
        let r = sb.root();
        let mut index = Index::build(&sb);
        write(r, "src/new.rs", "x");
        write(r, "fresh/dir/c.rs", "x");
        write(r, "мой проект #1/второй.txt", "x");
        write(r, "src/c.log", "ignored by the root's .gitignore");
        write(r, "fresh/.hidden.rs", "hidden");
        fs::remove_file(r.join("src/deep/b.rs")).unwrap();
        fs::remove_file(r.join("README.md")).unwrap();
        let done = index.refresh();
        assert!(done.changed(), "{done:?}");
        assert_eq!(paths(&index), walked(&sb));
        assert_eq!(
            paths(&index),
            [
                "fresh/dir/c.rs",
                "src/a.rs",
                "src/new.rs",
                "мой проект #1/второй.txt",
                "мой проект #1/файл.txt"
            ]
        );
        fs::remove_dir_all(r.join("src")).unwrap();
        index.refresh();
        assert_eq!(paths(&index), walked(&sb));
        assert_eq!(index.stats().walks, 1, "only folders were listed again");
    }

    #[test]
    fn an_ignore_file_edited_in_place_walks_again() {
        let (_d, sb) = project();
        let mut index = Index::build(&sb);
        write(sb.root(), ".gitignore", "node_modules/\n*.log\n*.md\n");
        let done = index.refresh();
        assert!(done.rebuilt, "{done:?}");
        assert_eq!(paths(&index), walked(&sb));
        assert!(!paths(&index).contains(&"README.md".to_owned()));
    }

    #[test]
    fn a_new_ignore_file_in_a_listed_folder_walks_again() {
        let (_d, sb) = project();
        let mut index = Index::build(&sb);
        write(sb.root(), "src/.ignore", "deep/\n");
        assert!(index.refresh().rebuilt);
        assert_eq!(
            paths(&index),
            ["README.md", "src/a.rs", "мой проект #1/файл.txt"]
        );
    }

    #[test]
    fn sizes_of_files_edited_in_place_follow_the_watchers_paths() {
        let (_d, sb) = project();
        let mut index = Index::build(&sb);
        write(sb.root(), "src/a.rs", "longer now");
        index.refresh_paths(&[sb.root().join("src/a.rs"), PathBuf::from("/elsewhere")]);
        let a = index
            .files()
            .iter()
            .find(|f| &*f.path == "src/a.rs")
            .unwrap();
        assert_eq!(a.size, 10);
    }

    /// With times set well in the past, nothing is racy: an unchanged folder costs one stat,
    /// and a change lists again only the folder it happened in. (Setting a folder's time needs
    /// a handle to the folder, which `File::open` gives on Unix only.)
    #[cfg(unix)]
    #[test]
    fn only_the_changed_folder_is_listed_again() {
        let (_d, sb) = project();
        let r = sb.root();
        let old = SystemTime::now() - Duration::from_secs(3600);
        for dir in ["", "src", "src/deep", "мой проект #1"] {
            fs::File::open(r.join(dir))
                .unwrap()
                .set_modified(old)
                .unwrap();
        }
        let mut index = Index::build(&sb);
        let quiet = index.refresh();
        assert_eq!((quiet.relisted, quiet.rebuilt), (0, false), "{quiet:?}");
        assert_eq!(quiet.checked, 4);
        write(r, "src/deep/new.rs", "x");
        let done = index.refresh();
        assert_eq!((done.relisted, done.rebuilt), (1, false), "{done:?}");
        assert_eq!(paths(&index), walked(&sb));
        assert_eq!(index.stats().walks, 1);
    }
}
