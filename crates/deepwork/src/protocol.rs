//! Reading a model's answer: request lines and proposed files.
//!
//! A request is a whole line, trimmed, of the form `=== NEED: a.js, b.js ===`,
//! `=== LIST: **/*.mjs ===` or `=== FIND: text ===`, anywhere outside FILE blocks (models wrap
//! them in code fences, so fences do not hide them). A FILE block starts at
//! `=== FILE: path ===` and runs to `=== END FILE ===`, the next FILE header, or the end of the
//! answer. Its content is kept byte for byte, line endings included, except for one
//! surrounding code fence, which is stripped with its language tag.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum RequestKind {
    /// Whole files.
    Need,
    /// Paths matching a glob.
    List,
    /// Lines containing a literal text.
    Find,
}

impl RequestKind {
    /// The keyword as written in an answer.
    pub fn as_str(self) -> &'static str {
        match self {
            RequestKind::Need => "NEED",
            RequestKind::List => "LIST",
            RequestKind::Find => "FIND",
        }
    }
}

impl fmt::Display for RequestKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One request line of an answer.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Request {
    /// NEED, LIST or FIND.
    pub kind: RequestKind,
    /// Everything between the colon and the closing `===`, trimmed.
    pub arg: String,
}

impl Request {
    /// The paths of a NEED request, split on commas, with quotes and backticks around each
    /// taken off.
    pub fn paths(&self) -> Vec<&str> {
        self.arg
            .split(',')
            .map(|p| p.trim().trim_matches(|c| c == '`' || c == '"' || c == '\''))
            .filter(|p| !p.is_empty())
            .collect()
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.kind, self.arg)
    }
}

/// A file the model proposes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ProposedFile {
    /// The path as the model wrote it (checked by the sandbox only when written).
    pub path: String,
    /// The content, byte for byte.
    pub content: String,
    /// The block opened a code fence that never closed: the answer was cut off mid-file.
    pub truncated: bool,
}

/// Everything deepwork takes from one answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// Requests in the order they appear.
    pub requests: Vec<Request>,
    /// Proposed files in the order they appear.
    pub files: Vec<ProposedFile>,
}

enum Marker<'a> {
    Request(Request),
    FileStart(&'a str),
    FileEnd,
}

/// Recognises one marker line (`=== …: … ===` or `=== END FILE ===`).
fn marker(line: &str) -> Option<Marker<'_>> {
    let t = line.trim();
    let inner = t.strip_prefix("===")?.strip_suffix("===")?.trim();
    if inner == "END FILE" {
        return Some(Marker::FileEnd);
    }
    let (head, arg) = inner.split_once(':')?;
    let arg = arg.trim();
    if arg.is_empty() {
        return None;
    }
    let kind = match head.trim() {
        "NEED" => RequestKind::Need,
        "LIST" => RequestKind::List,
        "FIND" => RequestKind::Find,
        "FILE" => {
            return Some(Marker::FileStart(
                arg.trim_matches(|c| c == '`' || c == '"' || c == '\''),
            ));
        }
        _ => return None,
    };
    Some(Marker::Request(Request {
        kind,
        arg: arg.to_owned(),
    }))
}

/// Parses an answer.
pub fn parse(answer: &str) -> Parsed {
    let lines: Vec<&str> = answer.split_inclusive('\n').collect();
    let mut parsed = Parsed::default();
    let mut i = 0;
    while i < lines.len() {
        match marker(lines[i]) {
            Some(Marker::Request(r)) => {
                parsed.requests.push(r);
                i += 1;
            }
            Some(Marker::FileStart(path)) => {
                let (end, explicit_end) = block_end(&lines, i + 1);
                let (content, truncated) = file_content(&lines[i + 1..end], explicit_end);
                parsed.files.push(ProposedFile {
                    path: path.to_owned(),
                    content,
                    truncated,
                });
                i = if explicit_end { end + 1 } else { end };
            }
            Some(Marker::FileEnd) | None => i += 1,
        }
    }
    parsed
}

