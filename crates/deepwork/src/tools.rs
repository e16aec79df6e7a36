//! Executing an answer's requests, read-only, inside the sandbox, into the text of the next
//! message.
//!
//! Each result is plain text the model reads. Every cut is marked in that text with
//! `[truncated: …]`, so the model knows it did not see everything and can ask again more
//! narrowly.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::hash::{Hash as _, Hasher as _};
use std::path::Path;

use serde::Serialize;

use crate::find::find;
use crate::index::Index;
use crate::list::list;
use crate::protocol::{Request, RequestKind};
use crate::sandbox::Sandbox;
use crate::tree::TreeLimits;

/// The per-step limits of the tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Characters of file content sent by NEED in one step, all files together.
    pub need_chars: usize,
    /// Hits FIND shows per request.
    pub find_hits: usize,
    /// Paths LIST shows per request.
    pub list_paths: usize,
    /// Caps of the folder tree.
    pub tree: TreeLimits,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            need_chars: 200_000,
            find_hits: 100,
            list_paths: 300,
            tree: TreeLimits::default(),
        }
    }
}

/// What one request did, for the step log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RequestStat {
    /// NEED, LIST or FIND.
    pub kind: RequestKind,
    /// The request's argument as written.
    pub arg: String,
    /// LIST and FIND: matches found before any cut; NEED: files sent (whole or cut).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub hits: usize,
    /// Whether anything was cut.
    pub truncated: bool,
    /// NEED: files already sent whole in this run and unchanged since, answered with a line
    /// instead of the file.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub unchanged: usize,
    /// NEED: files sent again because they changed on disk since a step sent them (counted
    /// in `hits` too).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub changed: usize,
}

/// The text for the model and what each request did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Executed {
    /// The results, ready to send.
    pub text: String,
    /// One entry per request, in order.
    pub stats: Vec<RequestStat>,
}

/// The files a run has already sent whole, by the step that carried them and a hash of
/// what was sent: asked for again, a file is sent again only if it changed, so that a model
/// re-reading what it already has does not spend the step's NEED budget on it.
#[derive(Debug, Clone, Default)]
pub struct Sent {
    files: HashMap<String, (usize, u64)>,
}

impl Sent {
    /// The step that last sent `shown` and whether `text` is what it sent.
    fn seen(&self, shown: &str, hash: u64) -> Option<(usize, bool)> {
        self.files
            .get(shown)
            .map(|&(step, old)| (step, old == hash))
    }

    fn record(&mut self, shown: &str, step: usize, hash: u64) {
        self.files.insert(shown.to_owned(), (step, hash));
    }
}

/// A hash of a file's text; it is compared only within one run (one process), so the
/// standard library's fixed-key SipHash is enough.
fn content_hash(text: &str) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// Runs requests in order; NEED shares one character budget across the step. NEED reads
/// through the sandbox; LIST and FIND read `index`, which the caller keeps fresh. `sent`
/// remembers the files sent whole so far; `step` is the step whose message carries the result.
pub fn execute(
    sandbox: &Sandbox,
    index: &Index,
    requests: &[Request],
    limits: &Limits,
    sent: &mut Sent,
    step: usize,
) -> Executed {
    let mut out = Executed::default();
    let mut budget = limits.need_chars;
    for r in requests {
        let start = out.text.len();
        let mut again = Again::default();
        let (hits, truncated) = match r.kind {
            RequestKind::Need => {
                let (hits, truncated, seen) = need(
                    sandbox,
                    &r.paths(),
                    &mut budget,
                    limits.need_chars,
                    &mut out.text,
                    &r.to_string(),
                    Some((sent, step)),
                );
                again = seen;
                (hits, truncated)
            }
            RequestKind::List => run_list(index, &r.arg, limits.list_paths, &mut out.text),
            RequestKind::Find => run_find(index, &r.arg, limits.find_hits, &mut out.text),
        };
        if out.text.len() > start && !out.text.ends_with('\n') {
            out.text.push('\n');
        }
        out.text.push('\n');
        out.stats.push(RequestStat {
            kind: r.kind,
            arg: r.arg.clone(),
            hits,
            truncated,
            unchanged: again.unchanged,
            changed: again.changed,
        });
    }
    out
}

