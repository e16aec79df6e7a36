//! Mini-app scenarios in the system's Chromium against the sample app whose server checks
//! `initData`'s signature.

use super::*;

/// The sample mini-app's server, checking `initData` with `token`.
fn miniapp_server(dir: &Path, token: &str) -> (Kill, String) {
    let token_file = secret(dir, "app-token", token);
    let mut child = Command::new("python3")
        .arg(repo_root().join("tests/fixtures/telegram/sample_miniapp.py"))
        .arg("--token-file")
        .arg(&token_file)
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs the sample mini-app");
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let port = line
        .trim()
        .strip_prefix("listening ")
        .unwrap_or_else(|| panic!("the sample mini-app did not start: {line:?}"))
        .to_string();
    (Kill(child), format!("http://127.0.0.1:{port}/"))
}

/// `conveyor.toml` for mini-apps: the system's Chromium, the repository's `playwright-core`,
/// the test bot's token (`signed_with`) that signs `initData`.
fn miniapp_config(dir: &Path, signed_with: &str) -> PathBuf {
    let token = secret(dir, "test-bot-token", signed_with);
    config(
        dir,
        &format!(
            "test_bot_token_file = \"{}\"\nnode_modules = \"{}\"\nchromium = \"/usr/bin/chromium\"\n",
            token.display(),
            repo_root().join("node_modules").display()
        ),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_miniapp_scenario_passes_with_initdata_its_server_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let (_app, url) = miniapp_server(dir.path(), "5005:app-bot-token");
    let p = project(dir.path(), &[("shop.toml", &shop(&url, "#pay"))]);
    let out = dir.path().join("out");
    let r = telegram_check(
        &miniapp_config(dir.path(), "5005:app-bot-token"),
        &p,
        &["--out", out.to_str().unwrap()],
    );
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "shop: passed\n"),
        "{}",
        r.stderr
    );
    // A scenario that passed leaves no screenshot.
    assert!(!out.join("shop/step-1.png").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_bot_token_is_refused_by_the_app_and_a_missing_selector_has_a_screenshot() {
    let dir = tempfile::tempdir().unwrap();
    let (_app, url) = miniapp_server(dir.path(), "5005:app-bot-token");
    let p = project(
        dir.path(),
        &[
            ("shop.toml", &shop(&url, "#pay")),
            ("nopay.toml", &shop(&url, "#buy-now")),
        ],
    );
    let out = dir.path().join("out");
    let r = telegram_check(
        &miniapp_config(dir.path(), "5005:another-bot-token"),
        &p,
        &[
            "--scenario",
            ".conveyor/telegram/shop.toml",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let shot = out.join("shop/step-1.png");
    assert_eq!(
        r.stdout,
        format!(
            "shop: FAILED\n  step 1: expected /Привет, Тест/, got «Ошибка авторизации: bad initData signature» (screenshot: {})\n",
            shot.display()
        )
    );
    assert!(png(&shot), "{}", shot.display());

    let cfg = miniapp_config(dir.path(), "5005:app-bot-token");
    let r = telegram_check(
        &cfg,
        &p,
        &[
            "--scenario",
            ".conveyor/telegram/nopay.toml",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let shot = out.join("nopay/step-3.png");
    assert_eq!(
        (r.code, r.stdout.clone()),
        (
            1,
            format!(
                "nopay: FAILED\n  step 3: nothing to click at #buy-now within 3 s (screenshot: {})\n",
                shot.display()
            )
        ),
        "{}",
        r.stderr
    );
    assert!(png(&shot), "{}", shot.display());
}

/// Whether a file is a PNG image (its signature).
fn png(p: &Path) -> bool {
    std::fs::read(p).is_ok_and(|b| b.starts_with(b"\x89PNG\r\n\x1a\n"))
}
