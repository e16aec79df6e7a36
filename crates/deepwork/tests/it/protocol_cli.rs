//! The request protocol end to end: what counts as a request, and what NEED / LIST / FIND send back.

use serde_json::json;

use crate::support::*;

#[test]
fn request_lines_are_whole_trimmed_lines_fenced_or_not() {
    let p = Project::new();
    p.write("a.txt", "A-CONTENT\n")
        .write("prose.txt", "PROSE-CONTENT\n")
        .write("docs/guide.md", "# guide\n");
    let answer = "Some prose mentioning === NEED: prose.txt === inline, which is not a request.\n\
                  \t   === NEED: a.txt ===   \n\
                  ```text\n\
                  === LIST: **/*.md ===\n\
                  ```\n";
    let b = Bridge::answers(&[answer, "final"]);
    let out = deepwork().dir(&p).bridge(&b).args(["--json", "q"]).run();
    out.expect_code(0);
    let v = out.json();
    let reqs = requests(&steps(&v)[0]);
    let kinds: Vec<(&str, &str)> = reqs
        .iter()
        .map(|r| (r["kind"].as_str().unwrap(), r["arg"].as_str().unwrap()))
        .collect();
    assert_eq!(kinds, [("NEED", "a.txt"), ("LIST", "**/*.md")], "{v:#}");
    let m2 = &b.inputs()[1];
    assert_contains(m2, "A-CONTENT");
    assert_eq!(
        count_lines_eq(m2, "docs/guide.md"),
        1,
        "LIST result:\n{}",
        clip(m2)
    );
    assert_not_contains(m2, "PROSE-CONTENT");
    assert_not_contains(m2, "file not found: prose.txt");
}

#[test]
fn need_several_files_in_one_line() {
    let p = Project::new();
    let b_content = "B-CONTENT\r\n\tTAB  \r\n  trailing no newline";
    p.write("a.txt", "A-CONTENT\n")
        .write("sub/b.txt", b_content);
    let b = Bridge::answers(&["=== NEED: a.txt, sub/b.txt ===", "final"]);
    let out = deepwork().dir(&p).bridge(&b).args(["--json", "q"]).run();
    out.expect_code(0);
    let v = out.json();
    let r = &requests(&steps(&v)[0]);
    assert_eq!(r.len(), 1, "one NEED line is one request: {v:#}");
    assert_eq!(r[0]["kind"], "NEED");
    assert_eq!(r[0]["hits"], 2);
    assert_eq!(r[0]["truncated"], false);
    let m2 = &b.inputs()[1];
    assert_contains(m2, "A-CONTENT");
    assert_contains(m2, b_content); // verbatim: CRLF, tabs, trailing spaces
}

#[test]
fn list_globs_star_within_folder_double_star_across() {
    let p = Project::new();
    p.write("b.mjs", "")
        .write("z.mjs", "")
        .write("a/c.mjs", "")
        .write("a/deep/e.mjs", "")
        .write("a/d.js", "");
    let b = Bridge::answers(&[
        "=== LIST: **/*.mjs ===",
        "=== LIST: *.mjs ===",
        "=== LIST: a/*.mjs ===",
        "final",
    ]);
    let out = deepwork().dir(&p).bridge(&b).args(["--json", "q"]).run();
    out.expect_code(0);
    let v = out.json();
    let st = steps(&v);
    assert_eq!(st.len(), 4, "{v:#}");
    let hits: Vec<u64> = st[..3]
        .iter()
        .map(|s| requests(s)[0]["hits"].as_u64().unwrap())
        .collect();
    assert_eq!(hits, [4, 2, 1], "{v:#}");

    let inputs = b.inputs();
    let all = &inputs[1];
    let order: Vec<usize> = ["a/c.mjs", "a/deep/e.mjs", "b.mjs", "z.mjs"]
        .iter()
        .map(|f| {
            all.lines()
                .position(|l| l.trim() == *f)
                .unwrap_or_else(|| panic!("{f} not listed:\n{}", clip(all)))
        })
        .collect();
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "LIST not sorted: {order:?}\n{}",
        clip(all)
    );
    assert_eq!(count_lines_eq(all, "a/d.js"), 0);

    let top = &inputs[2];
    assert_eq!(count_lines_eq(top, "b.mjs"), 1);
    assert_eq!(count_lines_eq(top, "z.mjs"), 1);
    assert_eq!(
        count_lines_eq(top, "a/c.mjs"),
        0,
        "`*` must not cross folders:\n{}",
        clip(top)
    );

    let sub = &inputs[3];
    assert_eq!(count_lines_eq(sub, "a/c.mjs"), 1);
    assert_eq!(
        count_lines_eq(sub, "a/deep/e.mjs"),
        0,
        "`*` must not cross folders:\n{}",
        clip(sub)
    );
}