/// What NEED found of the files a run had sent before.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Again {
    /// Answered with "unchanged since step k".
    unchanged: usize,
    /// Sent again, marked "changed on disk since step k".
    changed: usize,
}

/// Renders files for the model (ticked files of the first message use this too).
/// Returns (files sent, anything cut, files seen before).
pub(crate) fn need(
    sandbox: &Sandbox,
    paths: &[&str],
    budget: &mut usize,
    limit: usize,
    out: &mut String,
    header: &str,
    mut sent: Option<(&mut Sent, usize)>,
) -> (usize, bool, Again) {
    let _ = writeln!(out, "[{header}]");
    let mut sent_count = 0;
    let mut truncated = false;
    let mut again = Again::default();
    for raw in paths {
        let path = match sandbox.resolve(raw) {
            Ok(p) => p,
            Err(e) => {
                let _ = writeln!(out, "refused: {raw}: {e}");
                continue;
            }
        };
        let shown = sandbox.display_rel(&path);
        match read_text(&path) {
            Read::Missing => {
                let _ = writeln!(out, "file not found: {raw}");
            }
            Read::Folder => {
                let _ = writeln!(out, "not a file: {shown} (a folder; use LIST)");
            }
            Read::Binary(len) => {
                let _ = writeln!(out, "binary file, not sent: {shown} ({len} bytes)");
            }
            Read::Failed(e) => {
                let _ = writeln!(out, "cannot read {shown}: {e}");
            }
            Read::Text(text) => {
                let chars = text.chars().count();
                let hash = content_hash(&text);
                let mut changed_since = None;
                if let Some((memory, now)) = sent.as_ref() {
                    // Only an earlier step counts: two names of one file (a symlink) in this
                    // step's NEEDs are both answered whole, as asked.
                    match memory.seen(&shown, hash).filter(|&(step, _)| step < *now) {
                        Some((step, true)) => {
                            again.unchanged += 1;
                            let _ = writeln!(
                                out,
                                "unchanged since step {step}: {shown} ({chars} characters; not sent again)"
                            );
                            continue;
                        }
                        Some((step, false)) => changed_since = Some(step),
                        None => {}
                    }
                }
                if *budget == 0 {
                    truncated = true;
                    let _ = writeln!(
                        out,
                        "[truncated: {shown} not sent ({chars} characters); the NEED limit of {limit} characters per step is used up]"
                    );
                    continue;
                }
                sent_count += 1;
                if let Some(step) = changed_since {
                    again.changed += 1;
                    let _ = writeln!(out, "[changed on disk since step {step}]");
                }
                let _ = writeln!(out, "--- {shown} ({chars} characters) ---");
                if chars <= *budget {
                    *budget -= chars;
                    // Only a file sent whole is remembered: a cut one is sent again in full.
                    if let Some((memory, step)) = sent.as_mut() {
                        memory.record(&shown, *step, hash);
                    }
                    out.push_str(&text);
                    if !text.ends_with('\n') {
                        out.push('\n');
                    }
                } else {
                    truncated = true;
                    let cut = text
                        .char_indices()
                        .nth(*budget)
                        .map_or(text.len(), |(i, _)| i);
                    out.push_str(&text[..cut]);
                    let _ = writeln!(
                        out,
                        "\n[truncated: {shown} cut at {} of {chars} characters; the NEED limit is {limit} characters per step]",
                        *budget
                    );
                    *budget = 0;
                }
                let _ = writeln!(out, "--- end of {shown} ---");
            }
        }
    }
    (sent_count, truncated, again)
}

enum Read {
    Missing,
    Folder,
    Binary(usize),
    Failed(std::io::Error),
    Text(String),
}

