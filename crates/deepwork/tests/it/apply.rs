//! FILE blocks through `--apply`: bytes kept, backups, truncated blocks, refused paths.

use serde_json::Value;

use crate::support::*;

fn apply_json(p: &Project, answer: &str) -> (Out, Bridge) {
    let b = Bridge::answers(&[answer, "unexpected second call"]);
    let out = deepwork()
        .dir(p)
        .bridge(&b)
        .args(["--apply", "--json", "write it"])
        .run();
    (out, b)
}

#[test]
fn apply_keeps_bytes_exactly() {
    let p = Project::new();
    p.write("a.txt", "A\n");
    let answer = concat!(
        "Here are the files.\n",
        "=== FILE: src/tabs.txt ===\n",
        "```text\n",
        "\tindented with a tab\n",
        "    four spaces, trailing spaces   \n",
        "end\n",
        "```\n",
        "=== END FILE ===\n",
        "Some prose between files.\n",
        "=== FILE: docs/format.md ===\n",
        "Ask like this:\n",
        "=== NEED: a.txt ===\n",
        "=== LIST: **/* ===\n",
        "=== FIND: text ===\n",
        "=== END FILE ===\n",
        "=== FILE: crlf.txt ===\r\n",
        "line1\r\n",
        "line2\r\n",
        "=== END FILE ===\r\n",
        "=== FILE: one.txt ===\n",
        "ONE\n",
        "=== FILE: two.txt ===\n",
        "TWO\n",
        "=== END FILE ===\n",
        "=== FILE: nonl.txt ===\n",
        "no newline at the end",
    );
    let (out, b) = apply_json(&p, answer);
    out.expect_code(0);
    let v = out.json();
    assert_eq!(
        b.calls().len(),
        1,
        "request lines inside FILE blocks must not be executed"
    );
    assert_eq!(v["stop_reason"], "no_requests");
    let expected: [(&str, &[u8]); 6] = [
        (
            "src/tabs.txt",
            b"\tindented with a tab\n    four spaces, trailing spaces   \nend\n",
        ),
        (
            "docs/format.md",
            b"Ask like this:\n=== NEED: a.txt ===\n=== LIST: **/* ===\n=== FIND: text ===\n",
        ),
        ("crlf.txt", b"line1\r\nline2\r\n"),
        ("one.txt", b"ONE\n"),
        ("two.txt", b"TWO\n"),
        ("nonl.txt", b"no newline at the end"),
    ];
    assert_eq!(files(&v).len(), expected.len(), "{:#}", v["files"]);
    for (path, bytes) in expected {
        let f = file_entry(&v, path);
        assert_eq!(f["applied"], true, "{f:#}");
        assert_eq!(f["truncated"], false, "{f:#}");
        assert_eq!(f["backup"], Value::Null, "new file has no backup: {f:#}");
        assert_eq!(
            String::from_utf8_lossy(&p.read(path)),
            String::from_utf8_lossy(bytes),
            "content of {path}"
        );
    }
    assert!(!p.exists("backup"), "no backup folder for new files");
}

#[test]
fn apply_backs_up_the_old_version() {
    let p = Project::new();
    let old = "OLD VERSION\r\n\tkeep me\n";
    p.write("src/app.js", old);
    let answer = "=== FILE: src/app.js ===\n```js\nNEW VERSION\n```\n=== END FILE ===\n=== FILE: new/deep/file.txt ===\nFRESH\n=== END FILE ===\n";
    let (out, _b) = apply_json(&p, answer);
    out.expect_code(0);
    let v = out.json();

    let f = file_entry(&v, "src/app.js");
    assert_eq!(f["applied"], true, "{f:#}");
    let backup = f["backup"]
        .as_str()
        .unwrap_or_else(|| panic!("no backup path: {f:#}"));
    assert!(
        is_backup_path(backup, "src/app.js"),
        "backup path {backup:?}"
    );
    assert_eq!(
        p.read_string(backup),
        old,
        "backup holds the old version byte for byte"
    );
    assert_eq!(p.read_string("src/app.js"), "NEW VERSION\n");

    let f = file_entry(&v, "new/deep/file.txt");
    assert_eq!(f["applied"], true, "{f:#}");
    assert_eq!(f["backup"], Value::Null);
    assert_eq!(p.read_string("new/deep/file.txt"), "FRESH\n");

    // Only the replaced file went to backup/ (a `backup/.gitignore` is allowed), and no
    // temporary files were left behind.
    let backups: Vec<String> = p
        .files_under("backup")
        .into_iter()
        .filter(|f| f != ".gitignore")
        .collect();
    assert_eq!(backups.len(), 1, "{backups:?}");
    assert_eq!(p.files_under("src"), ["app.js"]);
    assert_eq!(p.files_under("new"), ["deep/file.txt"]);
}

#[test]
fn without_apply_nothing_is_written() {
    let p = Project::new();
    p.write("src/app.js", "OLD\n");
    let answer = "=== FILE: src/app.js ===\nNEW\n=== END FILE ===\n=== FILE: brand-new.txt ===\nX\n=== END FILE ===\n";
    let b = Bridge::answers(&[answer]);
    let out = deepwork().dir(&p).bridge(&b).args(["--json", "q"]).run();
    out.expect_code(0);
    let v = out.json();
    for path in ["src/app.js", "brand-new.txt"] {
        let f = file_entry(&v, path);
        assert_eq!(f["applied"], false, "{f:#}");
        assert_eq!(f["backup"], Value::Null, "{f:#}");
    }
    assert_eq!(p.read_string("src/app.js"), "OLD\n");
    assert!(!p.exists("brand-new.txt"));
    assert!(!p.exists("backup"));
}

