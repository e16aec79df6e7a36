//! A proposed file against the file on disk, as hunks of lines for the front end.

use serde::Serialize;
use similar::{ChangeTag, TextDiff};
use ts_rs::TS;

/// Lines of context around each change.
const CONTEXT: usize = 3;

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct DiffLine {
    /// `" "`, `"+"` or `"-"`.
    pub tag: String,
    /// Line number in the old file (1-based), for context and removed lines.
    pub old: Option<u32>,
    /// Line number in the new file (1-based), for context and added lines.
    pub new: Option<u32>,
    /// The text without its line ending.
    pub text: String,
}

/// A run of changed lines with their context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct DiffHunk {
    /// The lines.
    pub lines: Vec<DiffLine>,
}

/// The hunks turning `old` into `new`; empty when they are equal.
pub fn hunks(old: &str, new: &str) -> Vec<DiffHunk> {
    let diff = TextDiff::from_lines(old, new);
    diff.grouped_ops(CONTEXT)
        .iter()
        .map(|group| DiffHunk {
            lines: group
                .iter()
                .flat_map(|op| diff.iter_changes(op))
                .map(|c| DiffLine {
                    tag: match c.tag() {
                        ChangeTag::Equal => " ",
                        ChangeTag::Insert => "+",
                        ChangeTag::Delete => "-",
                    }
                    .to_owned(),
                    old: c.old_index().map(|i| i as u32 + 1),
                    new: c.new_index().map(|i| i as u32 + 1),
                    text: c.value().trim_end_matches(['\n', '\r']).to_owned(),
                })
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_lines_with_numbers_and_context() {
        let h = hunks("a\nb\nc\n", "a\nB\nc\nd\n");
        assert_eq!(h.len(), 1);
        let got: Vec<String> = h[0]
            .lines
            .iter()
            .map(|l| format!("{}{}", l.tag, l.text))
            .collect();
        assert_eq!(got, [" a", "-b", "+B", " c", "+d"]);
        assert_eq!(h[0].lines[2].new, Some(2));
        assert!(hunks("same\n", "same\n").is_empty());
    }
}
