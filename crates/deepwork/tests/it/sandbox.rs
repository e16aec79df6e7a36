//! Reading stays inside the folder: escapes, absolute paths, encoded dots and symlinks are refused.

use crate::support::*;

/// A project with a secret file right beside it (outside the folder).
fn project_with_outside_secret() -> Project {
    let p = Project::new();
    write(&p.outside, "secret.txt", "TOPSECRET-FILE-PAYLOAD\n");
    write(&p.outside, "outdir/secret.txt", "TOPSECRET-DIR-PAYLOAD\n");
    p.write("a/inside.txt", "INSIDE\n");
    p
}

#[test]
fn need_escapes_are_refused() {
    let p = project_with_outside_secret();
    let abs = p.outside.join("secret.txt");
    let abs = abs.to_str().unwrap();
    let attacks = [
        "../secret.txt",
        abs,
        "/etc/passwd",
        "%2e%2e/secret.txt",
        "..%2fsecret.txt",
        "a/../../secret.txt",
    ];
    let answer: String = attacks
        .iter()
        .map(|a| format!("=== NEED: {a} ===\n"))
        .collect();
    let b = Bridge::answers(&[&answer, "final"]);
    let out = deepwork().dir(&p).bridge(&b).args(["--json", "q"]).run();
    out.expect_code(0);
    let v = out.json();
    let reqs = requests(&steps(&v)[0]);
    assert_eq!(reqs.len(), attacks.len(), "{v:#}");
    for r in reqs {
        assert_eq!(r["hits"], 0, "nothing may be sent for {r:#}");
    }
    let m2 = &b.inputs()[1];
    for a in attacks {
        assert_contains(m2, &format!("refused: {a}"));
    }
    assert_not_contains(m2, "TOPSECRET");
    assert_not_contains(m2, "root:x:0:0");
}

#[cfg(unix)]
#[test]
fn symlinks_pointing_outside_are_refused() {
    use std::os::unix::fs::symlink;
    let p = project_with_outside_secret();
    symlink(p.outside.join("secret.txt"), p.path("link.txt")).unwrap();
    symlink(p.outside.join("outdir"), p.path("linkdir")).unwrap();
    let b = Bridge::answers(&[
        "=== NEED: link.txt ===\n=== NEED: linkdir/secret.txt ===\n=== FIND: PAYLOAD ===\n=== LIST: linkdir/** ===",
        "final",
    ]);
    let out = deepwork().dir(&p).bridge(&b).args(["--json", "q"]).run();
    out.expect_code(0);
    let v = out.json();
    let hits: Vec<u64> = requests(&steps(&v)[0])
        .iter()
        .map(|r| r["hits"].as_u64().unwrap())
        .collect();
    assert_eq!(hits, [0, 0, 0, 0], "{v:#}");
    let inputs = b.inputs();
    let m2 = &inputs[1];
    assert_contains(m2, "refused: link.txt");
    assert_contains(m2, "refused: linkdir/secret.txt");
    assert_not_contains(m2, "TOPSECRET");
    assert_not_contains(&inputs[0], "TOPSECRET");
}

#[cfg(unix)]
#[test]
fn symlinks_pointing_inside_are_fine() {
    use std::os::unix::fs::symlink;
    let p = project_with_outside_secret();
    p.write("real/target.txt", "TARGET-CONTENT\n");
    symlink(p.path("real/target.txt"), p.path("alias.txt")).unwrap();
    symlink("real", p.path("aliasdir")).unwrap();
    let b = Bridge::answers(&["=== NEED: alias.txt, aliasdir/target.txt ===", "final"]);
    let out = deepwork().dir(&p).bridge(&b).args(["--json", "q"]).run();
    out.expect_code(0);
    let v = out.json();
    assert_eq!(requests(&steps(&v)[0])[0]["hits"], 2, "{v:#}");
    let m2 = &b.inputs()[1];
    assert_eq!(m2.matches("TARGET-CONTENT").count(), 2, "{}", clip(m2));
    assert_not_contains(m2, "refused: alias");
}
