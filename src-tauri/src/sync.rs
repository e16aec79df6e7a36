//! Locking the app's shared state. A module of its own, below the state and the modules whose
//! parts the state holds (the folder's index and tree, the daemon connection), so that they
//! all lock the same way without importing each other.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks a mutex; a panic elsewhere does not make the state unusable.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
