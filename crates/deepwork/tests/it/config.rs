//! Config errors and usage errors: clear messages and exit 2, never a silent fallback.

use crate::support::*;

const BROKEN: &str = "{\n  \"chat\": \"think\",\n  \"steps\": 4,,\n  \"timeout_secs\": 5\n}\n";

#[test]
fn broken_config_file_names_path_line_and_column() {
    let p = Project::new();
    let b = Bridge::answers(&["must not be asked"]);
    let dw = deepwork();
    let cfg = write(dw.home(), "конфиг с пробелом #1/config.json", BROKEN);
    let out = dw
        .arg("--config")
        .arg(&cfg)
        .dir(&p)
        .bridge(&b)
        .arg("q")
        .run();
    out.expect_code(2);
    assert_contains(&out.stderr, &cfg.display().to_string());
    assert_contains(&out.stderr, "line 3");
    assert_contains(&out.stderr, "column");
    assert!(
        b.calls().is_empty(),
        "a broken config must stop the run before the bridge"
    );
}

#[test]
fn broken_xdg_config_is_not_ignored() {
    let p = Project::new();
    let b = Bridge::answers(&["must not be asked"]);
    let dw = deepwork();
    let path = dw.config_home().join("deepwork").join("config.json");
    let out = dw.xdg_config_text(BROKEN).dir(&p).bridge(&b).arg("q").run();
    out.expect_code(2);
    assert_contains(&out.stderr, &path.display().to_string());
    assert_contains(&out.stderr, "line 3");
    assert!(b.calls().is_empty());
}

#[test]
fn wrong_field_type_names_the_file() {
    let p = Project::new();
    let b = Bridge::answers(&["must not be asked"]);
    let dw = deepwork();
    let cfg = write(dw.home(), "cfg/wrong-type.json", "{\"steps\": \"four\"}\n");
    let out = dw
        .arg("--config")
        .arg(&cfg)
        .dir(&p)
        .bridge(&b)
        .arg("q")
        .run();
    out.expect_code(2);
    assert_contains(&out.stderr, &cfg.display().to_string());
    assert!(b.calls().is_empty());
}

#[test]
fn unknown_config_key_is_named() {
    let p = Project::new();
    let b = Bridge::answers(&["must not be asked"]);
    let dw = deepwork();
    let cfg = write(
        dw.home(),
        "cfg/unknown.json",
        "{\"chat\": \"think\", \"stepz\": 3}\n",
    );
    let out = dw
        .arg("--config")
        .arg(&cfg)
        .dir(&p)
        .bridge(&b)
        .arg("q")
        .run();
    out.expect_code(2);
    assert_contains(&out.stderr, "stepz");
    assert!(b.calls().is_empty());
}

#[test]
fn missing_config_file_given_by_flag_is_an_error() {
    let p = Project::new();
    let b = Bridge::answers(&["must not be asked"]);
    let out = deepwork()
        .args(["--config", "/nonexistent/deepwork-test/config.json"])
        .dir(&p)
        .bridge(&b)
        .arg("q")
        .run();
    out.expect_code(2);
    assert!(b.calls().is_empty());
}

#[test]
fn usage_errors_exit_2() {
    let p = Project::new();
    let b = Bridge::answers(&["must not be asked"]);
    let cases: [&[&str]; 3] = [&["--no-such-flag", "q"], &["--steps", "abc", "q"], &[]];
    for args in cases {
        let out = deepwork()
            .dir(&p)
            .bridge(&b)
            .args(args.iter().copied())
            .run();
        assert_eq!(out.code, Some(2), "args {args:?}\n{}", out.dump());
    }
    let out = deepwork()
        .args(["--dir", "/nonexistent/deepwork-test-dir"])
        .bridge(&b)
        .arg("q")
        .run();
    assert_eq!(out.code, Some(2), "missing --dir\n{}", out.dump());
    assert!(b.calls().is_empty());
}
