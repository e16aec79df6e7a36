//! The walk over a project folder that the index (and so the tree, LIST and FIND) is built
//! from.
//!
//! It is the walker ripgrep and fd use (`ignore`), set up the same way: `.gitignore` (even
//! outside a git repository), `.ignore` and our own `.deepworkignore` honoured, hidden files
//! skipped, symlinks not followed. `.git/` anywhere and the top-level `backup/` are always
//! left out, whatever the ignore files say.
//!
//! On Windows a link is not always visible as one: Wine shows a Unix symlink as the plain
//! folder or file it points to, and a walk that trusts the entry's type would list, and FIND
//! would read, what lies outside the project (issue 39). There every entry is also resolved and
//! kept only when it resolves inside the root, the same line [`Sandbox::resolve`] holds for
//! NEED and writes.

use std::path::Path;
use std::sync::Mutex;

use ignore::{DirEntry, WalkBuilder, WalkState};

use crate::sandbox::{BACKUP_DIR, Sandbox};

/// Our own ignore file, for what a user wants hidden from the model but not from git.
pub const IGNORE_FILE: &str = ".deepworkignore";

/// The files whose content changes what the walk yields, looked for in every folder it opens
/// (`.git` for the `info/exclude` of a repository root). The index watches them: a change to
/// any of them can change the whole subtree.
pub(crate) const RULE_FILES: [&str; 4] = [".gitignore", ".ignore", IGNORE_FILE, ".git"];

/// The walker over `root` with our rules; `also` prunes further (an entry it refuses is not
/// yielded and, for a folder, not entered).
fn builder(root: &Path, also: impl Fn(&DirEntry) -> bool + Send + Sync + 'static) -> WalkBuilder {
    let mut b = WalkBuilder::new(root);
    let inside = Inside::new(root);
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
        .filter_entry(move |e| keep(e) && inside.holds(e) && also(e));
    b
}

fn keep(entry: &DirEntry) -> bool {
    let name = entry.file_name();
    !(name.eq_ignore_ascii_case(".git")
        || entry.depth() == 1 && name.eq_ignore_ascii_case(BACKUP_DIR))
}

/// Whether an entry is reached without going through a link. On Unix the walk sees every link
/// as one and never follows it, so nothing is resolved there.
#[derive(Debug, Clone)]
struct Inside {
    #[cfg(windows)]
    root: std::path::PathBuf,
    #[cfg(windows)]
    canonical_root: std::path::PathBuf,
}

impl Inside {
    fn new(_root: &Path) -> Inside {
        Inside {
            #[cfg(windows)]
            root: _root.to_path_buf(),
            // The sandbox's root is canonical already; resolve it again for a bare walk.
            #[cfg(windows)]
            canonical_root: crate::sandbox::canonical(_root)
                .unwrap_or_else(|_| _root.to_path_buf()),
        }
    }

    #[cfg(not(windows))]
    fn holds(&self, _entry: &DirEntry) -> bool {
        true
    }

    /// A symlink or junction Windows shows as one is not followed (`follow_links(false)`);
    /// one it does not (Wine's view of a Unix symlink) is caught here: the entry, resolved, must
    /// be where the walk found it. That refuses a link out of the project, and also one to a
    /// folder inside it (as on Unix), which would list files twice or, pointing at its own
    /// parent, never end. One resolution per entry: a cost only Windows pays. An entry that
    /// cannot be resolved (a dangling link) is left out.
    #[cfg(windows)]
    fn holds(&self, entry: &DirEntry) -> bool {
        if entry.depth() == 0 {
            return true;
        }
        let Ok(rel) = entry.path().strip_prefix(&self.root) else {
            return false;
        };
        crate::sandbox::canonical(entry.path()).is_ok_and(|p| p == self.canonical_root.join(rel))
    }
}

/// What the walk hands a visitor: a folder (the root included, as `""`) or a regular file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Dir,
    File,
}

/// Calls `visit(state, kind, relative_path, entry)` for every folder and regular file under
/// `root` that the rules and `also` let through, on several threads at once; returns what
/// every thread's state gathered.
///
/// `make` builds one state per thread; `visit` fills it. Keeping state per thread means no lock
/// is taken per entry, and handing over the relative path as a `&Path` means no allocation for
/// the entries a visitor passes over (see [`slash`] to spell one).
pub(crate) fn par_walk<S, M, V>(
    root: &Path,
    also: impl Fn(&DirEntry) -> bool + Send + Sync + 'static,
    make: M,
    visit: V,
) -> Vec<S>
where
    S: Send,
    M: Fn() -> S + Sync,
    V: Fn(&mut S, Kind, &Path, &DirEntry) + Sync,
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
    builder(root, also).build_parallel().run(|| {
        let mut local = Local {
            state: Some(make()),
            out: &out,
        };
        let visit = &visit;
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            let kind = match entry.file_type() {
                Some(t) if t.is_file() => Kind::File,
                Some(t) if t.is_dir() => Kind::Dir,
                _ => return WalkState::Continue,
            };
            let Ok(rel) = entry.path().strip_prefix(root) else {
                return WalkState::Continue;
            };
            if let Some(state) = local.state.as_mut() {
                visit(state, kind, rel, &entry);
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

/// Every file of the project, as sorted relative paths with `/`: the bare walk, without the
/// folder stamps an [`Index`](crate::Index) keeps to stay fresh.
pub fn files(sandbox: &Sandbox) -> Vec<String> {
    let parts = par_walk(
        sandbox.root(),
        |_| true,
        Vec::new,
        |v: &mut Vec<String>, kind, rel, _| {
            if kind == Kind::File {
                v.push(slash(rel));
            }
        },
    );
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