/// Where a FILE block whose content starts at `start` ends: the index of its
/// `=== END FILE ===` line (then `true`), or of the next FILE header or the end (then `false`).
fn block_end(lines: &[&str], start: usize) -> (usize, bool) {
    let mut end = start;
    while end < lines.len() {
        match marker(lines[end]) {
            Some(Marker::FileEnd) => return (end, true),
            Some(Marker::FileStart(_)) => return (end, false),
            _ => end += 1,
        }
    }
    (end, false)
}

/// The answer with every FILE block replaced by one line from `mark` (given the path): the
/// prose to show beside the proposed files, which are shown on their own.
pub fn replace_files(answer: &str, mark: impl Fn(&str) -> String) -> String {
    let lines: Vec<&str> = answer.split_inclusive('\n').collect();
    let mut out = String::with_capacity(answer.len());
    let mut i = 0;
    while i < lines.len() {
        if let Some(Marker::FileStart(path)) = marker(lines[i]) {
            let (end, explicit_end) = block_end(&lines, i + 1);
            out.push_str(&mark(path));
            out.push('\n');
            i = if explicit_end { end + 1 } else { end };
        } else {
            out.push_str(lines[i]);
            i += 1;
        }
    }
    out
}

/// An opening code fence: at most three spaces, then three or more backticks or tildes, then
/// an optional info string (the language tag).
fn fence_open(line: &str) -> Option<(char, usize)> {
    let l = line.trim_end_matches(['\r', '\n']);
    let indent = l.len() - l.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let l = &l[indent..];
    let ch = l.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = l.chars().take_while(|c| *c == ch).count();
    if n < 3 {
        return None;
    }
    // A backtick fence's info string may not contain backticks.
    if ch == '`' && l[n..].contains('`') {
        return None;
    }
    Some((ch, n))
}

/// A closing fence for an opener of `ch` × `n`: only fence characters, at least `n` of them.
fn fence_closes(line: &str, ch: char, n: usize) -> bool {
    let t = line.trim();
    let count = t.chars().take_while(|c| *c == ch).count();
    count >= n && count == t.chars().count()
}

