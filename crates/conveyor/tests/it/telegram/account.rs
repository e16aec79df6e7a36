//! The test account: the real kurigram transport, the login, and the preflight's view of
//! the session.

use super::*;

/// The Python with kurigram that scripts/test.sh installs (`.venv-telegram`).
fn kurigram_python() -> PathBuf {
    let p = repo_root().join(".venv-telegram/bin/python");
    assert!(
        p.exists(),
        "{} is missing: scripts/test.sh installs it (crates/conveyor/telegram/requirements.txt)",
        p.display()
    );
    p
}

#[tokio::test(flavor = "multi_thread")]
async fn the_real_transport_needs_a_session_never_meets_prod_bot_and_login_needs_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let session_dir = dir.path().join("session");
    std::fs::create_dir_all(&session_dir).unwrap();
    let id_file = secret(dir.path(), "api-id", "12345");
    let hash_file = secret(dir.path(), "api-hash", "0123456789abcdef");
    let python = kurigram_python();
    let cfg = config(
        dir.path(),
        &format!(
            "session_dir = {:?}\napi_id_file = {:?}\napi_hash_file = {:?}\npython = {:?}\n",
            session_dir.display().to_string(),
            id_file.display().to_string(),
            hash_file.display().to_string(),
            python.display().to_string()
        ),
    );
    let prod = PAY.replace("target = \"bot\"", "target = \"bot\"\nbot = \"@shop_bot\"");
    let p = project(dir.path(), &[("pay.toml", PAY), ("prod.toml", &prod)]);
    let out = dir.path().join("out");
    let out_arg = ["--out", out.to_str().unwrap()];

    // Aimed at production: refused before the client is even made (its script never written).
    let r = telegram_check(
        &cfg,
        &p,
        &[
            &["--scenario", ".conveyor/telegram/prod.toml"][..],
            &out_arg,
        ]
        .concat(),
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("refused: the scenario is aimed at @shop_bot"),
        "{}",
        r.stdout
    );
    assert!(!out.join(".runner/user_client.py").exists());

    // No session: the check ends at once and names the one-time login.
    let r = telegram_check(
        &cfg,
        &p,
        &[&["--scenario", ".conveyor/telegram/pay.toml"][..], &out_arg].concat(),
    );
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "the test account has no session at {}: run `conveyord telegram-login` once",
            session_dir.join("conveyor_test.session").display()
        )),
        "{}",
        r.stderr
    );

    // The client itself, with kurigram imported, says the same on its first line and asks
    // nothing.
    let script = repo_root().join("crates/conveyor/telegram/user_client.py");
    let served = Command::new(&python)
        .arg(&script)
        .args(["serve", "--name", "conveyor_test", "--session-dir"])
        .arg(&session_dir)
        .arg("--api-id-file")
        .arg(&id_file)
        .arg("--api-hash-file")
        .arg(&hash_file)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let first: Value = serde_json::from_str(
        String::from_utf8_lossy(&served.stdout)
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(first["kind"], "no_session", "{first}");
    let version = Command::new(&python)
        .arg(&script)
        .arg("version")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&version.stdout).trim(), "2.2.26");

    // The login asks at a terminal only: without one it says why, before any connection.
    let login = Command::new(env!("CARGO_BIN_EXE_conveyord"))
        .args(["telegram-login", "--config"])
        .arg(&cfg)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!login.status.success());
    let err = String::from_utf8_lossy(&login.stderr);
    assert!(
        err.contains(
            "telegram-login needs a terminal: it asks for the test account's phone number"
        ),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(&session_dir).unwrap().count(), 0);

    // At a terminal (`script` gives it one) it asks for the test account's phone number
    // before connecting anywhere; an empty answer ends it with nothing sent.
    let login = Command::new("script")
        .arg("-qec")
        .arg(format!(
            "{} telegram-login --config {}",
            env!("CARGO_BIN_EXE_conveyord"),
            cfg.display()
        ))
        .arg("/dev/null")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut login.stdin.as_ref().unwrap(), b"\n").unwrap();
    let login = login.wait_with_output().unwrap();
    let seen = String::from_utf8_lossy(&login.stdout);
    assert!(!login.status.success(), "{seen}");
    assert!(
        seen.contains("Signing in the TEST account (not your own)")
            && seen.contains("Phone number of the test account (+…): ")
            && seen.contains("no phone number given: nothing was sent to Telegram"),
        "{seen}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_preflight_names_what_a_projects_telegram_scenarios_lack() {
    use conveyor_api::{PreflightCode, PreflightLevel};
    let dir = tempfile::tempdir().unwrap();
    let session_dir = dir.path().join("session");
    std::fs::create_dir_all(&session_dir).unwrap();
    let token = secret(dir.path(), "test-bot-token", "5005:x");
    let id_file = secret(dir.path(), "api-id", "12345");
    let config = format!(
        "[telegram]\nsession_dir = {:?}\napi_id_file = {:?}\napi_hash_file = {:?}\ntest_bot_token_file = {:?}\npython = \"/nonexistent/python3\"\nnode_modules = {:?}\nchromium = \"/usr/bin/chromium\"\n",
        session_dir.display().to_string(),
        id_file.display().to_string(),
        dir.path().join("missing-hash").display().to_string(),
        token.display().to_string(),
        repo_root().join("node_modules").display().to_string()
    );
    let shop = shop("http://127.0.0.1:9/", "#pay");
    let d = Daemon::builder()
        .files(&[
            ("a.txt", "a\n"),
            (
                ".conveyor.toml",
                "[telegram]\ntest_bot = \"@shop_test_bot\"\n",
            ),
            (".conveyor/telegram/pay.toml", PAY),
            (".conveyor/telegram/shop.toml", &shop),
        ])
        .config(&config)
        .start()
        .await;
    d.project().await;
    let pre = d.client().preflight().await.unwrap();
    let items: Vec<_> = pre
        .items
        .iter()
        .filter(|i| i.code == PreflightCode::Telegram)
        .collect();
    let find = |words: &str| {
        items
            .iter()
            .find(|i| i.message.contains(words))
            .unwrap_or_else(|| panic!("no item saying {words:?}: {items:#?}"))
    };
    let session = find("the test account has no session at");
    assert_eq!(session.level, PreflightLevel::Blocking);
    assert!(
        session
            .fix
            .as_deref()
            .unwrap()
            .contains("conveyord telegram-login"),
        "{session:?}"
    );
    assert_eq!(
        find("no [telegram] prod_bot").level,
        PreflightLevel::Warning
    );
    assert_eq!(
        find("missing-hash does not exist").level,
        PreflightLevel::Blocking
    );
    let kurigram = find("/nonexistent/python3 cannot import kurigram");
    assert!(
        kurigram
            .fix
            .as_deref()
            .unwrap()
            .contains("conveyord telegram-setup")
    );
    assert_eq!(find("/usr/bin/chromium runs").level, PreflightLevel::Ok);
    assert_eq!(
        find("playwright-core is installed").level,
        PreflightLevel::Ok
    );
    assert!(pre.blocking);

    // A session in place, and no client to ask Telegram with: not known, a warning (whether
    // it works is a_signed_out_session_blocks_the_preflight…'s).
    std::fs::write(session_dir.join("conveyor_test.session"), "x").unwrap();
    let pre = d.client().preflight().await.unwrap();
    assert!(
        pre.items.iter().any(|i| i.code == PreflightCode::Telegram
            && i.level == PreflightLevel::Warning
            && i.message
                .contains("whether it still works could not be asked")),
        "{:#?}",
        pre.items
    );
}

