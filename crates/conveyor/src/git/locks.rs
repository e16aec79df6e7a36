//! The per-repository locks: every writing operation on a repository holds its lock.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The per-repository locks.
#[derive(Debug, Default, Clone)]
pub struct Locks {
    // std Mutex: held only to look up the entry, never across an await.
    inner: Arc<Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>>,
}

impl Locks {
    /// The lock of `repo` (held across the git commands of one operation).
    pub fn of(&self, repo: &Path) -> Arc<tokio::sync::Mutex<()>> {
        let key = repo.canonicalize().unwrap_or_else(|_| repo.to_path_buf());
        self.inner
            .lock()
            .expect("lock map poisoned")
            .entry(key)
            .or_default()
            .clone()
    }
}