fn read_text(path: &Path) -> Read {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Read::Missing,
        Err(e) => return Read::Failed(e),
        Ok(m) if m.is_dir() => return Read::Folder,
        Ok(_) => {}
    }
    match std::fs::read(path) {
        Ok(bytes) if memchr::memchr(0, &bytes).is_some() => Read::Binary(bytes.len()),
        Ok(bytes) => Read::Text(match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        }),
        Err(e) => Read::Failed(e),
    }
}

fn run_list(index: &Index, glob: &str, limit: usize, out: &mut String) -> (usize, bool) {
    let _ = writeln!(out, "[LIST {glob}]");
    match list(index, glob, limit) {
        Err(e) => {
            let _ = writeln!(out, "{e}");
            (0, false)
        }
        Ok(l) if l.total == 0 => {
            let _ = writeln!(out, "no paths match: {glob}");
            (0, false)
        }
        Ok(l) => {
            for p in &l.paths {
                let _ = writeln!(out, "{p}");
            }
            let cut = l.total > l.paths.len();
            if cut {
                let _ = writeln!(
                    out,
                    "[truncated: {} of {} paths shown; the LIST limit is {limit}, narrow the glob]",
                    l.paths.len(),
                    l.total
                );
            }
            (l.total, cut)
        }
    }
}

