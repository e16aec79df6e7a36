//! The Telegram checks: a project's scenarios (`.conveyor/telegram/*.toml`) run against its
//! test bot through the test account, or against its mini-app in the system's Chromium. One
//! door, [`check`]: it reads the scenarios, refuses what is aimed at the production bot, runs
//! the rest and answers each scenario's findings, which the tester turns into `rework`.
//!
//! The bot side talks to a [`Transport`]: the real one is the test account's Pyrogram client
//! (`user_client.py`, a child process), the tests' one a loopback fake Telegram that is also
//! the Bot API of the bot under test. The mini-app side is `miniapp.mjs` (Playwright driving
//! Chromium). Both scripts are built into the binary and written next to the run's output, so
//! a packaged daemon needs only their interpreters and libraries, not a copy of the repository.

mod bot;
mod error;
mod miniapp;
pub mod serve;
pub mod session;
mod transport;

use std::path::{Path, PathBuf};

use conveyor_core::telegram::{self as core, Scenario, Target};

pub use error::TelegramError;
pub use miniapp::init_data;
pub use session::{SessionMemo, Verdict as SessionVerdict};
pub use transport::{Button, Fake, Message, Transport, UserClient, login, session_file};

use crate::config::{ProjectTelegram, TelegramConfig};

/// Where a project keeps its scenarios.
pub const SCENARIO_DIR: &str = ".conveyor/telegram";

/// One scenario's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub scenario: String,
    /// Empty when it passed.
    pub findings: Vec<String>,
}

/// What a check needs besides the scenarios.
#[derive(Debug, Clone, Copy)]
pub struct Setup<'a> {
    pub config: &'a TelegramConfig,
    pub project: &'a ProjectTelegram,
    /// Where screenshots and the runner scripts go (kept with the run).
    pub out: &'a Path,
}

/// The scenario files of a project's checkout, sorted, or the one asked for.
///
/// # Errors
/// A folder that cannot be read, or none there.
pub fn scenario_files(dir: &Path, only: Option<&Path>) -> Result<Vec<PathBuf>, TelegramError> {
    if let Some(f) = only {
        let f = if f.is_relative() {
            dir.join(f)
        } else {
            f.to_path_buf()
        };
        if !f.is_file() {
            return Err(TelegramError::NoScenarios { path: f });
        }
        return Ok(vec![f]);
    }
    let folder = dir.join(SCENARIO_DIR);
    let Ok(entries) = std::fs::read_dir(&folder) else {
        return Err(TelegramError::NoScenarios { path: folder });
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(TelegramError::NoScenarios { path: folder });
    }
    Ok(files)
}

/// Reads and parses scenario files; errors name the file relative to `dir`.
///
/// # Errors
/// The first file that cannot be read or parsed.
pub fn load(dir: &Path, files: &[PathBuf]) -> Result<Vec<Scenario>, TelegramError> {
    files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).map_err(|source| TelegramError::Io {
                path: f.clone(),
                source,
            })?;
            let shown = f.strip_prefix(dir).unwrap_or(f).display().to_string();
            let name = f
                .file_stem()
                .map_or_else(|| shown.clone(), |s| s.to_string_lossy().into_owned());
            Ok(core::parse(&shown, &name, &text)?)
        })
        .collect()
}

