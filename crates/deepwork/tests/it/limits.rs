//! Per-step limits (NEED 200,000 characters in all, FIND 100 hits, LIST 300 paths) and their marks.

use crate::support::*;

const MARK: &str = "[truncated: ";

/// `n` characters of ASCII text starting with `start` and ending with `end`.
fn text_of(n: usize, start: &str, end: &str) -> String {
    let mut s = String::with_capacity(n);
    s.push_str(start);
    s.push('\n');
    let mut i = 0;
    while s.len() + end.len() + 1 < n {
        let line = format!("line {i:07} of filler text.\n");
        if s.len() + line.len() + end.len() + 1 > n {
            break;
        }
        s.push_str(&line);
        i += 1;
    }
    while s.len() + end.len() + 1 < n {
        s.push('.');
    }
    s.push_str(end);
    s.push('\n');
    assert_eq!(s.chars().count(), n);
    s
}

#[test]
fn need_cuts_a_big_file_and_marks_it() {
    let p = Project::new();
    p.write("big.txt", text_of(250_000, "BIG-START", "BIG-END"));
    let b = Bridge::answers(&["=== NEED: big.txt ===", "final"]);
    let out = deepwork().dir(&p).bridge(&b).args(["--json", "q"]).run();
    out.expect_code(0);
    let v = out.json();
    let st = steps(&v);
    let r = &requests(&st[0])[0];
    assert_eq!(r["hits"], 1, "{r:#}");
    assert_eq!(r["truncated"], true, "{r:#}");
    let m2 = &b.inputs()[1];
    assert_contains(m2, "BIG-START");
    assert_contains(m2, MARK);
    assert_not_contains(m2, "BIG-END");
    let sent = st[1]["sent_chars"].as_u64().unwrap();
    assert!(
        (150_000..=210_000).contains(&sent),
        "step 2 sent {sent} characters"
    );
}

#[test]
fn need_limit_is_for_all_files_of_the_step() {
    let p = Project::new();
    p.write("one.txt", text_of(120_000, "ONE-START", "ONE-END"))
        .write("two.txt", text_of(120_000, "TWO-START", "TWO-END"));
    let b = Bridge::answers(&["=== NEED: one.txt, two.txt ===", "final"]);
    let out = deepwork().dir(&p).bridge(&b).args(["--json", "q"]).run();
    out.expect_code(0);
    let v = out.json();
    let r = &requests(&steps(&v)[0])[0];
    assert_eq!(r["hits"], 2, "{r:#}");
    assert_eq!(r["truncated"], true, "{r:#}");
    let m2 = &b.inputs()[1];
    assert_contains(m2, "ONE-START");
    assert_contains(m2, "ONE-END");
    assert_contains(m2, "TWO-START");
    assert_not_contains(m2, "TWO-END");
    assert_contains(m2, MARK);
}

#[test]
fn need_limit_counts_characters_not_bytes() {
    let p = Project::new();
    // 150,000 characters, 300,000 bytes: under the limit.
    let body = format!("CYR-START\n{}\nCYR-END\n", "ж".repeat(150_000 - 19));
    assert_eq!(body.chars().count(), 150_000);
    p.write("cyr.txt", &body);
    let b = Bridge::answers(&["=== NEED: cyr.txt ===", "final"]);
    let out = deepwork().dir(&p).bridge(&b).args(["--json", "q"]).run();
    out.expect_code(0);
    let v = out.json();
    assert_eq!(requests(&steps(&v)[0])[0]["truncated"], false, "{v:#}");
    let m2 = &b.inputs()[1];
    assert!(
        m2.contains(&body),
        "the whole Cyrillic file must be sent:\n{}",
        clip(m2)
    );
    assert_not_contains(m2, MARK);
}

#[test]
fn find_stops_at_100_hits_and_counts_all() {
    let p = Project::new();
    let lines = |n: usize| {
        (1..=n)
            .map(|i| format!("HIT-WORD number {i}\n"))
            .collect::<String>()
    };
    p.write("a.txt", lines(60)).write("sub/b.txt", lines(90));
    let b = Bridge::answers(&["=== FIND: HIT-WORD ===", "final"]);
    let out = deepwork().dir(&p).bridge(&b).args(["--json", "q"]).run();
    out.expect_code(0);
    let v = out.json();
    let r = &requests(&steps(&v)[0])[0];
    assert_eq!(r["hits"], 150, "total before the cut: {r:#}");
    assert_eq!(r["truncated"], true);
    let m2 = &b.inputs()[1];
    let shown = m2
        .lines()
        .map(str::trim_start)
        .filter(|l| {
            (l.starts_with("a.txt:") || l.starts_with("sub/b.txt:"))
                && l.contains(": HIT-WORD number ")
        })
        .count();
    assert_eq!(shown, 100, "FIND lines sent:\n{}", clip(m2));
    assert_contains(m2, MARK);
}

#[test]
fn find_under_the_limit_is_not_marked() {
    let p = Project::new();
    p.write(
        "a.txt",
        (1..=100)
            .map(|i| format!("EXACT-HUNDRED {i}\n"))
            .collect::<String>(),
    );
    let b = Bridge::answers(&["=== FIND: EXACT-HUNDRED ===", "final"]);
    let out = deepwork().dir(&p).bridge(&b).args(["--json", "q"]).run();
    out.expect_code(0);
    let v = out.json();
    let r = &requests(&steps(&v)[0])[0];
    assert_eq!(r["hits"], 100);
    assert_eq!(r["truncated"], false);
    let m2 = &b.inputs()[1];
    assert_contains(m2, "a.txt:100: EXACT-HUNDRED 100");
    assert_not_contains(m2, MARK);
}

#[test]
fn list_stops_at_300_paths_and_counts_all_and_tree_is_capped() {
    let p = Project::new();
    for i in 0..1500 {
        p.write(&format!("f/{i:04}.txt"), "");
    }
    let b = Bridge::answers(&["=== LIST: **/*.txt ===", "final"]);
    let out = deepwork().dir(&p).bridge(&b).args(["--json", "q"]).run();
    out.expect_code(0);
    let v = out.json();
    let r = &requests(&steps(&v)[0])[0];
    assert_eq!(r["hits"], 1500, "{r:#}");
    assert_eq!(r["truncated"], true);
    let inputs = b.inputs();
    let m2 = &inputs[1];
    let shown = m2
        .lines()
        .filter(|l| {
            let l = l.trim();
            l.len() == "f/0000.txt".len() && l.starts_with("f/") && l.ends_with(".txt")
        })
        .count();
    assert_eq!(shown, 300, "LIST lines sent:\n{}", clip(m2));
    assert_eq!(
        count_lines_eq(m2, "f/0000.txt"),
        1,
        "sorted: the first path comes first"
    );
    assert_contains(m2, MARK);

    // The tree in the first message is capped with a "... N more" marker.
    let m1 = &inputs[0];
    assert!(
        m1.matches(".txt").count() < 1500,
        "tree not capped: {} chars",
        m1.len()
    );
    assert_contains(m1, "more");
}
