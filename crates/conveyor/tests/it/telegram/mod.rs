//! The Telegram checks (`conveyord telegram-check`): bot scenarios against a sample bot (real
//! Python, real Bot API calls) through the loopback fake Telegram (`mock-telegram.mjs`), and
//! mini-app scenarios in the system's Chromium against a sample app whose server checks the
//! `initData` signature.

mod account;
mod bot;
mod line;
mod miniapp;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::support::{
    Daemon, Double, bash, repo_root, text, wait_for, wait_state, write, write_plan,
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
    fake: Double,
    _bot: Kill,
}

impl FakeWithBot {
    /// `paid`: the bot's `--paid-text` or `--paid-text-file` and its value.
    async fn start(dir: &Path, paid: [&str; 2]) -> FakeWithBot {
        let fake = fake_telegram();
        let bot = sample_bot(&fake.url, &secret(dir, "bot-token", BOT_TOKEN), paid);
        let f = FakeWithBot { fake, _bot: bot };
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

    fn base(&self) -> &str {
        &self.fake.url
    }

    async fn get(&self, path: &str) -> Value {
        self.fake.get(path).await
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

/// The loopback fake Telegram with the test bot's token and chat.
fn fake_telegram() -> Double {
    Double::start(
        "mock-telegram.mjs",
        &[
            "--token".into(),
            BOT_TOKEN.into(),
            "--chat".into(),
            CHAT.to_string(),
            "--username".into(),
            "shop_test_bot".into(),
        ],
    )
}

/// The sample bot on the fake's Bot API; `paid`: its `--paid-text` or `--paid-text-file` and
/// the value.
fn sample_bot(base: &str, token_file: &Path, paid: [&str; 2]) -> Kill {
    Kill(
        Command::new("python3")
            .arg(repo_root().join("tests/fixtures/telegram/sample_bot.py"))
            .arg("--api")
            .arg(base)
            .arg("--token-file")
            .arg(token_file)
            .args(paid)
            .stdin(Stdio::null())
            .spawn()
            .expect("python3 runs the sample bot"),
    )
}

/// A `python` for the real `user_client.py` with the stand-in `pyrogram` first on its path
/// (tests/fixtures/telegram/fake_pyrogram): a session works or is signed out as its file says.
fn fake_pyrogram_python(dir: &Path) -> PathBuf {
    let python = dir.join("python");
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
    python
}

/// A project whose main names its test and production bots and has the pay scenario.
const PAY_PROJECT: [(&str, &str); 3] = [
    ("a.txt", "a\n"),
    (
        ".conveyor.toml",
        "[telegram]\ntest_bot = \"@shop_test_bot\"\nprod_bot = \"@shop_bot\"\n",
    ),
    (".conveyor/telegram/pay.toml", PAY),
];