fn run_find(index: &Index, text: &str, limit: usize, out: &mut String) -> (usize, bool) {
    let _ = writeln!(out, "[FIND {text}]");
    let f = find(index, text, limit);
    if f.total == 0 {
        let _ = writeln!(out, "no hits for: {text}");
        return (0, false);
    }
    for h in &f.hits {
        let _ = writeln!(out, "{}:{}: {}", h.path, h.line, h.text);
    }
    let cut = f.total > f.hits.len();
    if cut {
        let _ = writeln!(
            out,
            "[truncated: {} of {} hits shown; the FIND limit is {limit}, search for something more specific]",
            f.hits.len(),
            f.total
        );
    }
    (f.total, cut)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::parse;
    use crate::sandbox::project;

    fn run(sb: &Sandbox, answer: &str, limits: &Limits) -> Executed {
        execute(
            sb,
            &Index::walk(sb),
            &parse(answer).requests,
            limits,
            &mut Sent::default(),
            2,
        )
    }

    #[test]
    fn need_again_answers_unchanged_with_a_line_and_changed_or_cut_with_the_file() {
        let (_d, sb) = project(&[("a.js", b"let a = 1;"), ("big.js", b"0123456789")]);
        let index = Index::walk(&sb);
        let limits = Limits {
            need_chars: 15,
            ..Limits::default()
        };
        let mut sent = Sent::default();
        let need = |sent: &mut Sent, step| {
            let r = parse("=== NEED: a.js, big.js ===\n").requests;
            execute(&sb, &index, &r, &limits, sent, step)
        };
        // Step 2: a.js whole (10 of 15), big.js cut at 5.
        let first = need(&mut sent, 2);
        assert!(first.text.contains("let a = 1;\n"), "{}", first.text);
        assert!(first.text.contains("cut at 5 of 10"), "{}", first.text);
        // Step 3: a.js unchanged costs a line; big.js was cut, so it is sent (whole now).
        let again = need(&mut sent, 3);
        assert!(
            again
                .text
                .contains("unchanged since step 2: a.js (10 characters; not sent again)\n"),
            "{}",
            again.text
        );
        assert!(!again.text.contains("let a = 1;"), "{}", again.text);
        assert!(
            again
                .text
                .contains("--- big.js (10 characters) ---\n0123456789\n"),
            "{}",
            again.text
        );
        assert_eq!(again.stats[0].hits, 1, "only big.js was sent");
        assert_eq!((again.stats[0].unchanged, again.stats[0].changed), (1, 0));
        // Step 4: a.js edited is sent again, marked with the step that sent the old one.
        std::fs::write(sb.root().join("a.js"), "let a = 2;").unwrap();
        let changed = need(&mut sent, 4);
        assert!(
            changed.text.contains(
                "[changed on disk since step 2]\n--- a.js (10 characters) ---\nlet a = 2;\n"
            ),
            "{}",
            changed.text
        );
        assert!(
            changed.text.contains("unchanged since step 3: big.js"),
            "{}",
            changed.text
        );
        assert_eq!(
            (changed.stats[0].unchanged, changed.stats[0].changed),
            (1, 1)
        );
    }

    #[test]
    fn need_sends_files_and_answers_missing_binary_and_refused() {
        let (_d, sb) = project(&[
            ("a.js", b"let a = 1;"),
            ("img.png", b"\x89PNG\0\0"),
            ("dir/x", b""),
        ]);
        let e = run(
            &sb,
            "=== NEED: a.js, gone.js, img.png, ../etc/passwd, dir ===\n",
            &Limits::default(),
        );
        assert!(
            e.text
                .contains("--- a.js (10 characters) ---\nlet a = 1;\n--- end of a.js ---"),
            "{}",
            e.text
        );
        assert!(e.text.contains("file not found: gone.js"));
        assert!(e.text.contains("binary file, not sent: img.png (6 bytes)"));
        assert!(
            e.text
                .contains("refused: ../etc/passwd: path escapes the project folder")
        );
        assert!(e.text.contains("not a file: dir (a folder; use LIST)"));
        assert_eq!(e.stats[0].hits, 1);
        assert!(!e.stats[0].truncated);
    }

    #[test]
    fn need_budget_is_shared_across_the_step_and_cuts_are_marked() {
        let (_d, sb) = project(&[
            ("a.txt", "я".repeat(60).as_bytes()),
            ("b.txt", b"0123456789"),
            ("c.txt", b"c"),
        ]);
        let limits = Limits {
            need_chars: 65,
            ..Limits::default()
        };
        let e = run(
            &sb,
            "=== NEED: a.txt ===\n=== NEED: b.txt, c.txt ===\n",
            &limits,
        );
        assert!(
            e.text
                .contains(&format!("{}\n--- end of a.txt ---", "я".repeat(60)))
        );
        assert!(e.text.contains("01234\n[truncated: b.txt cut at 5 of 10 characters; the NEED limit is 65 characters per step]"), "{}", e.text);
        assert!(e.text.contains("[truncated: c.txt not sent (1 characters)"));
        assert_eq!((e.stats[0].hits, e.stats[0].truncated), (1, false));
        assert_eq!((e.stats[1].hits, e.stats[1].truncated), (1, true));
    }

    #[test]
    fn list_and_find_report_totals_and_cuts() {
        let files: Vec<(String, Vec<u8>)> = (0..7)
            .map(|i| (format!("m{i}.mjs"), b"needle\nneedle\n".to_vec()))
            .collect();
        let refs: Vec<(&str, &[u8])> = files
            .iter()
            .map(|(p, c)| (p.as_str(), c.as_slice()))
            .collect();
        let (_d, sb) = project(&refs);
        let limits = Limits {
            find_hits: 3,
            list_paths: 2,
            ..Limits::default()
        };
        let e = run(
            &sb,
            "=== LIST: *.mjs ===\n=== FIND: needle ===\n=== FIND: nothing ===\n=== LIST: *.rs ===\n",
            &limits,
        );
        assert!(
            e.text
                .contains("[LIST *.mjs]\nm0.mjs\nm1.mjs\n[truncated: 2 of 7 paths shown"),
            "{}",
            e.text
        );
        assert!(e.text.contains(
            "m0.mjs:1: needle\nm0.mjs:2: needle\nm1.mjs:1: needle\n[truncated: 3 of 14 hits shown"
        ));
        assert!(e.text.contains("no hits for: nothing"));
        assert!(e.text.contains("no paths match: *.rs"));
        let got: Vec<_> = e.stats.iter().map(|s| (s.hits, s.truncated)).collect();
        assert_eq!(got, vec![(7, true), (14, true), (0, false), (0, false)]);
    }
}
