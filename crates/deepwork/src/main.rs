//! The `deepwork` command line: parses arguments, prints the step log to stderr as it
//! happens, and the answer (or one JSON object) to stdout.
//!
//! Exit codes: 0 done, 1 a proposed file could not be written or a selftest failed, 2 usage
//! or config error, 3 transport error.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Parser;
use deepwork::{
    Ask, Cancel, CheckKind, Config, Event, Limits, Loop, Outcome, Overrides, Prompts, RunError,
    Sandbox, StopReason,
};
use serde::Serialize;

const EXIT_WRITE_FAILED: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_TRANSPORT: u8 = 3;

/// Ask a web-chat model about a project folder; it can ask back for files (NEED), paths (LIST)
/// and text (FIND), which deepwork answers read-only from the folder.
#[derive(Debug, Parser)]
#[command(name = "deepwork", version, about)]
struct Cli {
    /// The project folder [default: the current folder].
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Files to attach to the first message, relative to the folder, comma-separated.
    #[arg(long, value_name = "a,b", value_delimiter = ',')]
    files: Vec<String>,
    /// Steps at most [default: 4, or config.json's "steps"].
    #[arg(long, value_name = "N")]
    steps: Option<usize>,
    /// The bridge's chat [default: think, or config.json's "chat"].
    #[arg(long, value_name = "NAME")]
    chat: Option<String>,
    /// The bridge (ask.mjs); selects the bridge transport.
    #[arg(long, value_name = "PATH")]
    bridge: Option<PathBuf>,
    /// The config file [default: the user's config folder, deepwork/config.json].
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Write the proposed files (old versions go to backup/<YYYYMMDD-HHMMSS>/).
    #[arg(long)]
    apply: bool,
    /// Print one JSON object instead of the answer.
    #[arg(long)]
    json: bool,
    /// Offline checks of the parser, sandbox, globs and fences; sends nothing.
    #[arg(long, conflicts_with_all = ["check", "question"])]
    selftest: bool,
    /// Check the config, node, the bridge and the transport.
    #[arg(long, conflicts_with = "question")]
    check: bool,
    /// The question.
    #[arg(required_unless_present_any = ["selftest", "check"])]
    question: Option<String>,
}

#[derive(Serialize)]
struct JsonOut<'a> {
    stop_reason: StopReason,
    steps: &'a [deepwork::Step],
    answer: &'a str,
    files: Vec<FileOut>,
}

#[derive(Serialize)]
struct FileOut {
    path: String,
    applied: bool,
    backup: Option<String>,
    truncated: bool,
    error: Option<String>,
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("DEEPWORK_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match real_main(cli) {
        Ok(code) => code,
        Err(failure) => {
            eprintln!("deepwork: {:#}", failure.error);
            ExitCode::from(failure.code)
        }
    }
}

struct Failure {
    code: u8,
    error: anyhow::Error,
}

fn usage(error: impl Into<anyhow::Error>) -> Failure {
    Failure {
        code: EXIT_USAGE,
        error: error.into(),
    }
}