/// The content of a FILE block's lines: one surrounding fence stripped, all else kept.
///
/// With an explicit `=== END FILE ===` the *last* closing fence closes the block, so a
/// Markdown file with fences of its own survives; without one the first closing fence does,
/// and whatever prose follows it is not part of the file. An opening fence with no closing
/// fence means the answer was cut off: `truncated`.
fn file_content(lines: &[&str], explicit_end: bool) -> (String, bool) {
    let first = lines.iter().position(|l| !l.trim().is_empty());
    let Some(first) = first else {
        return (lines.concat(), false);
    };
    let Some((ch, n)) = fence_open(lines[first]) else {
        return (lines.concat(), false);
    };
    let body = &lines[first + 1..];
    let close = if explicit_end {
        body.iter().rposition(|l| fence_closes(l, ch, n))
    } else {
        body.iter().position(|l| fence_closes(l, ch, n))
    };
    match close {
        Some(c) => (body[..c].concat(), false),
        None => (body.concat(), true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(kind: RequestKind, arg: &str) -> Request {
        Request {
            kind,
            arg: arg.into(),
        }
    }

    #[test]
    fn requests_anywhere_outside_files_in_order() {
        let a = "Let me look.\n=== NEED: a.js, src/b.js ===\n```\n=== FIND: waitForAnswer ===\n  === LIST: **/*.mjs ===  \n```\ntext === NEED: inline === no\n";
        let p = parse(a);
        assert_eq!(
            p.requests,
            vec![
                req(RequestKind::Need, "a.js, src/b.js"),
                req(RequestKind::Find, "waitForAnswer"),
                req(RequestKind::List, "**/*.mjs"),
            ]
        );
        assert_eq!(p.requests[0].paths(), vec!["a.js", "src/b.js"]);
        assert!(p.files.is_empty());
    }

    #[test]
    fn crlf_answers_and_malformed_markers() {
        let p = parse(
            "=== FIND: x ===\r\n=== NEED: ===\r\n=== RUN: rm -rf / ===\r\n=== NEED a.js ===\r\n",
        );
        assert_eq!(p.requests, vec![req(RequestKind::Find, "x")]);
    }

    #[test]
    fn request_lines_inside_a_file_block_are_content() {
        let a = "=== FILE: README.md ===\nUse `=== NEED: path ===` like this:\n=== NEED: a.js ===\n=== END FILE ===\n=== LIST: *.md ===\n";
        let p = parse(a);
        assert_eq!(p.requests, vec![req(RequestKind::List, "*.md")]);
        assert_eq!(p.files.len(), 1);
        assert_eq!(
            p.files[0].content,
            "Use `=== NEED: path ===` like this:\n=== NEED: a.js ===\n"
        );
        assert!(!p.files[0].truncated);
    }

    #[test]
    fn fence_and_language_tag_are_stripped_and_the_rest_kept_byte_for_byte() {
        let a = "=== FILE: src/a.js ===\n```javascript\nfunction f() {\n\treturn 1;   \n}\n```\n=== END FILE ===\n";
        let p = parse(a);
        assert_eq!(p.files[0].path, "src/a.js");
        assert_eq!(p.files[0].content, "function f() {\n\treturn 1;   \n}\n");
    }

    #[test]
    fn crlf_content_is_kept() {
        let a = "=== FILE: a.txt ===\r\n```\r\none\r\ntwo\r\n```\r\n=== END FILE ===\r\n";
        assert_eq!(parse(a).files[0].content, "one\r\ntwo\r\n");
    }

    #[test]
    fn no_trailing_newline_at_the_end_of_the_answer() {
        let p = parse("=== FILE: a.txt ===\nlast line");
        assert_eq!(p.files[0].content, "last line");
        assert!(!p.files[0].truncated);
    }

    #[test]
    fn a_file_runs_to_the_next_header_or_the_end() {
        let a = "=== FILE: a ===\nA\n=== FILE: b ===\n```rust\nB\n```\nSome prose after.\n```sh\nnot b\n```\n";
        let p = parse(a);
        assert_eq!(p.files.len(), 2);
        assert_eq!(p.files[0].content, "A\n");
        assert_eq!(p.files[1].content, "B\n");
    }

    #[test]
    fn explicit_end_keeps_inner_fences_of_markdown() {
        let a = "=== FILE: doc.md ===\n```markdown\n# Title\n```sh\nrun\n```\nend\n```\n=== END FILE ===\n";
        assert_eq!(parse(a).files[0].content, "# Title\n```sh\nrun\n```\nend\n");
    }

    #[test]
    fn longer_fences_and_tildes() {
        let a = "=== FILE: a.md ===\n````md\n```\ninner\n```\n````\n=== END FILE ===\n";
        assert_eq!(parse(a).files[0].content, "```\ninner\n```\n");
        let b = "=== FILE: b ===\n~~~\nx\n~~~\n";
        assert_eq!(parse(b).files[0].content, "x\n");
    }

    #[test]
    fn an_unclosed_fence_is_a_truncated_file() {
        // The seed's incident: the answer stopped mid-block at `// Бы`.
        let a = "=== FILE: router.js ===\n```js\nconst r = 1;\n// Бы";
        let p = parse(a);
        assert!(p.files[0].truncated);
        assert_eq!(p.files[0].content, "const r = 1;\n// Бы");
    }

    #[test]
    fn replace_files_keeps_the_prose_and_marks_each_file() {
        let a = "It is here.\n=== FILE: a.js ===\n```js\nx\n```\n=== END FILE ===\nAnd:\n=== FILE: b.md ===\ny\n";
        let out = replace_files(a, |p| format!("[file {p}]"));
        assert_eq!(out, "It is here.\n[file a.js]\nAnd:\n[file b.md]\n");
        assert_eq!(
            replace_files("no files\n", |_| unreachable!()),
            "no files\n"
        );
    }

    #[test]
    fn unfenced_content_is_kept_as_is() {
        let a = "=== FILE: a.txt ===\n\n  indented\n\n=== END FILE ===";
        assert_eq!(parse(a).files[0].content, "\n  indented\n\n");
    }

    #[test]
    fn only_one_surrounding_fence_is_stripped() {
        let a = "=== FILE: a.md ===\n```\n```\nx\n```\n```\n=== END FILE ===\n";
        assert_eq!(parse(a).files[0].content, "```\nx\n```\n");
    }
}
