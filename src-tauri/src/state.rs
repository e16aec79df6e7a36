//! What the app keeps between commands.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use deepwork::{Cancel, Index, Sandbox};

use crate::error::{AppError, ErrorCode};
use crate::folder::FolderIndex;
use crate::history::History;
use crate::sync::lock;

/// Where the app's files live.
#[derive(Debug, Clone)]
pub struct Paths {
    /// deepwork's config.json (shared with the CLI).
    pub config: PathBuf,
    /// The app's preferences.
    pub prefs: PathBuf,
    /// The history database.
    pub history: PathBuf,
}

/// The open project folder.
#[derive(Debug)]
pub struct OpenFolder {
    /// The folder as a sandbox.
    pub sandbox: Sandbox,
    /// Its files: the one walk of the folder, kept fresh by the watcher
    /// and handed to every deepwork run on it (which checks it again before each step).
    /// A std mutex: a run holds it only while a step's tools read it, never across an await.
    pub index: Mutex<Index>,
    /// The same files grouped by folder for the tree view; replaced whole when the index
    /// changes.
    pub tree: RwLock<Arc<FolderIndex>>,
    /// Keeps the watch alive; `None` when the platform refused one.
    pub watcher: Mutex<Option<notify::RecommendedWatcher>>,
}

/// The app's state. Locks are std mutexes: none is held across an `.await`.
#[derive(Debug)]
pub struct AppState {
    /// File locations.
    pub paths: Paths,
    /// Run history.
    pub history: History,
    /// The open folder, if any.
    pub folder: Mutex<Option<Arc<OpenFolder>>>,
    /// Cancel flags of running runs, by run id; shared with the run threads, which remove
    /// their own entry when they end.
    pub runs: Arc<Mutex<HashMap<i64, Cancel>>>,
    /// The folder given on the command line, handed to the page once.
    pub initial_folder: Mutex<Option<PathBuf>>,
}

impl AppState {
    /// The open folder.
    ///
    /// # Errors
    /// `no_folder` when none is open.
    pub fn folder(&self) -> Result<Arc<OpenFolder>, AppError> {
        lock(&self.folder)
            .clone()
            .ok_or_else(|| AppError::new(ErrorCode::NoFolder, "no folder is open"))
    }
}
