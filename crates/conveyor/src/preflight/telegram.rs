//! A project's Telegram items, when its main has scenarios (`.conveyor/telegram/*.toml`):
//! what its tester's `telegram-check` will need, found before the night rather than by a
//! tester at 3 a.m. Bot scenarios need the test account's session (a missing one names the
//! one-time `conveyord telegram-login`) and a Python with kurigram; mini-app scenarios the test
//! bot's token, Node with playwright-core, and the system's Chromium.
//!
//! Whether a session that exists still works is only known by asking Telegram: the preflight
//! asks through the check's own client, at most every few hours or when the session file
//! changes (it runs every minute). A session signed out since is also found by the check
//! itself, which ends at once with the same login command, never waits for a code.

use std::path::Path;
use std::time::Duration;

use conveyor_api::{PreflightCode as Code, PreflightItem, PreflightLevel as Level};
use conveyor_core::telegram::{self as core, Target};

use super::context::Context;
use super::item::{item, ok};
use crate::config::{Checklist, TelegramConfig};
use crate::exec::{self, Spec};
use crate::git;
use crate::telegram::{SCENARIO_DIR, SessionVerdict as Verdict, session_file};

/// How long a tool gets to show it is there.
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

const DOCS: &str = "docs/conveyor.md, \"Telegram checks\"";

/// What the project's scenarios on main aim at.
#[derive(Debug, Default)]
struct Needs {
    bot: bool,
    miniapp: bool,
}

pub(super) async fn items(
    sh: &Context<'_>,
    repo: &Path,
    main: &str,
    list: &Checklist,
) -> Vec<PreflightItem> {
    let mut out = Vec::new();
    let spec = format!("{main}:{SCENARIO_DIR}");
    let Ok(names) = git::git(repo, &["ls-tree", "--name-only", &spec], sh.cancel).await else {
        // No scenarios on main: nothing to check.
        return out;
    };
    let mut needs = Needs::default();
    for name in names.lines().filter(|n| n.ends_with(".toml")) {
        let path = format!("{SCENARIO_DIR}/{name}");
        let text = git::read_file_at(repo, main, &path)
            .await
            .ok()
            .flatten()
            .unwrap_or_default();
        match core::parse(&path, name.trim_end_matches(".toml"), &text) {
            Ok(s) => match s.target {
                Target::Bot { .. } => needs.bot = true,
                Target::Miniapp { .. } => needs.miniapp = true,
            },
            Err(e) => out.push(item(
                Code::Telegram,
                Level::Warning,
                format!("{e} (on {main}; its tester's check will fail on it)"),
                Some(format!("fix {path} on {main}")),
            )),
        }
    }
    if !needs.bot && !needs.miniapp {
        return out;
    }
    let Some(cfg) = &sh.cfg.telegram else {
        out.push(item(
            Code::Telegram,
            Level::Blocking,
            "the project has Telegram scenarios and conveyor.toml has no [telegram]".into(),
            Some(format!(
                "add [telegram] to conveyor.toml: the test account's session_dir, api_id_file, api_hash_file and test_bot_token_file ({DOCS})"
            )),
        ));
        return out;
    };
    if needs.bot {
        out.extend(bot_items(sh, cfg, list).await);
    }
    if needs.miniapp {
        out.extend(miniapp_items(sh, cfg).await);
    }
    out
}

async fn bot_items(sh: &Context<'_>, cfg: &TelegramConfig, list: &Checklist) -> Vec<PreflightItem> {
    let mut out = Vec::new();
    match (&list.telegram.test_bot, &list.telegram.prod_bot) {
        (None, _) => out.push(item(
            Code::Telegram,
            Level::Blocking,
            "the project has bot scenarios and its .conveyor.toml has no [telegram] test_bot".into(),
            Some("name the test bot in .conveyor.toml on main: [telegram] test_bot = \"@…\"".into()),
        )),
        (Some(_), None) => out.push(item(
            Code::Telegram,
            Level::Warning,
            "the project's .conveyor.toml has no [telegram] prod_bot: nothing refuses a scenario aimed at the production bot".into(),
            Some("name the production bot in .conveyor.toml on main: [telegram] prod_bot = \"@…\"".into()),
        )),
        (Some(t), Some(p)) => out.push(ok(
            Code::Telegram,
            format!("bot scenarios talk to {t}; {p} is refused"),
        )),
    }
    if let Some(base) = &cfg.fake_api {
        out.push(ok(
            Code::Telegram,
            format!("bot scenarios go to the fake Telegram at {base} (tests)"),
        ));
        return out;
    }
    match &cfg.session_dir {
        None => out.push(item(
            Code::Telegram,
            Level::Blocking,
            "conveyor.toml's [telegram] has no session_dir for the test account".into(),
            Some(format!("set [telegram] session_dir (in the vault), then run `conveyord telegram-login` once ({DOCS})")),
        )),
        Some(dir) => {
            let file = session_file(dir);
            out.push(if file.is_file() {
                session_item(sh, cfg, &file).await
            } else {
                item(
                    Code::Telegram,
                    Level::Blocking,
                    format!("the test account has no session at {}", file.display()),
                    Some(format!("run `conveyord telegram-login` once on this machine ({DOCS})")),
                )
            });
        }
    }
    for (what, f) in [
        ("api_id_file", &cfg.api_id_file),
        ("api_hash_file", &cfg.api_hash_file),
    ] {
        match f {
            Some(p) if p.is_file() => {}
            Some(p) => out.push(item(
                Code::Telegram,
                Level::Blocking,
                format!("[telegram] {what} {} does not exist", p.display()),
                Some(format!(
                    "write the test account's value from my.telegram.org there ({DOCS})"
                )),
            )),
            None => out.push(item(
                Code::Telegram,
                Level::Blocking,
                format!("conveyor.toml's [telegram] has no {what}"),
                Some(format!("set [telegram] {what} ({DOCS})")),
            )),
        }
    }
    let probe = probe(sh, &cfg.python, &["-c", "import pyrogram"], None).await;
    out.push(match probe {
        Ok(()) => ok(Code::Telegram, format!("{} has kurigram", cfg.python.display())),
        Err(why) => item(
            Code::Telegram,
            Level::Blocking,
            format!("{} cannot import kurigram (pyrogram): {why}", cfg.python.display()),
            Some(format!(
                "run `conveyord telegram-setup` and set [telegram] python to the venv's python it prints ({DOCS})"
            )),
        ),
    });
    out
}

