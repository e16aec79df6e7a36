//! The index against what a fresh full walk sees, after every kind of change.

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

use super::Index;
use crate::sandbox::Sandbox;
use crate::walk;

fn write(root: &Path, rel: &str, body: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, body).unwrap();
}

/// What a fresh full walk sees now: the index must always agree with it.
fn walked(sb: &Sandbox) -> Vec<String> {
    walk::files(sb)
}

fn paths(index: &Index) -> Vec<String> {
    index.paths().map(str::to_owned).collect()
}

fn project() -> (tempfile::TempDir, Sandbox) {
    let x = b"x".as_slice();
    let (d, sb) = crate::sandbox::project(&[
        ("src/a.rs", x),
        ("src/deep/b.rs", x),
        ("src/b.log", x),
        ("node_modules/x/index.js", x),
        (".git/config", x),
        (".hidden/x", x),
        ("backup/20260101-000000/src/a.rs", x),
        ("мой проект #1/файл.txt", x),
        ("README.md", x),
        (".gitignore", b"node_modules/\n*.log\n"),
    ]);
    let r = sb.root();
    // An ignore file changed within the last seconds is racy (a change to it walks the
    // folder again at every check): make it an old one, as in a real project.
    let old = SystemTime::now() - Duration::from_secs(3600);
    fs::File::options()
        .write(true)
        .open(r.join(".gitignore"))
        .unwrap()
        .set_modified(old)
        .unwrap();
    (d, sb)
}

#[test]
fn the_index_holds_what_the_walk_yields() {
    let (_d, sb) = project();
    let index = Index::walk(&sb);
    assert_eq!(paths(&index), walked(&sb));
    assert_eq!(
        paths(&index),
        [
            "README.md",
            "src/a.rs",
            "src/deep/b.rs",
            "мой проект #1/файл.txt"
        ]
    );
    assert_eq!(index.stats().walks, 1);
    assert!(index.heap_bytes() > 0);
}

#[test]
fn files_created_and_deleted_between_checks_are_seen_without_a_new_walk() {
    let (_d, sb) = project();
    let r = sb.root();
    let mut index = Index::walk(&sb);
    write(r, "src/new.rs", "x");
    write(r, "fresh/dir/c.rs", "x");
    write(r, "мой проект #1/второй.txt", "x");
    write(r, "src/c.log", "ignored by the root's .gitignore");
    write(r, "fresh/.hidden.rs", "hidden");
    fs::remove_file(r.join("src/deep/b.rs")).unwrap();
    fs::remove_file(r.join("README.md")).unwrap();
    let done = index.refresh();
    assert!(done.changed(), "{done:?}");
    assert_eq!(paths(&index), walked(&sb));
    assert_eq!(
        paths(&index),
        [
            "fresh/dir/c.rs",
            "src/a.rs",
            "src/new.rs",
            "мой проект #1/второй.txt",
            "мой проект #1/файл.txt"
        ]
    );
    fs::remove_dir_all(r.join("src")).unwrap();
    index.refresh();
    assert_eq!(paths(&index), walked(&sb));
    assert_eq!(index.stats().walks, 1, "only folders were listed again");
}

#[test]
fn an_ignore_file_edited_in_place_walks_again() {
    let (_d, sb) = project();
    let mut index = Index::walk(&sb);
    write(sb.root(), ".gitignore", "node_modules/\n*.log\n*.md\n");
    let done = index.refresh();
    assert!(done.rebuilt, "{done:?}");
    assert_eq!(paths(&index), walked(&sb));
    assert!(!paths(&index).contains(&"README.md".to_owned()));
}

#[test]
fn a_new_ignore_file_in_a_listed_folder_walks_again() {
    let (_d, sb) = project();
    let mut index = Index::walk(&sb);
    write(sb.root(), "src/.ignore", "deep/\n");
    assert!(index.refresh().rebuilt);
    assert_eq!(
        paths(&index),
        ["README.md", "src/a.rs", "мой проект #1/файл.txt"]
    );
}

/// With times set well in the past, nothing is racy: an unchanged folder costs one stat,
/// and a change lists again only the folder it happened in. (Setting a folder's time needs
/// a handle to the folder, which `File::open` gives on Unix only.)
#[cfg(unix)]
#[test]
fn only_the_changed_folder_is_listed_again() {
    let (_d, sb) = project();
    let r = sb.root();
    let old = SystemTime::now() - Duration::from_secs(3600);
    for dir in ["", "src", "src/deep", "мой проект #1"] {
        fs::File::open(r.join(dir))
            .unwrap()
            .set_modified(old)
            .unwrap();
    }
    let mut index = Index::walk(&sb);
    let quiet = index.refresh();
    assert_eq!((quiet.relisted, quiet.rebuilt), (0, false), "{quiet:?}");
    assert_eq!(quiet.checked, 4);
    write(r, "src/deep/new.rs", "x");
    let done = index.refresh();
    assert_eq!((done.relisted, done.rebuilt), (1, false), "{done:?}");
    assert_eq!(paths(&index), walked(&sb));
    assert_eq!(index.stats().walks, 1);
}

/// What changed since a mark, over several refreshes by whoever: a file that came and went in
/// between is in neither list, one removed and put back neither; a mark taken after a refresh
/// sees only what came later.
#[test]
fn the_journal_names_what_changed_since_a_mark_over_refreshes() {
    let (_d, sb) = project();
    let r = sb.root();
    let mut index = Index::walk(&sb);
    let start = index.generation();
    assert_eq!(index.changes_since(start).unwrap(), Default::default());
    // Times are racy right after a write: wait on the index itself, never a fixed sleep.
    let settle = |index: &mut Index, want: &dyn Fn(&Index) -> bool| {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !want(index) {
            assert!(
                std::time::Instant::now() < deadline,
                "the index never saw the change"
            );
            index.refresh();
        }
    };
    write(r, "src/new.rs", "x");
    write(r, "src/brief.rs", "x");
    settle(&mut index, &|i| {
        paths(i).contains(&"src/brief.rs".to_string())
    });
    let middle = index.generation();
    fs::remove_file(r.join("src/brief.rs")).unwrap();
    fs::remove_file(r.join("README.md")).unwrap();
    fs::remove_file(r.join("src/a.rs")).unwrap();
    settle(&mut index, &|i| !paths(i).contains(&"src/a.rs".to_string()));
    write(r, "src/a.rs", "back");
    settle(&mut index, &|i| paths(i).contains(&"src/a.rs".to_string()));
    assert_eq!(paths(&index), walked(&sb));

    let all = index.changes_since(start).unwrap();
    assert_eq!(all.added, vec!["src/new.rs".into()]);
    assert_eq!(all.removed, vec!["README.md".into()]);
    let later = index.changes_since(middle).unwrap();
    assert!(later.added.is_empty(), "{later:?}");
    assert_eq!(
        later.removed,
        vec!["README.md".into(), "src/brief.rs".into()]
    );
    assert_eq!(
        index.changes_since(index.generation()).unwrap(),
        Default::default()
    );
}
