//! `--selftest`: offline checks of the parser, the sandbox, globs and fences, on a scratch
//! folder; nothing is sent anywhere. It guards the behaviour a user relies on before the
//! first real run (the seed's "what was verified" list), on the user's own machine.

use std::fs;
use std::path::Path;

use crate::index::Index;
use crate::list::list;
use crate::protocol::{RequestKind, parse};
use crate::sandbox::Sandbox;
#[cfg(unix)]
use crate::sandbox::SandboxError;

/// One check and its result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelfCheck {
    /// What was checked.
    pub name: &'static str,
    /// `None` when it passed; what went wrong otherwise.
    pub failure: Option<String>,
}

fn expect(name: &'static str, ok: bool, detail: impl FnOnce() -> String) -> SelfCheck {
    SelfCheck {
        name,
        failure: (!ok).then(detail),
    }
}

/// Runs every check.
pub fn run() -> Vec<SelfCheck> {
    let mut out = Vec::new();

    let p = parse(
        "Looking.\n```\n=== FIND: waitForAnswer ===\n=== NEED: ask.mjs, ui.html ===\n```\n=== LIST: **/*.mjs ===\n",
    );
    let kinds: Vec<RequestKind> = p.requests.iter().map(|r| r.kind).collect();
    out.push(expect(
        "requests are found in order, inside code fences too",
        kinds == [RequestKind::Find, RequestKind::Need, RequestKind::List]
            && p.requests[1].paths() == ["ask.mjs", "ui.html"],
        || format!("{:?}", p.requests),
    ));

    let p = parse(
        "=== FILE: FORMAT.md ===\nWrite `=== NEED: path ===`:\n=== NEED: secret.txt ===\n=== END FILE ===\n",
    );
    out.push(expect(
        "a request line inside a FILE block is content, not a request",
        p.requests.is_empty()
            && p.files.len() == 1
            && p.files[0].content.contains("=== NEED: secret.txt ==="),
        || format!("{p:?}"),
    ));

    let p = parse("=== FILE: a.py ===\n```python\ndef f():\n\treturn 1  \n```\n=== END FILE ===\n");
    out.push(expect(
        "the fence and its language tag are stripped, indentation and trailing spaces kept",
        p.files.first().map(|f| f.content.as_str()) == Some("def f():\n\treturn 1  \n"),
        || format!("{:?}", p.files),
    ));

    let p = parse("=== FILE: r.js ===\r\n```js\r\nconst a = 1;\r\n```\r\n");
    out.push(expect(
        "CRLF line endings are kept",
        p.files.first().map(|f| f.content.as_str()) == Some("const a = 1;\r\n"),
        || format!("{:?}", p.files),
    ));

    let p = parse("=== FILE: router.js ===\n```js\nconst r = 1;\n// Бы");
    out.push(expect(
        "a file cut off inside its fence is marked truncated",
        p.files.first().is_some_and(|f| f.truncated),
        || format!("{:?}", p.files),
    ));

    match tempfile::tempdir() {
        Ok(dir) => sandbox_checks(dir.path(), &mut out),
        Err(e) => out.push(SelfCheck {
            name: "scratch folder",
            failure: Some(e.to_string()),
        }),
    }
    out
}

fn sandbox_checks(root: &Path, out: &mut Vec<SelfCheck>) {
    let made = fs::create_dir_all(root.join("project/lib/deep"))
        .and_then(|()| fs::write(root.join("project/ask.mjs"), "x"))
        .and_then(|()| fs::write(root.join("project/lib/a.mjs"), "x"))
        .and_then(|()| fs::write(root.join("project/lib/deep/b.mjs"), "x"))
        .and_then(|()| fs::write(root.join("outside.txt"), "secret"));
    let sb = match made.and_then(|()| Sandbox::new(root.join("project"))) {
        Ok(sb) => sb,
        Err(e) => {
            out.push(SelfCheck {
                name: "scratch project",
                failure: Some(e.to_string()),
            });
            return;
        }
    };
    let refused = [
        "../outside.txt",
        "lib/../../outside.txt",
        "/etc/passwd",
        "C:\\Windows\\win.ini",
        "%2e%2e/outside.txt",
        ".git/config",
        "backup/x",
    ];
    let let_through: Vec<&str> = refused
        .iter()
        .copied()
        .filter(|p| sb.resolve(p).is_ok())
        .collect();
    out.push(expect(
        "paths outside the folder, encoded escapes, .git/ and backup/ are refused",
        let_through.is_empty(),
        || format!("let through: {let_through:?}"),
    ));
    #[cfg(unix)]
    {
        let link = std::os::unix::fs::symlink(root.join("outside.txt"), sb.root().join("link.txt"))
            .and_then(|()| std::os::unix::fs::symlink(root, sb.root().join("up")));
        let res = link.map(|()| (sb.resolve("link.txt"), sb.resolve("up/outside.txt")));
        out.push(expect(
            "symlinks that lead outside the folder are refused",
            matches!(
                res,
                Ok((
                    Err(SandboxError::SymlinkEscape),
                    Err(SandboxError::SymlinkEscape)
                ))
            ),
            || format!("{res:?}"),
        ));
    }
    let index = Index::walk(&sb);
    let star = list(&index, "*.mjs", 300).map(|l| l.paths);
    let double = list(&index, "**/*.mjs", 300).map(|l| l.paths);
    out.push(expect(
        "`*` stays within a folder, `**` goes across",
        matches!((&star, &double), (Ok(s), Ok(d)) if s == &["ask.mjs"] && d == &["ask.mjs", "lib/a.mjs", "lib/deep/b.mjs"]),
        || format!("*.mjs: {star:?}; **/*.mjs: {double:?}"),
    ));
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_selfcheck_passes() {
        let failed: Vec<_> = super::run()
            .into_iter()
            .filter(|c| c.failure.is_some())
            .collect();
        assert!(failed.is_empty(), "{failed:?}");
    }
}