#[test]
fn find_is_literal_case_sensitive_with_line_numbers() {
    let p = Project::new();
    p.write("src/deep/x.js", "x = a.b;\nx = aXb;\nX = A.B;\n")
        .write("other.txt", "nothing\nhere a.b\n");
    let b = Bridge::answers(&[
        "=== FIND: a.b ===\n=== FIND: A.B ===\n=== FIND: zzz-absent ===",
        "final",
    ]);
    let out = deepwork().dir(&p).bridge(&b).args(["--json", "q"]).run();
    out.expect_code(0);
    let v = out.json();
    let hits: Vec<u64> = requests(&steps(&v)[0])
        .iter()
        .map(|r| r["hits"].as_u64().unwrap())
        .collect();
    assert_eq!(
        hits,
        [2, 1, 0],
        "literal (not regex), case-sensitive: {v:#}"
    );
    let m2 = &b.inputs()[1];
    assert_contains(m2, "src/deep/x.js:1: x = a.b;");
    assert_contains(m2, "other.txt:2: here a.b");
    assert_contains(m2, "src/deep/x.js:3: X = A.B;");
    assert_not_contains(m2, "src/deep/x.js:2:");
}

#[test]
fn binary_file_is_reported_not_sent() {
    let p = Project::new();
    p.write(
        "img/bin.dat",
        b"\x89PNG\0\x01\x02BINARY-SECRET\0".as_slice(),
    );
    let b = Bridge::answers(&["=== NEED: img/bin.dat ===", "final"]);
    let out = deepwork().dir(&p).bridge(&b).args(["--json", "q"]).run();
    out.expect_code(0);
    let v = out.json();
    assert_eq!(requests(&steps(&v)[0])[0]["hits"], 0);
    let m2 = &b.inputs()[1];
    assert_contains(m2, "binary file, not sent: img/bin.dat");
    assert_not_contains(m2, "BINARY-SECRET");
}

#[test]
fn gitignored_files_are_hidden_even_without_git() {
    let p = Project::new();
    p.write(".gitignore", "secret/\n*.log\n")
        .write("secret/hidden-key.mjs", "IGN-NEEDLE\n")
        .write("debug.log", "IGN-NEEDLE\n")
        .write("src/visible-ok.mjs", "IGN-NEEDLE\n");
    assert!(!p.exists(".git"));
    let b = Bridge::answers(&["=== LIST: **/*.mjs ===\n=== FIND: IGN-NEEDLE ===", "final"]);
    let out = deepwork().dir(&p).bridge(&b).args(["--json", "q"]).run();
    out.expect_code(0);
    let v = out.json();
    let r = requests(&steps(&v)[0]);
    assert_eq!(r[0]["hits"], 1, "LIST: {v:#}");
    assert_eq!(r[1]["hits"], 1, "FIND: {v:#}");
    let inputs = b.inputs();
    assert_contains(&inputs[0], "visible-ok.mjs");
    for m in &inputs[..2] {
        assert_not_contains(m, "hidden-key.mjs");
        assert_not_contains(m, "debug.log");
    }
    assert_contains(&inputs[1], "src/visible-ok.mjs:1: IGN-NEEDLE");
}

