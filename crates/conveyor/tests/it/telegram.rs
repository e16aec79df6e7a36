//! The Telegram checks (`conveyord telegram-check`): bot scenarios against a sample bot (real
//! Python, real Bot API calls) through the loopback fake Telegram (`mock-telegram.mjs`), and
//! mini-app scenarios in the system's Chromium against a sample app whose server checks the
//! `initData` signature.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::support::{
    Daemon, bash, node_server, repo_root, text, wait_for, wait_state, write, write_plan,
};

const BOT_TOKEN: &str = "7001:test-bot-token";
const CHAT: i64 = 4242;

/// A child process killed when the test ends, pass or fail.
struct Kill(Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The fake Telegram with the sample bot polling it.
struct FakeWithBot {
    base: String,
    _fake: Kill,
    _bot: Kill,
    http: reqwest::Client,
}

impl FakeWithBot {
    /// `paid`: the bot's `--paid-text` or `--paid-text-file` and its value.
    async fn start(dir: &Path, paid: [&str; 2]) -> FakeWithBot {
        let (fake, port) = node_server(
            "mock-telegram.mjs",
            &[
                "--token",
                BOT_TOKEN,
                "--chat",
                &CHAT.to_string(),
                "--username",
                "shop_test_bot",
            ],
            "listening ",
        );
        let fake = Kill(fake);
        let base = format!("http://127.0.0.1:{port}");
        let token_file = secret(dir, "bot-token", BOT_TOKEN);
        let bot = Command::new("python3")
            .arg(repo_root().join("tests/fixtures/telegram/sample_bot.py"))
            .arg("--api")
            .arg(&base)
            .arg("--token-file")
            .arg(&token_file)
            .args(paid)
            .stdin(Stdio::null())
            .spawn()
            .expect("python3 runs the sample bot");
        let f = FakeWithBot {
            base,
            _fake: fake,
            _bot: Kill(bot),
            http: reqwest::Client::builder().no_proxy().build().unwrap(),
        };
        // The bot is ready once its first long poll is held by the fake.
        wait_for(30, "the sample bot's first getUpdates", || async {
            let calls = f.get("/test/calls").await;
            calls
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["method"] == "getUpdates")
                .then_some(())
        })
        .await;
        f
    }

    async fn get(&self, path: &str) -> Value {
        self.http
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    async fn messages(&self) -> Vec<Value> {
        self.get(&format!("/test/messages?chat_id={CHAT}"))
            .await
            .as_array()
            .unwrap()
            .clone()
    }
}

fn secret(dir: &Path, name: &str, value: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("{value}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    p
}

/// A project checkout with `.conveyor.toml` and scenario files.
fn project(dir: &Path, scenarios: &[(&str, &str)]) -> PathBuf {
    let p = dir.join("project");
    std::fs::create_dir_all(p.join(".conveyor/telegram")).unwrap();
    std::fs::write(
        p.join(".conveyor.toml"),
        "[telegram]\ntest_bot = \"@shop_test_bot\"\nprod_bot = \"@shop_bot\"\n",
    )
    .unwrap();
    for (name, text) in scenarios {
        std::fs::write(p.join(".conveyor/telegram").join(name), text).unwrap();
    }
    p
}

/// `conveyor.toml` with the given `[telegram]` body.
fn config(dir: &Path, telegram: &str) -> PathBuf {
    let p = dir.join("conveyor.toml");
    std::fs::write(
        &p,
        format!(
            "data_dir = \"{}\"\ntoken = \"t\"\n\n[telegram]\n{telegram}",
            dir.join("data").display()
        ),
    )
    .unwrap();
    p
}

fn fake_config(dir: &Path, base: &str) -> PathBuf {
    config(dir, &format!("fake_api = \"{base}\"\nfake_chat = {CHAT}\n"))
}

struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
}

fn telegram_check(config: &Path, project: &Path, extra: &[&str]) -> Ran {
    let out = Command::new(env!("CARGO_BIN_EXE_conveyord"))
        .arg("telegram-check")
        .arg("--config")
        .arg(config)
        .arg("--dir")
        .arg(project)
        .args(extra)
        .env_remove("http_proxy")
        .env_remove("https_proxy")
        .env_remove("HTTP_PROXY")
        .env_remove("HTTPS_PROXY")
        .output()
        .expect("conveyord runs");
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

const PAY: &str = r#"target = "bot"

[[step]]
send = "/start"

[[step]]
expect = "Меню"

[[step]]
press = "Оплатить"

[[step]]
expect = "Оплачено"
"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_bot_scenario_sends_presses_and_sees_the_edit() {
    let dir = tempfile::tempdir().unwrap();
    let tg = FakeWithBot::start(dir.path(), ["--paid-text", "Оплачено ✅"]).await;
    let p = project(dir.path(), &[("pay.toml", PAY)]);
    let r = telegram_check(&fake_config(dir.path(), &tg.base), &p, &[]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "pay: passed\n"),
        "{}",
        r.stderr
    );
    // What the user and the bot did, as the fake recorded it: the menu was edited in place.
    let msgs = tg.messages().await;
    let texts: Vec<&str> = msgs.iter().map(|m| m["text"].as_str().unwrap()).collect();
    assert_eq!(texts, ["/start", "Оплачено ✅"]);
    assert!(msgs[1]["edit_date"].is_i64(), "{msgs:?}");
    let sent = tg.get("/test/sent").await;
    assert!(
        sent.as_array()
            .unwrap()
            .iter()
            .any(|s| s["method"] == "answerCallbackQuery"),
        "{sent}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_changed_reply_is_a_finding_and_prod_bot_is_refused_with_nothing_sent() {
    let dir = tempfile::tempdir().unwrap();
    let tg = FakeWithBot::start(dir.path(), ["--paid-text", "Ошибка оплаты"]).await;
    let prod = PAY.replace("target = \"bot\"", "target = \"bot\"\nbot = \"@Shop_Bot\"");
    let p = project(dir.path(), &[("pay.toml", PAY), ("prod.toml", &prod)]);
    let cfg = fake_config(dir.path(), &tg.base);

    // Aimed at the production bot: refused before anything is sent.
    let r = telegram_check(&cfg, &p, &["--scenario", ".conveyor/telegram/prod.toml"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.starts_with(
            "prod: FAILED\n  refused: the scenario is aimed at @Shop_Bot, the project's prod_bot"
        ),
        "{}",
        r.stdout
    );
    assert_eq!(tg.messages().await, Vec::<Value>::new());
    assert_eq!(tg.get("/test/updates").await, serde_json::json!([]));

    // The bot answers otherwise than the scenario expects: the finding quotes it.
    let r = telegram_check(&cfg, &p, &["--scenario", ".conveyor/telegram/pay.toml"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert_eq!(
        r.stdout,
        "pay: FAILED\n  step 4: expected /Оплачено/, got «Ошибка оплаты»\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_button_and_a_bad_file_say_what_and_where() {
    let dir = tempfile::tempdir().unwrap();
    let tg = FakeWithBot::start(dir.path(), ["--paid-text", "Оплачено ✅"]).await;
    let nobutton = PAY.replace("press = \"Оплатить\"", "press = \"Купить\"");
    let p = project(dir.path(), &[("buy.toml", &nobutton)]);
    let cfg = fake_config(dir.path(), &tg.base);
    let r = telegram_check(&cfg, &p, &[]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (
            1,
            "buy: FAILED\n  step 3: no button «Купить» (buttons there: «Оплатить», «Помощь»)\n"
        ),
        "{}",
        r.stderr
    );

    std::fs::write(
        p.join(".conveyor/telegram/typo.toml"),
        "target = \"bot\"\n[[step]]\nsned = \"/start\"\n",
    )
    .unwrap();
    let r = telegram_check(&cfg, &p, &[]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stderr
            .contains(".conveyor/telegram/typo.toml:3: sned: unknown field `sned`"),
        "{}",
        r.stderr
    );
}

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

fn shop(url: &str, click: &str) -> String {
    format!(
        r##"target = "miniapp"
url = "{url}"

[[step]]
expect = "Привет, Тест"
selector = "#greeting"

[[step]]
fill = "#name"
text = "Антон"

[[step]]
click = "{click}"
timeout_secs = 3

[[step]]
expect = "Оплачено: Антон"
selector = "#status"
"##
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

/// A checking role's turn writing its verdict where its prompt says.
fn verdict(v: &Value) -> Value {
    serde_json::json!({"tool": "Write", "input": {
        "file_path": "{{prompt:\\$CONVEYOR_VERDICT \\(([^)]+)\\)}}",
        "content": v.to_string()}})
}

/// The tester's run of the command its prompt lists, with the exit code after it.
fn run_telegram_check() -> Value {
    bash("{{prompt:- `([^`]*telegram-check)`}}; echo \"exit=$?\"")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_whose_bot_answers_wrong_goes_back_with_the_finding_and_the_fix_passes() {
    use conveyor_api::{LineState, RoleCall, StepKind};
    // Outside /tmp: the sandbox gives every run a fresh /tmp, so a secret there proves nothing.
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let session_dir = outside.path().join("tg-session");
    std::fs::create_dir_all(&session_dir).unwrap();
    std::fs::write(
        session_dir.join("conveyor_test.session"),
        "SESSION-SECRET-91",
    )
    .unwrap();
    std::fs::write(outside.path().join("visible.txt"), "VISIBLE-OK").unwrap();
    let id_file = secret(outside.path(), "api-id", "12345");
    // Readable by anyone on the machine: only the sandbox's hiding keeps it from the run.
    let hash_file = outside.path().join("api-hash");
    std::fs::write(&hash_file, "HASH-SECRET-17\n").unwrap();

    let tmp = tempfile::tempdir().unwrap();
    let (fake, port) = node_server(
        "mock-telegram.mjs",
        &[
            "--token",
            BOT_TOKEN,
            "--chat",
            &CHAT.to_string(),
            "--username",
            "shop_test_bot",
        ],
        "listening ",
    );
    let _fake = Kill(fake);
    let config = format!(
        "[telegram]\nfake_api = \"http://127.0.0.1:{port}\"\nfake_chat = {CHAT}\nsession_dir = {:?}\napi_id_file = {:?}\napi_hash_file = {:?}\n",
        session_dir.display().to_string(),
        id_file.display().to_string(),
        hash_file.display().to_string(),
    );
    let d = Daemon::builder()
        .files(&[
            ("a.txt", "a\n"),
            (
                ".conveyor.toml",
                "[telegram]\ntest_bot = \"@shop_test_bot\"\nprod_bot = \"@shop_bot\"\n",
            ),
            (".conveyor/telegram/pay.toml", PAY),
        ])
        .config(&config)
        .mock()
        .start()
        .await;
    let (c, mock) = (d.client(), d.mock());
    let l = d.line("pay", "the pay button answers Оплачено").await;
    // The bot under test answers a press with what the line's worktree says.
    let wt = d.worktree(&l.id);
    let token_file = secret(tmp.path(), "bot-token", BOT_TOKEN);
    let _bot = Kill(
        Command::new("python3")
            .arg(repo_root().join("tests/fixtures/telegram/sample_bot.py"))
            .arg("--api")
            .arg(format!("http://127.0.0.1:{port}"))
            .arg("--token-file")
            .arg(&token_file)
            .arg("--paid-text-file")
            .arg(wt.join("paid.txt"))
            .stdin(Stdio::null())
            .spawn()
            .expect("python3 runs the sample bot"),
    );
    mock.script(
        &l.session_id,
        serde_json::json!({
            "1": [write_plan(&serde_json::json!({"level": "light", "steps": [
                {"title": "pay", "task": "answer the pay button", "checks": [{"cmd": "test -f paid.txt"}]}
            ]})), text("planned")],
            "2": [write("paid.txt", "Ошибка оплаты\n"), text("written")],
            // The fixer, after the tester's rework.
            "4": [write("paid.txt", "Оплачено ✅\n"), text("fixed the answer")],
        }),
    )
    .await;
    let steal = format!(
        "cat {:?} 2>&1; cat {:?} 2>&1; ls -a {:?} 2>&1; cat {:?}; true",
        session_dir.join("conveyor_test.session"),
        hash_file,
        session_dir,
        outside.path().join("visible.txt")
    );
    mock.script_line(
        &l.id,
        "tester",
        serde_json::json!({
            "3": [bash(&steal), run_telegram_check(),
                  verdict(&serde_json::json!({"verdict": "rework", "findings": [
                      {"path": ".conveyor/telegram/pay.toml", "text": "{{after:(step [0-9]+: expected [^»]+»)}}"}]})),
                  text("sent back")],
            "5": [run_telegram_check(), verdict(&serde_json::json!({"verdict": "pass", "findings": []})), text("good")],
        }),
    )
    .await;

    let done = wait_state(c, &l.id, LineState::AwaitingAcceptance, 300).await;
    let steps = &done.line.steps;
    assert_eq!(
        steps.iter().map(|s| s.kind).collect::<Vec<_>>(),
        [
            StepKind::Planner,
            StepKind::Executor,
            StepKind::Tester,
            StepKind::Fixer,
            StepKind::Tester
        ]
    );
    let first = steps[2].verdict.as_ref().unwrap();
    assert_eq!(first.verdict, RoleCall::Rework);
    assert_eq!(
        first.findings[0].text,
        "step 4: expected /Оплачено/, got «Ошибка оплаты»"
    );
    assert_eq!(steps[4].verdict.as_ref().unwrap().verdict, RoleCall::Pass);

    // What the tester saw, as the mock got it back: the command in its prompt, the finding,
    // then the pass; and nothing of the test account's session or credentials.
    let log = mock.log().await;
    let tester = |step: i64| -> String {
        log.iter()
            .filter(|e| {
                e["step_kind"] == "tester" && e["line"] == l.id.as_str() && e["step"] == step
            })
            .filter_map(|e| e["conversation"].as_str())
            .max_by_key(|c| c.len())
            .unwrap_or_default()
            .to_string()
    };
    let (round1, round2) = (tester(3), tester(5));
    assert!(round1.contains("conveyord telegram-check`"), "{round1}");
    assert!(
        round1.contains("pay: FAILED") && round1.contains("exit=1"),
        "{round1}"
    );
    assert!(
        round2.contains("pay: passed") && round2.contains("exit=0"),
        "{round2}"
    );
    assert!(
        round1.contains("VISIBLE-OK"),
        "the outside folder is visible: {round1}"
    );
    for secret in ["SESSION-SECRET-91", "HASH-SECRET-17"] {
        assert!(!round1.contains(secret), "{secret} leaked: {round1}");
    }
    // The fixer worked from the finding.
    let fixer = mock
        .requests(&l.session_id)
        .await
        .into_iter()
        .find(|e| e["step"] == 4)
        .unwrap();
    assert!(
        fixer["conversation"]
            .as_str()
            .unwrap()
            .contains("step 4: expected /Оплачено/, got «Ошибка оплаты»"),
        "{fixer:#?}"
    );
}

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
    let python = dir.path().join("python");
    std::fs::write(
        &python,
        format!(
            "#!/bin/sh\nPYTHONPATH={:?} exec python3 \"$@\"\n",
            repo_root()
                .join("tests/fixtures/telegram/fake_pyrogram")
                .display()
                .to_string()
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let config = format!(
        "[telegram]\nsession_dir = {:?}\napi_id_file = {:?}\napi_hash_file = {:?}\npython = {:?}\n",
        session_dir.display().to_string(),
        id_file.display().to_string(),
        hash_file.display().to_string(),
        python.display().to_string()
    );
    let d = Daemon::builder()
        .files(&[
            ("a.txt", "a\n"),
            (
                ".conveyor.toml",
                "[telegram]\ntest_bot = \"@shop_test_bot\"\nprod_bot = \"@shop_bot\"\n",
            ),
            (".conveyor/telegram/pay.toml", PAY),
        ])
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
