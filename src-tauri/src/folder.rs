//! The open project folder: deepwork's index of its files (the one walk, shared with the
//! runs), listed one folder at a time for the lazily expanded tree, and kept fresh by a file
//! watcher.
//!
//! The walk of a 100k-file project takes a fraction of a second; the listings turn it into
//! per-folder entries once, so expanding a folder in the UI costs a hash lookup.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use serde::Serialize;
use ts_rs::TS;

/// One folder's direct children.
#[derive(Debug, Default)]
struct Listing {
    /// Subfolder name → files below it.
    dirs: BTreeMap<String, u32>,
    /// File names.
    files: Vec<String>,
}

/// The folder's files, grouped by folder.
#[derive(Debug, Default)]
pub struct FolderIndex {
    listings: HashMap<String, Listing>,
    total: u32,
}

impl FolderIndex {
    /// Groups deepwork's index by folder.
    pub fn of(index: &deepwork::Index) -> FolderIndex {
        Self::from_paths(index.paths())
    }

    /// Indexes sorted relative paths with `/`.
    pub fn from_paths<'a>(paths: impl IntoIterator<Item = &'a str>) -> FolderIndex {
        let mut listings: HashMap<String, Listing> = HashMap::new();
        let mut total: usize = 0;
        for path in paths {
            total += 1;
            let mut dir_end: usize = 0;
            let mut rest = path;
            while let Some(slash) = rest.find('/') {
                let parent = &path[..dir_end.saturating_sub(1)];
                let name = &rest[..slash];
                *listings
                    .entry(parent.to_owned())
                    .or_default()
                    .dirs
                    .entry(name.to_owned())
                    .or_default() += 1;
                dir_end += slash + 1;
                rest = &rest[slash + 1..];
            }
            let parent = &path[..dir_end.saturating_sub(1)];
            listings
                .entry(parent.to_owned())
                .or_default()
                .files
                .push(rest.to_owned());
        }
        FolderIndex {
            listings,
            total: u32::try_from(total).unwrap_or(u32::MAX),
        }
    }

    /// Files in all.
    pub fn total(&self) -> u32 {
        self.total
    }

    /// The children of `dir` ("" for the root), folders first, each sorted by name.
    pub fn children(&self, dir: &str) -> Vec<TreeEntry> {
        let Some(l) = self.listings.get(dir) else {
            return Vec::new();
        };
        let join = |name: &str| {
            if dir.is_empty() {
                name.to_owned()
            } else {
                format!("{dir}/{name}")
            }
        };
        let dirs = l.dirs.iter().map(|(name, files)| TreeEntry {
            path: join(name),
            name: name.clone(),
            dir: true,
            files: *files,
        });
        let files = l.files.iter().map(|name| TreeEntry {
            path: join(name),
            name: name.clone(),
            dir: false,
            files: 0,
        });
        dirs.chain(files).collect()
    }
}

/// One row of the file tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct TreeEntry {
    /// The last component.
    pub name: String,
    /// Relative to the folder, with `/`.
    pub path: String,
    /// A folder.
    pub dir: bool,
    /// For folders: files below it (ignored files not counted).
    pub files: u32,
}

/// The folder a drop names: the first dropped folder, or the folder of the first dropped file.
pub fn folder_from_drop(paths: &[PathBuf]) -> Option<PathBuf> {
    paths.iter().find(|p| p.is_dir()).cloned().or_else(|| {
        paths
            .iter()
            .find_map(|p| p.parent().filter(|d| d.is_dir()).map(Path::to_path_buf))
    })
}

/// Whether a change at `path` can change what the tree shows.
fn relevant(root: &Path, path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(root) else {
        return false;
    };
    let first = rel.components().next().map(|c| c.as_os_str());
    match first {
        None => false,
        Some(first) => {
            !(first == deepwork::BACKUP_DIR || rel.components().any(|c| c.as_os_str() == ".git"))
        }
    }
}

/// Watches the folder; after each burst of relevant changes (debounced), calls `on_change`
/// with the paths the burst touched. The watch ends when the returned watcher is dropped.
///
/// # Errors
/// When the platform's watcher cannot be started (e.g. inotify limits).
pub fn watch(
    root: &Path,
    on_change: impl Fn(Vec<PathBuf>) + Send + 'static,
) -> notify::Result<notify::RecommendedWatcher> {
    let (tx, rx) = mpsc::channel::<Vec<PathBuf>>();
    let root_owned = root.to_path_buf();
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        let Ok(event) = res else { return };
        if event.kind.is_access() {
            return;
        }
        let paths: Vec<PathBuf> = event
            .paths
            .into_iter()
            .filter(|p| relevant(&root_owned, p))
            .collect();
        if !paths.is_empty() {
            let _ = tx.send(paths);
        }
    })?;
    watcher.watch(root, RecursiveMode::Recursive)?;
    std::thread::spawn(move || {
        // Ends when the watcher (and so the sender) is dropped.
        while let Ok(first) = rx.recv() {
            let mut burst: BTreeSet<PathBuf> = first.into_iter().collect();
            // Let a burst (a git checkout, a build) settle before one refresh.
            while let Ok(more) = rx.recv_timeout(Duration::from_millis(250)) {
                burst.extend(more);
            }
            on_change(burst.into_iter().collect());
        }
    });
    Ok(watcher)
}