/// The seed's incident: an answer cut off mid-block at `// Бы`.
#[test]
fn truncated_block_is_never_written() {
    let p = Project::new();
    p.write("half.js", "WHOLE FILE\n");
    let answer = "=== FILE: ok.txt ===\n```\nfine\n```\n=== END FILE ===\n=== FILE: half.js ===\n```js\nfunction a() {\n  // Бы";
    let (out, _b) = apply_json(&p, answer);
    assert!(matches!(out.code, Some(0 | 1)), "{}", out.dump());
    let v = out.json();
    let f = file_entry(&v, "half.js");
    assert_eq!(f["truncated"], true, "{f:#}");
    assert_eq!(f["applied"], false, "{f:#}");
    assert_eq!(
        p.read_string("half.js"),
        "WHOLE FILE\n",
        "a half file must not replace a whole one"
    );
    let f = file_entry(&v, "ok.txt");
    assert_eq!(f["truncated"], false, "{f:#}");
    assert_eq!(f["applied"], true, "{f:#}");
    assert_eq!(p.read_string("ok.txt"), "fine\n");
    assert!(
        p.files_under("backup").is_empty(),
        "nothing replaced, nothing backed up"
    );

    // Without --json the warning is shown.
    let b = Bridge::answers(&[answer]);
    let out = deepwork().dir(&p).bridge(&b).arg("q").run();
    let all = format!("{}{}", out.stdout, out.stderr).to_lowercase();
    assert!(
        all.contains("truncated"),
        "no truncation warning\n{}",
        out.dump()
    );
    assert_eq!(p.read_string("half.js"), "WHOLE FILE\n");
}

#[test]
fn apply_refuses_escapes_and_git_and_backup() {
    let p = Project::new();
    p.write(".git/HEAD", "ref: refs/heads/main\n");
    let abs = p.outside.join("abs-target.txt");
    let abs = abs.to_str().unwrap();
    let answer = format!(
        "=== FILE: .git/x ===\nG\n=== END FILE ===\n\
         === FILE: backup/x ===\nB\n=== END FILE ===\n\
         === FILE: ../escape.txt ===\nE\n=== END FILE ===\n\
         === FILE: sub/../../escape2.txt ===\nE\n=== END FILE ===\n\
         === FILE: {abs} ===\nABS\n=== END FILE ===\n\
         === FILE: ok.txt ===\nOK\n=== END FILE ===\n"
    );
    let (out, _b) = apply_json(&p, &answer);
    out.expect_code(1);
    let v = out.json();
    for path in [
        ".git/x",
        "backup/x",
        "../escape.txt",
        "sub/../../escape2.txt",
        abs,
    ] {
        let f = file_entry(&v, path);
        assert_eq!(f["applied"], false, "{f:#}");
        assert!(
            f["error"].as_str().is_some_and(|e| !e.is_empty()),
            "refusal needs an error: {f:#}"
        );
    }
    assert!(!p.exists(".git/x"));
    assert!(!p.exists("backup/x"));
    assert!(!p.outside.join("escape.txt").exists());
    assert!(!p.outside.join("escape2.txt").exists());
    assert!(!p.outside.join("abs-target.txt").exists());
    let ok = file_entry(&v, "ok.txt");
    assert_eq!(ok["applied"], true, "{ok:#}");
    assert_eq!(ok["error"], Value::Null, "{ok:#}");
    assert_eq!(p.read_string("ok.txt"), "OK\n");
}

#[cfg(unix)]
#[test]
fn apply_refuses_writing_through_symlinks_to_outside() {
    use std::os::unix::fs::symlink;
    let p = Project::new();
    write(&p.outside, "outdir/keep.txt", "KEEP\n");
    write(&p.outside, "secret.txt", "SECRET\n");
    symlink(p.outside.join("outdir"), p.path("linkdir")).unwrap();
    symlink(p.outside.join("secret.txt"), p.path("link.txt")).unwrap();
    let answer = "=== FILE: linkdir/pwn.txt ===\nPWN\n=== END FILE ===\n=== FILE: link.txt ===\nPWN\n=== END FILE ===\n";
    let (out, _b) = apply_json(&p, answer);
    out.expect_code(1);
    let v = out.json();
    for path in ["linkdir/pwn.txt", "link.txt"] {
        let f = file_entry(&v, path);
        assert_eq!(f["applied"], false, "{f:#}");
        assert!(f["error"].as_str().is_some(), "{f:#}");
    }
    assert!(
        !p.outside.join("outdir/pwn.txt").exists(),
        "wrote outside through a symlinked folder"
    );
    assert_eq!(
        std::fs::read_to_string(p.outside.join("secret.txt")).unwrap(),
        "SECRET\n"
    );
    assert!(
        p.path("link.txt")
            .symlink_metadata()
            .unwrap()
            .file_type()
            .is_symlink()
    );
}