/// A session that exists: does it still work? Asked of Telegram through the check's own
/// client, rarely (see [`crate::telegram::SessionMemo`]); a signed-out one blocks now, in the
/// evening, not at the tester's first bot step at night.
async fn session_item(sh: &Context<'_>, cfg: &TelegramConfig, file: &Path) -> PreflightItem {
    let out = sh.cfg.data_dir.join("telegram").join("preflight");
    match sh.telegram_session.verdict(cfg, file, &out).await {
        Verdict::Works { me } => ok(
            Code::Telegram,
            format!(
                "the test account's session at {} works (signed in as {me})",
                file.display()
            ),
        ),
        Verdict::SignedOut { detail } => item(
            Code::Telegram,
            Level::Blocking,
            format!(
                "the test account's session at {} is signed out ({detail})",
                file.display()
            ),
            Some(format!(
                "run `conveyord telegram-login` again on this machine ({DOCS})"
            )),
        ),
        Verdict::Unknown { why } => item(
            Code::Telegram,
            Level::Warning,
            format!(
                "the test account's session is at {}; whether it still works could not be asked: {why}",
                file.display()
            ),
            Some(format!(
                "the preflight asks again in {} minutes; a signed-out session ends its check with the login command ({DOCS})",
                crate::telegram::session::RETRY.as_secs() / 60
            )),
        ),
    }
}

async fn miniapp_items(sh: &Context<'_>, cfg: &TelegramConfig) -> Vec<PreflightItem> {
    let mut out = Vec::new();
    match &cfg.test_bot_token_file {
        Some(f) => {
            if let Err(e) = crate::config::read_secret(f, "[telegram] test_bot_token_file") {
                out.push(item(
                    Code::Telegram,
                    Level::Blocking,
                    e,
                    Some("write the test bot's token there, readable by its owner only".into()),
                ));
            }
        }
        None => out.push(item(
            Code::Telegram,
            Level::Blocking,
            "conveyor.toml's [telegram] has no test_bot_token_file: mini-apps' initData is signed with it".into(),
            Some(format!("set [telegram] test_bot_token_file ({DOCS})")),
        )),
    }
    out.push(
        match probe(sh, &cfg.chromium, &["--headless", "--version"], None).await {
            Ok(()) => ok(Code::Telegram, format!("{} runs", cfg.chromium.display())),
            Err(why) => item(
                Code::Telegram,
                Level::Blocking,
                format!("Chromium ({}) does not run: {why}", cfg.chromium.display()),
                Some("apt-get install chromium, or set [telegram] chromium".into()),
            ),
        },
    );
    let node_path = cfg.node_modules.as_ref().map(|p| p.display().to_string());
    out.push(
        match probe(
            sh,
            &cfg.node,
            &["-e", "require('playwright-core')"],
            node_path.as_deref(),
        )
        .await
        {
            Ok(()) => ok(Code::Telegram, "playwright-core is installed".into()),
            Err(why) => item(
                Code::Telegram,
                Level::Blocking,
                format!("Node cannot load playwright-core: {why}"),
                Some(format!(
                    "run `conveyord telegram-setup` and set [telegram] node_modules to what it prints ({DOCS})"
                )),
            ),
        },
    );
    out
}

/// Runs a tool; why it did not exit 0.
async fn probe(
    sh: &Context<'_>,
    program: &Path,
    args: &[&str],
    node_path: Option<&str>,
) -> Result<(), String> {
    let mut spec = Spec::new(program, &sh.cfg.data_dir).args(args.iter().copied());
    if let Some(p) = node_path {
        spec.env.insert("NODE_PATH".into(), p.into());
    }
    match exec::run(&spec, PROBE_TIMEOUT, sh.cancel).await {
        Ok(o) if o.code == Some(0) => Ok(()),
        Ok(o) => Err(o.tail(300).trim().to_string()),
        Err(e) => Err(e.to_string()),
    }
}