/// A session file that exists but Telegram has signed out blocks the preflight in the evening,
/// with the login command, instead of failing the tester's first bot step at night. The client
/// is the real `user_client.py`; only `pyrogram` is a stand-in (tests/fixtures/telegram/
/// fake_pyrogram) that answers as Telegram does for a session ended elsewhere.
#[tokio::test(flavor = "multi_thread")]
async fn a_signed_out_session_blocks_the_preflight_and_a_renewed_one_clears_it() {
    use conveyor_api::{PreflightCode, PreflightLevel};
    let dir = tempfile::tempdir().unwrap();
    let session_dir = dir.path().join("session");
    std::fs::create_dir_all(&session_dir).unwrap();
    let session = session_dir.join("conveyor_test.session");
    std::fs::write(&session, "signed-out").unwrap();
    let id_file = secret(dir.path(), "api-id", "12345");
    let hash_file = secret(dir.path(), "api-hash", "0123456789abcdef");
    let python = fake_pyrogram_python(dir.path());
    let config = format!(
        "[telegram]\nsession_dir = {:?}\napi_id_file = {:?}\napi_hash_file = {:?}\npython = {:?}\n",
        session_dir.display().to_string(),
        id_file.display().to_string(),
        hash_file.display().to_string(),
        python.display().to_string()
    );
    let d = Daemon::builder()
        .files(&PAY_PROJECT)
        .config(&config)
        .start()
        .await;
    d.project().await;
    let session_items = |items: &[conveyor_api::PreflightItem]| {
        items
            .iter()
            .filter(|i| i.code == PreflightCode::Telegram && i.message.contains("session"))
            .cloned()
            .collect::<Vec<_>>()
    };

    let pre = d.client().preflight().await.unwrap();
    let items = session_items(&pre.items);
    assert_eq!(items.len(), 1, "{items:#?}");
    assert_eq!(items[0].level, PreflightLevel::Blocking, "{items:#?}");
    assert!(
        items[0].message.contains(&format!(
            "the test account's session at {} is signed out",
            session.display()
        )) && items[0].message.contains("AUTH_KEY_UNREGISTERED"),
        "{items:#?}"
    );
    assert!(
        items[0]
            .fix
            .as_deref()
            .unwrap()
            .contains("conveyord telegram-login"),
        "{items:#?}"
    );
    assert!(pre.blocking);

    // Renewed (what telegram-login leaves: another file): asked again at once, and clear.
    std::fs::write(&session, "a renewed session").unwrap();
    let pre = d.client().preflight().await.unwrap();
    let items = session_items(&pre.items);
    assert_eq!(items.len(), 1, "{items:#?}");
    assert_eq!(items[0].level, PreflightLevel::Ok, "{items:#?}");
    assert!(
        items[0].message.contains("signed in as conveyor_tester"),
        "{items:#?}"
    );
}