#[test]
fn git_and_backup_folders_are_never_listed_or_searched() {
    let p = Project::new();
    p.write(".git/HEAD", "ref: refs/heads/main\n")
        .write(".git/hooks/hookfile.mjs", "SPECIAL-NEEDLE\n")
        .write("backup/20260101-000000/oldcopy.mjs", "SPECIAL-NEEDLE\n")
        .write("src/live.mjs", "SPECIAL-NEEDLE\n");
    let b = Bridge::answers(&[
        "=== LIST: **/*.mjs ===\n=== FIND: SPECIAL-NEEDLE ===\n=== LIST: backup/** ===",
        "final",
    ]);
    let out = deepwork().dir(&p).bridge(&b).args(["--json", "q"]).run();
    out.expect_code(0);
    let v = out.json();
    let hits: Vec<u64> = requests(&steps(&v)[0])
        .iter()
        .map(|r| r["hits"].as_u64().unwrap())
        .collect();
    assert_eq!(hits, [1, 1, 0], "{v:#}");
    let inputs = b.inputs();
    assert_contains(&inputs[0], "live.mjs");
    for m in &inputs[..2] {
        assert_not_contains(m, "hookfile.mjs");
        assert_not_contains(m, "oldcopy.mjs");
    }
}

#[test]
fn request_lines_inside_file_block_are_content() {
    let p = Project::new();
    p.write("a.txt", "A\n");
    let answer = "Here is the doc:\n=== FILE: docs/format.md ===\n```md\nUse:\n=== NEED: a.txt ===\n=== FIND: x ===\n```\n=== END FILE ===\nThat's all.\n";
    let b = Bridge::answers(&[answer, "unexpected second call"]);
    let out = deepwork().dir(&p).bridge(&b).args(["--json", "q"]).run();
    out.expect_code(0);
    let v = out.json();
    assert_eq!(v["stop_reason"], "no_requests", "{v:#}");
    assert_eq!(b.calls().len(), 1);
    assert!(requests(&steps(&v)[0]).is_empty());
    let f = file_entry(&v, "docs/format.md");
    assert_eq!(f["applied"], false, "no --apply: nothing written");
    assert_eq!(f["truncated"], false);
    assert!(!p.exists("docs/format.md"));
}

#[test]
fn requests_after_end_file_are_executed() {
    let p = Project::new();
    p.write("a.txt", "A-CONTENT\n");
    let answer = "=== FILE: n.txt ===\nN\n=== END FILE ===\n=== NEED: a.txt ===\n";
    let b = Bridge::answers(&[answer, "final"]);
    let out = deepwork().dir(&p).bridge(&b).args(["--json", "q"]).run();
    out.expect_code(0);
    assert_eq!(b.calls().len(), 2);
    assert_contains(&b.inputs()[1], "A-CONTENT");
}

#[test]
fn json_output_shape_and_counts() {
    let p = Project::new();
    p.write("a.txt", "A-CONTENT\n");
    let last = "Готово: ответ.";
    let b = Bridge::answers(&["=== NEED: a.txt ===", last]);
    let out = deepwork()
        .dir(&p)
        .bridge(&b)
        .args(["--json", "вопрос"])
        .run();
    out.expect_code(0);
    let v = out.json();
    for key in ["stop_reason", "steps", "answer", "files"] {
        assert!(v.get(key).is_some(), "missing {key}: {v:#}");
    }
    assert_eq!(v["files"], json!([]));
    let inputs = b.inputs();
    let st = steps(&v);
    assert_eq!(st.len(), 2);
    for (i, s) in st.iter().enumerate() {
        for key in ["n", "new", "sent_chars", "answer_chars", "requests"] {
            assert!(s.get(key).is_some(), "step {} missing {key}: {s:#}", i + 1);
        }
        assert_eq!(
            s["sent_chars"].as_u64().unwrap() as usize,
            inputs[i].chars().count(),
            "step {}",
            i + 1
        );
    }
    assert_eq!(st[0]["answer_chars"], "=== NEED: a.txt ===".chars().count());
    assert_eq!(st[1]["answer_chars"], last.chars().count());
    let r = &requests(&st[0])[0];
    for key in ["kind", "arg", "hits", "truncated"] {
        assert!(r.get(key).is_some(), "request missing {key}: {r:#}");
    }
    assert_eq!(v["answer"], last);
}