/// Brings the open folder's index up to date after the watcher saw a change (only the folders
/// that changed are listed again: the index holds paths alone, so which files the watcher
/// named does not matter), and the tree's listings with it when the files changed; returns the
/// file count.
pub fn refresh(
    index: &std::sync::Mutex<deepwork::Index>,
    tree: &std::sync::RwLock<std::sync::Arc<FolderIndex>>,
) -> u32 {
    let listings = {
        let mut index = crate::sync::lock(index);
        if !index.refresh().changed() {
            return u32::try_from(index.len()).unwrap_or(u32::MAX);
        }
        FolderIndex::of(&index)
    };
    let files = listings.total();
    if let Ok(mut slot) = tree.write() {
        *slot = std::sync::Arc::new(listings);
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(paths: &[&str]) -> FolderIndex {
        FolderIndex::from_paths(paths.iter().copied())
    }

    #[test]
    fn children_folders_first_with_counts() {
        let i = index(&[
            "a.txt",
            "src/lib/x.rs",
            "src/lib/y.rs",
            "src/main.rs",
            "z/q.md",
        ]);
        let root: Vec<(String, bool, u32)> = i
            .children("")
            .into_iter()
            .map(|e| (e.path, e.dir, e.files))
            .collect();
        assert_eq!(
            root,
            [
                ("src".into(), true, 3),
                ("z".into(), true, 1),
                ("a.txt".into(), false, 0)
            ]
        );
        let src: Vec<String> = i.children("src").into_iter().map(|e| e.path).collect();
        assert_eq!(src, ["src/lib", "src/main.rs"]);
        let lib: Vec<String> = i.children("src/lib").into_iter().map(|e| e.name).collect();
        assert_eq!(lib, ["x.rs", "y.rs"]);
        assert_eq!(i.total(), 5);
        assert!(i.children("nope").is_empty());
    }

    #[test]
    fn a_drop_names_a_folder() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("file.txt");
        std::fs::write(&f, "x").unwrap();
        assert_eq!(
            folder_from_drop(std::slice::from_ref(&f)),
            Some(d.path().to_path_buf())
        );
        assert_eq!(
            folder_from_drop(&[f.clone(), d.path().to_path_buf()]),
            Some(d.path().to_path_buf())
        );
        assert_eq!(folder_from_drop(&[PathBuf::from("/does/not/exist")]), None);
    }

    #[test]
    fn git_and_backup_changes_do_not_refresh() {
        let root = Path::new("/p");
        assert!(relevant(root, Path::new("/p/src/a.rs")));
        assert!(!relevant(root, Path::new("/p/.git/index")));
        assert!(!relevant(root, Path::new("/p/backup/20260101-000000/a.rs")));
        assert!(!relevant(root, Path::new("/p/sub/.git/HEAD")));
        assert!(!relevant(root, Path::new("/elsewhere/a")));
    }

    #[test]
    fn the_watcher_reports_a_new_file_and_the_shared_index_sees_it() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("old.txt"), "x").unwrap();
        let sandbox = deepwork::Sandbox::new(d.path()).unwrap();
        let root = sandbox.root().to_path_buf();
        let index = deepwork::Index::walk(&sandbox);
        let tree = std::sync::RwLock::new(std::sync::Arc::new(FolderIndex::of(&index)));
        let index = std::sync::Mutex::new(index);
        let (tx, rx) = mpsc::channel();
        let _w = watch(&root, move |paths| {
            let _ = tx.send(paths);
        })
        .unwrap();
        std::fs::write(root.join("new.txt"), "x").unwrap();
        let paths = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("no change reported");
        assert!(paths.contains(&root.join("new.txt")), "{paths:?}");
        assert_eq!(refresh(&index, &tree), 2);
        let names: Vec<String> = tree
            .read()
            .unwrap()
            .children("")
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(names, ["new.txt", "old.txt"]);
        let stats = crate::sync::lock(&index).stats();
        assert_eq!(
            stats.walks, 1,
            "the watcher walked the folder again: {stats:?}"
        );
    }
}
