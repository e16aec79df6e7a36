//! The walk over a project folder that the tree, LIST and FIND share.
//!
//! It is the walker ripgrep and fd use (`ignore`), set up the same way: `.gitignore` (even
//! outside a git repository), `.ignore` and our own `.deepworkignore` honoured, hidden files
//! skipped, symlinks not followed. `.git/` anywhere and the top-level `backup/` are always
//! left out, whatever the ignore files say.

use std::path::Path;
use std::sync::Mutex;

use ignore::{DirEntry, WalkBuilder, WalkState};

use crate::sandbox::{BACKUP_DIR, Sandbox};

/// Our own ignore file, for what a user wants hidden from the model but not from git.
pub const IGNORE_FILE: &str = ".deepworkignore";

fn builder(sandbox: &Sandbox) -> WalkBuilder {
    let mut b = WalkBuilder::new(sandbox.root());
    b.hidden(true)
        .git_ignore(true)
        .git_global(false)
        .git_exclude(true)
        .require_git(false)
        .ignore(true)
        .parents(false)
        .follow_links(false)
        .add_custom_ignore_filename(IGNORE_FILE)
        .threads(0)
        .filter_entry(keep);
    b
}

fn keep(entry: &DirEntry) -> bool {
    let name = entry.file_name();
    !(name.eq_ignore_ascii_case(".git")
        || entry.depth() == 1 && name.eq_ignore_ascii_case(BACKUP_DIR))
}

/// Calls `visit(relative_path, full_path)` for every regular file of the project, on several
/// threads at once; returns what every thread's `State` gathered.
///
/// `make` builds one state per thread; `visit` fills it. Keeping state per thread means no lock
/// is taken per file, and handing over the relative path as a `&Path` means no allocation for
/// the files a visitor passes over (see [`slash`] to spell one).
pub(crate) fn par_files<S, M, V>(sandbox: &Sandbox, make: M, visit: V) -> Vec<S>
where
    S: Send,
    M: Fn() -> S + Sync,
    V: Fn(&mut S, &Path, &Path) + Sync,
{
    struct Local<'a, S: Send> {
        state: Option<S>,
        out: &'a Mutex<Vec<S>>,
    }
    impl<S: Send> Drop for Local<'_, S> {
        fn drop(&mut self) {
            if let Some(s) = self.state.take() {
                self.out.lock().unwrap_or_else(|p| p.into_inner()).push(s);
            }
        }
    }

    let out = Mutex::new(Vec::new());
    let root = sandbox.root();
    builder(sandbox).build_parallel().run(|| {
        let mut local = Local {
            state: Some(make()),
            out: &out,
        };
        let visit = &visit;
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let path = entry.path();
            let Ok(rel) = path.strip_prefix(root) else {
                return WalkState::Continue;
            };
            if let Some(state) = local.state.as_mut() {
                visit(state, rel, path);
            }
            WalkState::Continue
        })
    });
    out.into_inner().unwrap_or_else(|p| p.into_inner())
}

/// A relative path from the walk, spelled with `/`. On Unix the walk's paths already are.
pub(crate) fn slash(rel: &Path) -> String {
    if cfg!(unix) {
        rel.to_string_lossy().into_owned()
    } else {
        crate::sandbox::rel_to_slash(rel)
    }
}

/// Every file of the project, as sorted relative paths with `/`.
pub fn files(sandbox: &Sandbox) -> Vec<String> {
    let parts = par_files(sandbox, Vec::new, |v: &mut Vec<String>, rel, _| {
        v.push(slash(rel))
    });
    let mut all: Vec<String> = parts.into_iter().flatten().collect();
    all.sort_unstable();
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn walk_honours_ignore_rules_and_leaves_out_git_and_backup() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        for p in [
            "src/a.rs",
            "src/b.log",
            "node_modules/x/index.js",
            ".git/config",
            ".hidden/x",
            "backup/20260101-000000/src/a.rs",
            "src/backup/keep.txt",
            "secret/key.txt",
            "README.md",
        ] {
            fs::create_dir_all(r.join(p).parent().unwrap()).unwrap();
            fs::write(r.join(p), "x").unwrap();
        }
        fs::write(r.join(".gitignore"), "node_modules/\n*.log\n").unwrap();
        fs::write(r.join(IGNORE_FILE), "secret/\n").unwrap();
        let sb = Sandbox::new(r).unwrap();
        assert_eq!(
            files(&sb),
            vec!["README.md", "src/a.rs", "src/backup/keep.txt"]
        );
    }
}
