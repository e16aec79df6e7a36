//! The index of a project folder: the path of every file the walk yields, walked once and
//! then kept fresh.
//!
//! A run used to walk the folder three times over (the tree of the first message, each LIST,
//! each FIND's file list). Now the walk is done once per run — or not at all, when the caller
//! already keeps a live index (pult does, for its tree view) — and the tree, LIST and FIND
//! read the index.
//!
//! `files` holds the index and its full walk; `stamp`, what the walk saw of each folder and
//! ignore file, by which `refresh` tells what changed since and lists only that again.

mod files;
mod journal;
mod refresh;
mod stamp;
#[cfg(test)]
mod tests;

pub(crate) use files::full_path_into;
pub use files::{Index, IndexStats, IndexedFile};
pub use journal::PathChanges;
pub use refresh::Refreshed;