/// Runs the scenarios of `dir` (or the one `only` names) and answers each one's findings.
/// Bot scenarios share one transport (one user client); a scenario aimed at the production bot
/// is refused before the transport is even made.
///
/// # Errors
/// What stops every scenario (a bad file, no session, no browser); a failed step is a
/// finding, not an error.
pub async fn check(
    setup: Setup<'_>,
    dir: &Path,
    only: Option<&Path>,
) -> Result<Vec<Outcome>, TelegramError> {
    let scenarios = load(dir, &scenario_files(dir, only)?)?;
    std::fs::create_dir_all(setup.out).map_err(|source| TelegramError::Io {
        path: setup.out.to_path_buf(),
        source,
    })?;
    let mut transport: Option<transport::Any> = None;
    let mut out = Vec::with_capacity(scenarios.len());
    for s in &scenarios {
        let findings = match &s.target {
            Target::Bot { .. } => {
                let Some(bot) = s.bot(setup.project.test_bot.as_deref()) else {
                    return Err(TelegramError::NoTestBot);
                };
                if core::is_prod(bot, setup.project.prod_bot.as_deref()) {
                    vec![format!(
                        "refused: the scenario is aimed at {bot}, the project's prod_bot; \
                         scenarios talk to the test bot only, nothing was sent"
                    )]
                } else {
                    if transport.is_none() {
                        transport = Some(transport::open(setup.config, setup.out).await?);
                    }
                    let t = transport.as_mut().expect("made above");
                    bot::run(t, bot, s).await?
                }
            }
            Target::Miniapp { url } => miniapp::run(setup, s, url).await?,
        };
        out.push(Outcome {
            scenario: s.name.clone(),
            findings,
        });
    }
    if let Some(t) = transport {
        t.close().await;
    }
    Ok(out)
}

/// The npm package the mini-app runner needs, as pinned in the repository's package.json
/// (a test holds the two together).
pub const PLAYWRIGHT_CORE: &str = "playwright-core@1.65.1";
/// The user client's Python requirements (kurigram, pinned).
pub const REQUIREMENTS: &str = include_str!("../../telegram/requirements.txt");

/// `conveyord telegram-setup`: a venv with kurigram and a node_modules with playwright-core in
/// `dir`, for a daemon installed from the package (which carries neither). Answers the
/// `[telegram]` lines to add. Chromium is the system's (`apt-get install chromium`).
///
/// # Errors
/// A step that fails, with its command.
pub fn setup(dir: &Path) -> Result<String, TelegramError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| TelegramError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let venv = dir.join("venv");
    let node = dir.join("node");
    std::fs::create_dir_all(&node).map_err(io(&node))?;
    let req = dir.join("requirements.txt");
    std::fs::write(&req, REQUIREMENTS).map_err(io(&req))?;
    let python = venv.join("bin/python");
    let steps: [(&str, Vec<std::ffi::OsString>); 3] = [
        (
            "python3",
            vec!["-m".into(), "venv".into(), venv.clone().into()],
        ),
        (
            python.to_str().unwrap_or("python"),
            vec![
                "-m".into(),
                "pip".into(),
                "install".into(),
                "--disable-pip-version-check".into(),
                "-r".into(),
                req.clone().into(),
            ],
        ),
        (
            "npm",
            vec![
                "install".into(),
                "--no-audit".into(),
                "--no-fund".into(),
                "--prefix".into(),
                node.clone().into(),
                PLAYWRIGHT_CORE.into(),
            ],
        ),
    ];
    for (program, args) in steps {
        let status = std::process::Command::new(program)
            .args(&args)
            .status()
            .map_err(|source| TelegramError::Spawn {
                program: program.to_string(),
                source,
            })?;
        if !status.success() {
            return Err(TelegramError::Transport {
                what: format!(
                    "{program} {}",
                    args.iter()
                        .map(|a| a.to_string_lossy())
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
                message: status.to_string(),
            });
        }
    }
    Ok(format!(
        "installed; add to conveyor.toml's [telegram]:\npython = {:?}\nnode_modules = {:?}\n(and Chromium: apt-get install chromium)\n",
        python.display().to_string(),
        node.join("node_modules").display().to_string()
    ))
}

/// The outcomes as the tester reads them: one line per scenario, its findings indented.
#[must_use]
pub fn render(outcomes: &[Outcome]) -> String {
    let mut s = String::new();
    for o in outcomes {
        if o.findings.is_empty() {
            s.push_str(&format!("{}: passed\n", o.scenario));
        } else {
            s.push_str(&format!("{}: FAILED\n", o.scenario));
            for f in &o.findings {
                s.push_str(&format!("  {f}\n"));
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The setup installs the playwright-core the tests ran with.
    #[test]
    fn the_setups_playwright_is_the_repositorys_pin() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let pkg: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(root.join("package.json")).unwrap())
                .unwrap();
        let (name, version) = PLAYWRIGHT_CORE.split_once('@').unwrap();
        assert_eq!(pkg["devDependencies"][name], version);
    }
}
