//! Git: git2 for reads (refs, blobs, ancestry), the git CLI for worktrees, commits, resets and
//! merges, where git2 is awkward. Every writing operation on a repository holds that
//! repository's lock, so two lines of different projects never fight, and the merge of one
//! line never races another line's worktree creation in the same repository.
//!
//! The git CLI calls take a cancellation token (a line's, or the daemon's `shutdown`): a stop
//! ends a long or hung call (a merge whose hook hangs, a checkout through a slow filter) with
//! [`crate::error::Error::GitCancelled`], by SIGTERM first so that git removes its lock
//! files. What puts things back runs to its end instead, because a stop waits for that
//! bookkeeping and half a rollback is worse than a late one: [`reset_to`], removing a scratch
//! or half-made worktree, and moving main once the merged code is green.

mod cli;
mod locks;
mod merge;
mod read;
pub mod refs;
mod worktree;

pub use cli::{Identity, git};
pub use locks::Locks;
pub use merge::{
    Checkout, Merge, MergeOutcome, Regression, Reverted, checkout_of, drop_scratch,
    merge_into_main, revert_on_main, scratch_at,
};
pub use read::{branch_exists, branch_head, commits_not_in, line_diff, read_file_at};
pub use worktree::{add_worktree, checkpoint, clear_stale_locks, remove_worktree, reset_to};

#[cfg(test)]
pub(crate) mod testing;

#[cfg(test)]
mod tests;
