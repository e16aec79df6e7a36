//! The index itself, the files of a folder sorted by path, and the full walk that fills it.
//!
//! The walk yields paths; a stat per file (its size and time) costs about as much again.
//! [`Index::walk`] leaves it to [`Index::stat`], so that a run sends its first message (the
//! tree needs only the paths) before paying for it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use crate::par::par_map;
use crate::sandbox::Sandbox;
use crate::walk::{self, Kind};

use super::stamp::{Looks, Stamp};

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

/// The files of a project folder with their sizes and times, sorted by path.
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
    /// The files' sizes and times are yet to be read (see [`Index::walk`]).
    pub(super) unstated: bool,
    pub(super) stats: IndexStats,
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
}

/// A file of the walk into `files`, with its size and time only when `stat` is set.
pub(super) fn gather(files: &mut Vec<IndexedFile>, rel: &Path, e: &ignore::DirEntry, stat: bool) {
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
