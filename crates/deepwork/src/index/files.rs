//! The index itself, the files of a folder sorted by path, and the full walk that fills it.
//!
//! The index holds paths, not sizes or times: nothing answers from them. The tree and LIST need
//! only paths, FIND reads each file whole anyway (its length comes from the read), NEED reads
//! its files when asked and tells changes by their content, and freshness is judged by the
//! folders' and ignore files' times (see `refresh`). A stat of every file would cost about what
//! the walk costs (one `statx` per file, 30,000 on cargo's registry sources) for nothing.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use crate::sandbox::Sandbox;
use crate::walk::{self, Kind};

use super::stamp::{Looks, Stamp};

/// One file of the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedFile {
    /// Relative to the root, with `/`.
    pub path: Box<str>,
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

/// The files of a project folder, sorted by path.
#[derive(Debug, Clone)]
pub struct Index {
    // Open to the folder's other files: `refresh` brings these up to date in place.
    pub(super) root: PathBuf,
    /// Sorted by path, bytewise (the order LIST, FIND and the tree show).
    pub(super) files: Vec<IndexedFile>,
    /// Every folder the walk entered (`""` is the root).
    pub(super) dirs: HashMap<Box<str>, Stamp>,
    /// Ignore files (and repositories' `info/exclude`, present or not) with their times.
    pub(super) rules: HashMap<PathBuf, Stamp>,
    pub(super) stats: IndexStats,
    /// What each refresh added and removed, whoever asked for it (`refresh::Journal`).
    pub(super) journal: super::journal::Journal,
}

impl Index {
    /// Walks the folder once and indexes every file the walk yields.
    pub fn walk(sandbox: &Sandbox) -> Index {
        let mut index = Index {
            root: sandbox.root().to_path_buf(),
            files: Vec::new(),
            dirs: HashMap::new(),
            rules: HashMap::new(),
            stats: IndexStats::default(),
            journal: super::journal::Journal::default(),
        };
        index.rebuild();
        index
    }

    /// The full walk.
    pub(super) fn rebuild(&mut self) {
        let listed = SystemTime::now();
        let looks = Arc::new(Looks::default());
        // The walker reads a folder's entries and ignore files before it yields the folder,
        // so each folder is looked at from the filter, when its parent's listing offers it:
        // a change after the look then shows in a time (see `Looks::look`). The root is offered to
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
            |files, kind, rel, _| {
                if kind == Kind::File {
                    gather(files, rel);
                }
            },
        );
        let mut files: Vec<IndexedFile> = parts.into_iter().flatten().collect();
        files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        let looked = looks.take();
        self.files = files;
        self.dirs = looked.dirs.into_iter().collect();
        self.rules = looked.rules.into_iter().collect();
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
}

/// A file of the walk into `files`.
pub(super) fn gather(files: &mut Vec<IndexedFile>, rel: &Path) {
    files.push(IndexedFile {
        path: walk::slash(rel).into(),
    });
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
