//! Opening a folder, listing it lazily, and the size of a selection.

use std::sync::{Arc, Mutex, RwLock};

use deepwork::{Index, Sandbox};
use serde::Serialize;
use tauri::State;
use tauri::ipc::Channel;
use ts_rs::TS;

use crate::error::{AppError, ErrorCode};
use crate::folder::{self, FolderIndex, TreeEntry};
use crate::state::{AppState, OpenFolder};
use crate::sync::lock;

/// An opened folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct FolderInfo {
    /// The canonical path.
    pub root: String,
    /// Its name.
    pub name: String,
    /// Files in it (ignored ones not counted).
    pub files: u32,
    /// Whether changes on disk are followed (until a [`FolderChanged`] says otherwise).
    pub watching: bool,
}

/// Sent when files changed on disk and the index was rebuilt, or when the folder turned out
/// not to be watchable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct FolderChanged {
    /// Files now.
    pub files: u32,
    /// Whether changes on disk are followed.
    pub watching: bool,
}

/// The characters a selection would send.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct SelectionSize {
    /// Characters of the readable text files.
    pub chars: u32,
    /// Files counted.
    pub files: u32,
    /// Files that will not be sent whole: missing, binary, or refused.
    pub skipped: Vec<String>,
}

fn info(open: &OpenFolder) -> FolderInfo {
    let root = open.sandbox.root();
    FolderInfo {
        root: root.display().to_string(),
        name: root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| root.display().to_string()),
        files: open.tree.read().map(|i| i.total()).unwrap_or(0),
        watching: true,
    }
}

/// Opens a folder: indexes it and watches it; `on_change` hears about rebuilt indexes.
#[tauri::command]
pub async fn open_folder(
    state: State<'_, AppState>,
    path: String,
    on_change: Channel<FolderChanged>,
) -> Result<FolderInfo, AppError> {
    let open = tauri::async_runtime::spawn_blocking(move || {
        let sandbox = Sandbox::new(&path).map_err(|e| {
            AppError::new(
                ErrorCode::FolderUnavailable,
                format!("cannot open {path}: {e}"),
            )
        })?;
        let index = Index::walk(&sandbox);
        let tree = FolderIndex::of(&index);
        Ok::<_, AppError>(Arc::new(OpenFolder {
            sandbox,
            index: Mutex::new(index),
            tree: RwLock::new(Arc::new(tree)),
            watcher: Mutex::new(None),
        }))
    })
    .await
    .map_err(|e| AppError::new(ErrorCode::Internal, e.to_string()))??;
    // Watching a big tree means registering every folder with the OS, which takes longer
    // than the walk itself: do it after the page has the tree, not before.
    let weak = Arc::downgrade(&open);
    let root = open.sandbox.root().to_path_buf();
    std::thread::spawn(move || {
        let changed = on_change.clone();
        let watch_weak = weak.clone();
        let watcher = folder::watch(&root, move |_| {
            let Some(open) = watch_weak.upgrade() else {
                return;
            };
            // The page hears of every burst, an edit inside a file too: it measures the
            // ticked files again.
            let files = folder::refresh(&open.index, &open.tree);
            let _ = changed.send(FolderChanged {
                files,
                watching: true,
            });
        });
        let Some(open) = weak.upgrade() else { return };
        match watcher {
            Ok(w) => *lock(&open.watcher) = Some(w),
            Err(e) => {
                tracing::warn!(error = %e, "cannot watch the folder; the tree will not refresh by itself");
                let files = open.tree.read().map(|i| i.total()).unwrap_or(0);
                let _ = on_change.send(FolderChanged {
                    files,
                    watching: false,
                });
            }
        }
    });
    let result = info(&open);
    *lock(&state.folder) = Some(open);
    Ok(result)
}

/// The folder given as `pult <folder>`, once.
#[tauri::command]
pub fn initial_folder(state: State<'_, AppState>) -> Option<String> {
    lock(&state.initial_folder)
        .take()
        .map(|p| p.display().to_string())
}

/// The children of a folder of the open project ("" for its root).
#[tauri::command]
pub fn list_dir(state: State<'_, AppState>, dir: String) -> Result<Vec<TreeEntry>, AppError> {
    let open = state.folder()?;
    let index = open.tree.read().map(|i| Arc::clone(&i)).unwrap_or_default();
    Ok(index.children(dir.trim_matches('/')))
}

/// How many characters the ticked files would send.
#[tauri::command]
pub async fn selection_size(
    state: State<'_, AppState>,
    files: Vec<String>,
) -> Result<SelectionSize, AppError> {
    let open = state.folder()?;
    tauri::async_runtime::spawn_blocking(move || measure(&open.sandbox, &files))
        .await
        .map_err(|e| AppError::new(ErrorCode::Internal, e.to_string()))
}

/// Counts characters of the readable text files among `files`.
pub fn measure(sandbox: &Sandbox, files: &[String]) -> SelectionSize {
    let mut size = SelectionSize {
        chars: 0,
        files: 0,
        skipped: Vec::new(),
    };
    for f in files {
        let text = sandbox
            .resolve(f)
            .ok()
            .and_then(|p| std::fs::read(p).ok())
            .filter(|b| !b.contains(&0))
            .map(|b| String::from_utf8_lossy(&b).chars().count());
        match text {
            Some(n) => {
                size.chars = size
                    .chars
                    .saturating_add(u32::try_from(n).unwrap_or(u32::MAX));
                size.files += 1;
            }
            None => size.skipped.push(f.clone()),
        }
    }
    size
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measure_counts_characters_and_names_what_it_skips() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.txt"), "привет").unwrap();
        std::fs::write(d.path().join("b.bin"), b"\0\x01").unwrap();
        let sb = Sandbox::new(d.path()).unwrap();
        let s = measure(
            &sb,
            &["a.txt".into(), "b.bin".into(), "gone".into(), "../x".into()],
        );
        assert_eq!((s.chars, s.files), (6, 1));
        assert_eq!(s.skipped, ["b.bin", "gone", "../x"]);
    }
}