fn real_main(cli: Cli) -> Result<ExitCode, Failure> {
    if cli.selftest {
        return Ok(selftest());
    }
    let exe = std::env::current_exe()
        .context("cannot find the deepwork executable")
        .map_err(usage)?;
    let overrides = Overrides {
        bridge: cli.bridge.clone(),
        chat: cli.chat.clone(),
        steps: cli.steps,
    };
    let config = Config::load(cli.config.as_deref(), &overrides, &exe).map_err(usage)?;
    if cli.check {
        return Ok(check(&config));
    }
    let dir = match &cli.dir {
        Some(d) => d.clone(),
        None => std::env::current_dir()
            .context("cannot read the current folder")
            .map_err(usage)?,
    };
    let sandbox = Sandbox::new(&dir)
        .with_context(|| format!("cannot open folder {}", dir.display()))
        .map_err(usage)?;
    let prompts = Prompts::load(config.prompts.as_deref()).map_err(usage)?;
    let mut transport =
        deepwork::transport_from_config(&config.transport).map_err(|e| Failure {
            code: EXIT_TRANSPORT,
            error: e.into(),
        })?;
    let cancel = Cancel::new();
    let on_ctrl_c = cancel.clone();
    // The bridge runs in its own process group, out of reach of the terminal's Ctrl-C: stop
    // it ourselves.
    let _ = ctrlc::set_handler(move || on_ctrl_c.cancel());

    let ask = Ask {
        question: cli.question.clone().unwrap_or_default(),
        files: cli
            .files
            .iter()
            .map(|f| f.trim().to_owned())
            .filter(|f| !f.is_empty())
            .collect(),
        steps: config.steps,
    };
    let lp = Loop {
        sandbox: &sandbox,
        prompts: &prompts,
        limits: Limits::default(),
        index: None,
    };
    let outcome = lp
        .run(&ask, transport.as_mut(), &cancel, &mut log_event)
        .map_err(|e| match e {
            // Stopped by Ctrl-C: the shell's convention for SIGINT.
            RunError::Cancelled { .. } => Failure {
                code: 130,
                error: e.into(),
            },
            e => Failure {
                code: EXIT_TRANSPORT,
                error: e.into(),
            },
        })?;
    let files = files_out(&sandbox, &outcome, cli.apply);
    let write_failed = files.iter().any(|f| f.error.is_some());
    if cli.json {
        let out = JsonOut {
            stop_reason: outcome.stop_reason,
            steps: &outcome.steps,
            answer: &outcome.answer,
            files,
        };
        let text = serde_json::to_string_pretty(&out)
            .context("cannot print JSON")
            .map_err(usage)?;
        println!("{text}");
    } else {
        println!("{}", outcome.answer.trim_end());
        for f in &files {
            let what = match (&f.error, f.applied, &f.backup) {
                (Some(e), _, _) => format!("not written: {e}"),
                (None, true, Some(b)) => format!("written; the old version is in {b}"),
                (None, true, None) => "written (new file)".to_owned(),
                (None, false, _) if f.truncated => {
                    "cut off in the answer (truncated); not writable".to_owned()
                }
                (None, false, _) => "proposed; --apply writes it".to_owned(),
            };
            eprintln!("file {}: {what}", f.path);
        }
    }
    Ok(if write_failed {
        ExitCode::from(EXIT_WRITE_FAILED)
    } else {
        ExitCode::SUCCESS
    })
}

fn files_out(sandbox: &Sandbox, outcome: &Outcome, apply: bool) -> Vec<FileOut> {
    let stamp = deepwork::backup_stamp(chrono::Local::now());
    outcome
        .files
        .iter()
        .map(|f| {
            let mut out = FileOut {
                path: f.path.clone(),
                applied: false,
                backup: None,
                truncated: f.truncated,
                error: None,
            };
            if apply && !f.truncated {
                match deepwork::write(sandbox, f, &stamp) {
                    Ok(w) => {
                        out.applied = true;
                        out.backup = w.backup;
                    }
                    Err(e) => out.error = Some(e.to_string()),
                }
            }
            out
        })
        .collect()
}

fn log_event(e: &Event) {
    match e {
        Event::StepStarted { n, new, sent_chars } => {
            let how = if *new { "new message" } else { "first message" };
            eprintln!("step {n}: sending {sent_chars} characters ({how})");
        }
        Event::AnswerReceived {
            n,
            answer_chars,
            requests,
            files,
        } => {
            eprintln!(
                "step {n}: answer {answer_chars} characters, {requests} requests, {files} files"
            );
        }
        Event::RequestExecuted { n, stat } => {
            let cut = if stat.truncated { ", truncated" } else { "" };
            let mut again = String::new();
            if stat.changed > 0 {
                again.push_str(&format!(", {} changed since sent", stat.changed));
            }
            if stat.unchanged > 0 {
                again.push_str(&format!(", {} unchanged (not sent again)", stat.unchanged));
            }
            eprintln!(
                "step {n}: {} {}: {} hits{cut}{again}",
                stat.kind, stat.arg, stat.hits
            );
        }
        Event::Finished { stop_reason, steps } => {
            eprintln!("done: {} after {steps} steps", stop_reason.as_str());
        }
        _ => {}
    }
}

fn selftest() -> ExitCode {
    let checks = deepwork::selftest();
    let failed = checks.iter().filter(|c| c.failure.is_some()).count();
    for c in &checks {
        match &c.failure {
            None => println!("ok    {}", c.name),
            Some(why) => println!("FAIL  {}: {why}", c.name),
        }
    }
    println!(
        "selftest: {} of {} checks passed",
        checks.len() - failed,
        checks.len()
    );
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_WRITE_FAILED)
    }
}

fn check(config: &Config) -> ExitCode {
    let report = deepwork::check(config);
    for item in &report.items {
        let mark = if item.ok { "ok  " } else { "FAIL" };
        println!("{mark}  {}: {}", item.name, item.detail);
    }
    match report.failure() {
        None => ExitCode::SUCCESS,
        Some(CheckKind::Local) => ExitCode::from(EXIT_USAGE),
        Some(CheckKind::Transport) => ExitCode::from(EXIT_TRANSPORT),
    }
}
