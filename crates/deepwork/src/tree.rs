//! The compact folder tree of the first message.
//!
//! The live runs showed that a model given the tree asks for the right file at once, while a
//! model without it guesses names for several rounds. The tree is capped so that a huge
//! project still costs a few kilobytes: folders are opened breadth first while the line
//! budget lasts, a folder that does not fit is shown closed with its file count, and a folder
//! with too many entries shows the first ones and "… N more".

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Caps for the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeLimits {
    /// Lines in all.
    pub max_lines: usize,
    /// Entries shown per folder before "… N more".
    pub max_entries: usize,
}

impl Default for TreeLimits {
    fn default() -> Self {
        TreeLimits {
            max_lines: 400,
            max_entries: 40,
        }
    }
}

#[derive(Default)]
struct Dir<'a> {
    dirs: BTreeMap<&'a str, Dir<'a>>,
    files: Vec<&'a str>,
    total: usize,
    open: bool,
}

impl<'a> Dir<'a> {
    fn insert(&mut self, path: &'a str) {
        self.total += 1;
        match path.split_once('/') {
            Some((head, rest)) => self.dirs.entry(head).or_default().insert(rest),
            None => self.files.push(path),
        }
    }

    fn entries(&self) -> usize {
        self.dirs.len() + self.files.len()
    }

    /// Lines this folder takes when opened (its own line is already counted).
    fn open_cost(&self, limits: TreeLimits) -> usize {
        let n = self.entries();
        n.min(limits.max_entries) + usize::from(n > limits.max_entries)
    }
}

/// Renders the tree of `files` (sorted relative paths with `/`).
pub fn render<'a>(files: impl IntoIterator<Item = &'a str>, limits: TreeLimits) -> String {
    let mut root = Dir::default();
    for f in files {
        root.insert(f);
    }
    // Breadth-first: open folders while the budget lasts.
    let mut used = root.open_cost(limits);
    root.open = true;
    let mut level: Vec<&mut Dir<'_>> = vec![&mut root];
    while !level.is_empty() {
        let mut next = Vec::new();
        for dir in level {
            for (i, child) in dir.dirs.values_mut().enumerate() {
                if i >= limits.max_entries {
                    break;
                }
                let cost = child.open_cost(limits);
                if used + cost <= limits.max_lines {
                    used += cost;
                    child.open = true;
                    next.push(child);
                }
            }
        }
        level = next;
    }
    let mut out = String::new();
    write_dir(&mut out, &root, 0, limits);
    out
}

fn write_dir(out: &mut String, dir: &Dir<'_>, depth: usize, limits: TreeLimits) {
    let indent = "  ".repeat(depth);
    let mut shown = 0;
    for (name, child) in &dir.dirs {
        if shown == limits.max_entries {
            break;
        }
        shown += 1;
        if child.open {
            let _ = writeln!(out, "{indent}{name}/");
            write_dir(out, child, depth + 1, limits);
        } else {
            let files = if child.total == 1 { "file" } else { "files" };
            let _ = writeln!(out, "{indent}{name}/ … {} {files}", child.total);
        }
    }
    for name in &dir.files {
        if shown == limits.max_entries {
            break;
        }
        shown += 1;
        let _ = writeln!(out, "{indent}{name}");
    }
    let more = dir.entries() - shown;
    if more > 0 {
        let _ = writeln!(out, "{indent}… {more} more");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_trees_are_shown_whole() {
        let t = render(
            ["ask.mjs", "lib/a.mjs", "lib/b/c.mjs", "ui.html"],
            TreeLimits::default(),
        );
        assert_eq!(t, "lib/\n  b/\n    c.mjs\n  a.mjs\nask.mjs\nui.html\n");
    }

    #[test]
    fn wide_folders_show_more_markers() {
        let files: Vec<String> = (0..10).map(|i| format!("f{i}.txt")).collect();
        let t = render(
            files.iter().map(String::as_str),
            TreeLimits {
                max_lines: 100,
                max_entries: 3,
            },
        );
        assert_eq!(t, "f0.txt\nf1.txt\nf2.txt\n… 7 more\n");
    }

    #[test]
    fn deep_folders_close_when_the_budget_runs_out() {
        let mut files = vec!["a/x.rs".to_string()];
        files.extend((0..50).map(|i| format!("big/f{i:02}.rs")));
        let t = render(
            files.iter().map(String::as_str),
            TreeLimits {
                max_lines: 10,
                max_entries: 40,
            },
        );
        assert_eq!(t, "a/\n  x.rs\nbig/ … 50 files\n");
        assert!(t.lines().count() <= 10);
    }

    #[test]
    fn the_line_budget_holds_for_a_big_tree() {
        let files: Vec<String> = (0..20_000)
            .map(|i| format!("d{}/e{}/f{}.rs", i % 37, i % 101, i))
            .collect::<Vec<_>>();
        let mut sorted = files;
        sorted.sort();
        let limits = TreeLimits::default();
        let t = render(sorted.iter().map(String::as_str), limits);
        assert!(
            t.lines().count() <= limits.max_lines,
            "{}",
            t.lines().count()
        );
        assert!(t.contains("more"));
    }
}
