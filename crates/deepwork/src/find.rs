//! FIND: where a literal text occurs, as `path:line: text`.
//!
//! The index's files are read on every core at once, each thread with one buffer it reuses,
//! and searched with `memchr::memmem` (the substring searcher ripgrep's literal path ends in).
//! Files with a NUL byte are binary and skipped, as ripgrep skips them when it walks. The hits
//! come back in the index's order (by path) and by line, so a cut at the limit always keeps
//! the same ones.

use std::path::PathBuf;

use memchr::memmem;

use crate::index::{self, Index};
use crate::par;

/// Lines longer than this are cut in the hit text (minified files would flood the answer).
pub const MAX_LINE_CHARS: usize = 300;

/// One line that contains the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// The file, relative, with `/`.
    pub path: String,
    /// 1-based line number.
    pub line: usize,
    /// The line, without its line ending, cut at [`MAX_LINE_CHARS`] (with a mark).
    pub text: String,
}

/// What FIND found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    /// The first `limit` hits in path and line order.
    pub hits: Vec<Hit>,
    /// How many lines matched in all.
    pub total: usize,
}

#[derive(Default)]
struct FileHits {
    hits: Vec<(usize, String)>,
    count: usize,
}

/// A thread's reused state: the file's full path and its bytes.
#[derive(Default)]
struct Scratch {
    path: PathBuf,
    buf: Vec<u8>,
}

/// Searches every indexed file for `needle`, case-sensitively, keeping at most `limit` hits.
pub fn find(index: &Index, needle: &str, limit: usize) -> Found {
    if needle.is_empty() {
        return Found::default();
    }
    let finder = memmem::Finder::new(needle.as_bytes());
    let root = index.root();
    // Small chunks: a 10 MB file late in the order must not leave the other threads idle for
    // long, and handing out a chunk is one atomic add.
    let per_file = par::par_map(index.files(), 8, Scratch::default, |s, _, f| {
        index::full_path_into(root, &f.path, &mut s.path);
        let len = par::read_into(&s.path, &mut s.buf).ok()?;
        let data = &s.buf[..len];
        // Most files do not hold the text: look for it first, and for the NUL that makes a
        // file binary only in the files that do (one pass over most files instead of two).
        search(&finder, data, limit).filter(|_| memchr::memchr(0, data).is_none())
    });
    let files = index.files();
    let total = per_file.iter().map(|(_, f)| f.count).sum();
    let mut hits = Vec::with_capacity(limit.min(total));
    'outer: for (i, f) in per_file {
        for (line, text) in f.hits {
            if hits.len() == limit {
                break 'outer;
            }
            hits.push(Hit {
                path: files[i].path.to_string(),
                line,
                text,
            });
        }
    }
    Found { hits, total }
}

/// Finds the matching lines of one file; keeps the text of the first `keep` of them.
fn search(finder: &memmem::Finder<'_>, data: &[u8], keep: usize) -> Option<FileHits> {
    let mut pos = 0;
    let mut line_no = 1;
    let mut counted_to = 0;
    let mut fh: Option<FileHits> = None;
    while let Some(off) = finder.find(&data[pos..]) {
        let at = pos + off;
        line_no += memchr::memchr_iter(b'\n', &data[counted_to..at]).count();
        let start = memchr::memrchr(b'\n', &data[..at]).map_or(0, |i| i + 1);
        let end = memchr::memchr(b'\n', &data[at..]).map_or(data.len(), |i| at + i);
        let f = fh.get_or_insert_with(FileHits::default);
        f.count += 1;
        if f.hits.len() < keep {
            f.hits.push((line_no, line_text(&data[start..end])));
        }
        // One hit per line: go on after this line's end.
        if end >= data.len() {
            break;
        }
        line_no += 1;
        counted_to = end + 1;
        pos = end + 1;
    }
    fh
}

fn line_text(bytes: &[u8]) -> String {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let text = String::from_utf8_lossy(bytes);
    match text.char_indices().nth(MAX_LINE_CHARS) {
        None => text.into_owned(),
        Some((cut, _)) => {
            let len = text.chars().count();
            format!(
                "{} [truncated: line cut at {MAX_LINE_CHARS} of {len} characters]",
                &text[..cut]
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::project;

    fn find(sb: &crate::Sandbox, needle: &str, limit: usize) -> Found {
        super::find(&Index::walk(sb), needle, limit)
    }

    #[test]
    fn hits_are_sorted_with_line_numbers_one_per_line() {
        let (_d, sb) = project(&[
            ("b.js", b"x\nneedle needle\r\nneedle\n"),
            ("a/c.js", b"needle"),
            ("bin.dat", b"needle\0"),
            ("d.js", b"Needle"),
        ]);
        let f = find(&sb, "needle", 100);
        let got: Vec<_> = f
            .hits
            .iter()
            .map(|h| format!("{}:{}: {}", h.path, h.line, h.text))
            .collect();
        assert_eq!(
            got,
            vec![
                "a/c.js:1: needle",
                "b.js:2: needle needle",
                "b.js:3: needle"
            ]
        );
        assert_eq!(f.total, 3);
    }

    #[test]
    fn limit_cuts_deterministically_but_counts_all() {
        let body = "hit\n".repeat(150);
        let (_d, sb) = project(&[("a.txt", body.as_bytes()), ("b.txt", b"hit\n")]);
        let f = find(&sb, "hit", 100);
        assert_eq!(f.total, 151);
        assert_eq!(f.hits.len(), 100);
        assert_eq!(f.hits[99].line, 100);
        assert!(f.hits.iter().all(|h| h.path == "a.txt"));
    }

    #[test]
    fn long_lines_are_cut_with_a_mark() {
        let long = format!("{}needle{}", "a".repeat(500), "b".repeat(500));
        let (_d, sb) = project(&[("min.js", long.as_bytes())]);
        let f = find(&sb, "needle", 100);
        assert!(
            f.hits[0]
                .text
                .contains("[truncated: line cut at 300 of 1006 characters]")
        );
    }

    #[test]
    fn cyrillic_text_and_multiline_counts() {
        let (_d, sb) = project(&[("мой файл.txt", "один\nдва\nтри два\n".as_bytes())]);
        let f = find(&sb, "два", 100);
        let lines: Vec<_> = f.hits.iter().map(|h| h.line).collect();
        assert_eq!(lines, vec![2, 3]);
        assert_eq!(f.hits[0].path, "мой файл.txt");
    }
}
