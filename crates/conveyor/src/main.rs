//! `conveyord serve --config conveyor.toml`: the daemon. `conveyord budget`: what a running
//! daemon's budget looks like. `conveyord check`: its preflight. `conveyord lines` and
//! `conveyord line add | priority | cancel`: the queue. Every subcommand but `serve` is a
//! client of a running daemon's API, except `hook`, which the agent CLI runs as a judge's
//! hooks, and `bridge`, the network's way out of an agent's sandbox.

mod cli;

use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "conveyord", version, about = "The conveyor daemon")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Serve the API and work through the queue until SIGINT or SIGTERM.
    Serve {
        /// The daemon's config file.
        #[arg(long, default_value = "conveyor.toml")]
        config: PathBuf,
    },
    /// Print the running daemon's budget (`GET /api/budget`): pools, estimates, misses.
    Budget(Connect),
    /// Serve the evening's tools (the queue, projects, budget, last night) to a Claude Code
    /// session as a stdio MCP server, over the running daemon's API.
    Mcp(Connect),
    /// Run the running daemon's preflight now (`GET /api/preflight`) and print what would
    /// stop lines. Exit 0 when nothing blocks, 2 when something does, 1 on an error.
    Check(Connect),
    /// List the lines (`GET /api/lines`), in the daemon's order: highest priority first.
    Lines {
        /// Only lines in this state (`queued`, `running`, `awaiting_acceptance`, …).
        #[arg(long)]
        state: Option<String>,
        /// Only this project's (its id or name).
        #[arg(long)]
        project: Option<String>,
        /// The API's JSON instead of a table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        connect: Connect,
    },
    /// Queue a line, change its priority, or cancel it.
    Line {
        #[command(subcommand)]
        cmd: cli::LineCmd,
        /// The API's JSON of the line instead of a sentence.
        #[arg(long, global = true)]
        json: bool,
        #[command(flatten)]
        connect: Connect,
    },
    /// Run the project's Telegram scenarios (`.conveyor/telegram/*.toml`) against its test bot
    /// and mini-app. Prints each scenario's findings; exit 0 when all pass, 1 when a step
    /// failed, 2 when the check could not run (what to fix is printed).
    TelegramCheck {
        /// Only this scenario file.
        #[arg(long)]
        scenario: Option<PathBuf>,
        /// The project's checkout (the line's worktree).
        #[arg(long, default_value = ".")]
        dir: PathBuf,
        /// Where screenshots go; by default a new folder under the data folder.
        #[arg(long)]
        out: Option<PathBuf>,
        /// The daemon's config file (its `[telegram]`).
        #[arg(long, default_value = "conveyor.toml")]
        config: PathBuf,
    },
    /// Install what the Telegram checks run with into a folder of their own: a Python venv
    /// with kurigram and a node_modules with playwright-core (pinned). Prints the `[telegram]`
    /// lines that point at them. Needs the package registries; run once per server.
    TelegramSetup {
        /// Where to install (a venv and a node_modules inside).
        #[arg(long, default_value = "/var/lib/conveyor/telegram-tools")]
        dir: PathBuf,
    },
    /// Sign the test account in once (asks for its phone number and Telegram's code) and keep
    /// its session in `[telegram] session_dir`.
    TelegramLogin {
        /// The daemon's config file (its `[telegram]`).
        #[arg(long, default_value = "conveyor.toml")]
        config: PathBuf,
    },
    /// Inside an agent's sandbox: listen on loopback and pipe each connection to the daemon's
    /// Unix socket (the run's proxy), then run the command after `--` and exit with its code.
    /// Without a command, serve until killed. Prints nothing.
    #[command(hide = true)]
    Bridge(BridgeArgs),
    /// The hooks of a judge's or a checking role's run, run by the agent CLI (not for people).
    #[command(subcommand, hide = true)]
    Hook(HookCmd),
}

/// Inside an agent's sandbox: listen on loopback and pipe each connection to the daemon's Unix
/// socket (the run's proxy), then run the command after `--` and exit with its code. Without a
/// command, serve until killed. Prints nothing.
#[derive(Parser)]
#[command(name = "bridge", bin_name = "conveyord bridge")]
struct BridgeArgs {
    /// Where the sandbox's proxy variables point (`127.0.0.1:3128`).
    #[arg(long, requires = "socket")]
    listen: Option<std::net::SocketAddr>,
    /// The run's proxy socket, bound into the sandbox.
    #[arg(long, requires = "listen")]
    socket: Option<PathBuf>,
    /// A loopback API base URL's address (`127.0.0.1:<port>`), reached without the proxy.
    #[arg(long, requires = "forward_socket")]
    forward: Option<std::net::SocketAddr>,
    /// The run's API forward socket, bound into the sandbox.
    #[arg(long, requires = "forward")]
    forward_socket: Option<PathBuf>,
    /// The command to run once the bridge listens (the agent).
    #[arg(last = true)]
    command: Vec<std::ffi::OsString>,
}

#[derive(Subcommand)]
enum HookCmd {
    /// Stop hook: blocks (JSON on stdout) while the verdict file does not parse or misses an
    /// id, at most `rounds` times.
    Verdict {
        #[arg(long)]
        file: PathBuf,
        /// JSON `{"ids": [..], "open": [..]}`: the ids to judge and the open questions.
        #[arg(long)]
        given: PathBuf,
        #[arg(long)]
        state: PathBuf,
        #[arg(long, default_value_t = 3)]
        rounds: u32,
    },
    /// Stop hook of a checking role: blocks while its verdict file is not `pass` or `rework`
    /// with findings, at most `rounds` times.
    RoleVerdict {
        #[arg(long)]
        file: PathBuf,
        #[arg(long)]
        state: PathBuf,
        #[arg(long, default_value_t = 3)]
        rounds: u32,
    },
    /// PreToolUse hook of every agent run: denies what is never done autonomously (the
    /// built-in rules and the project's `[never] patterns`, in the context file).
    Guard {
        #[arg(long)]
        context: PathBuf,
    },
    /// PreToolUse hook: denies every tool call but a `Write` of this file.
    OnlyWrite { file: PathBuf },
}

/// How a client subcommand reaches the daemon: its config file, or a URL and a token (given
/// anywhere on the command line, also after `line add`).
#[derive(clap::Args)]
struct Connect {
    /// The daemon's config file (for its listen address and token file).
    #[arg(long, default_value = "conveyor.toml", global = true)]
    config: PathBuf,
    /// The daemon's URL, instead of the config's listen address.
    #[arg(long, global = true)]
    url: Option<String>,
    /// The bearer token, instead of the config's token file.
    #[arg(long, conflicts_with = "token_file", global = true)]
    token: Option<String>,
    /// A file holding the bearer token, instead of the config's.
    #[arg(long, global = true)]
    token_file: Option<PathBuf>,
}

fn main() -> anyhow::Result<()> {
    // The bridge lives for the whole of every agent run, in its sandbox: it starts before the
    // rest (no log subscriber, not the daemon's whole command line), which keeps it small.
    if std::env::args_os().nth(1).is_some_and(|a| a == "bridge") {
        return bridge(BridgeArgs::parse_from(std::env::args_os().skip(1)));
    }
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,sqlx=warn,tower_http=warn".into()),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let cli = Cli::parse();
    let config = match cli.cmd {
        Cmd::Serve { config } => config,
        Cmd::Budget(c) => return print_budget(&c),
        Cmd::Mcp(c) => return mcp(&c),
        Cmd::Check(c) => {
            let blocking = check(&c)?;
            std::process::exit(if blocking { 2 } else { 0 });
        }
        Cmd::Hook(h) => return hook(h),
        Cmd::TelegramCheck {
            scenario,
            dir,
            out,
            config,
        } => {
            let code = match telegram_check(&config, &dir, scenario.as_deref(), out) {
                Ok(all_pass) => i32::from(!all_pass),
                Err(e) => {
                    use std::io::Write as _;
                    let _ = writeln!(std::io::stderr(), "error: {e:#}");
                    2
                }
            };
            std::process::exit(code);
        }
        Cmd::TelegramLogin { config } => return telegram_login(&config),
        Cmd::TelegramSetup { dir } => return print(&conveyor::telegram::setup(&dir)?),
        Cmd::Bridge(args) => return bridge(args),
        Cmd::Lines {
            state,
            project,
            json,
            connect,
        } => {
            let (url, client) = client(&connect)?;
            let rt = tokio::runtime::Runtime::new().context("starting the runtime")?;
            let out = rt
                .block_on(cli::lines(
                    &client,
                    state.as_deref(),
                    project.as_deref(),
                    json,
                ))
                .with_context(|| format!("the daemon at {url}"))?;
            return print(&out);
        }
        Cmd::Line { cmd, json, connect } => {
            let (url, client) = client(&connect)?;
            let rt = tokio::runtime::Runtime::new().context("starting the runtime")?;
            let out = rt
                .block_on(cli::line(&client, cmd, json))
                .with_context(|| format!("the daemon at {url}"))?;
            return print(&out);
        }
    };
    let cfg = conveyor::Config::load(&config).context("loading the config")?;
    let rt = tokio::runtime::Runtime::new().context("starting the runtime")?;
    rt.block_on(async move {
        let handle = conveyor::start(cfg).await.context("starting conveyor")?;
        let stop = handle.shutdown.clone();
        tokio::spawn(async move {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                    .expect("SIGTERM handler");
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            tracing::info!("stopping");
            stop.cancel();
        });
        handle.wait().await;
        anyhow::Ok(())
    })
}

/// The client a subcommand talks to the daemon with.
fn client(c: &Connect) -> anyhow::Result<(String, conveyor_api::Client)> {
    let token = match (&c.token, &c.token_file) {
        (Some(t), _) => Some(t.clone()),
        (None, Some(f)) => Some(read_token_file(f)?),
        (None, None) => None,
    };
    let (url, token) = match (c.url.clone(), token) {
        (Some(u), Some(t)) => (u, t),
        (url, token) => {
            let cfg = conveyor::Config::load(&c.config).context("loading the config")?;
            let url = url.unwrap_or_else(|| {
                let mut addr = cfg.listen;
                if addr.ip().is_unspecified() {
                    addr.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
                }
                format!("http://{addr}")
            });
            let token = match token {
                Some(t) => t,
                None => cfg.read_token().context("reading the token")?,
            };
            (url, token)
        }
    };
    Ok((url.clone(), conveyor_api::Client::new(url, Some(token))))
}

fn read_token_file(path: &std::path::Path) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the token file {}", path.display()))?;
    conveyor::config::token_in(&text)
        .map(str::to_string)
        .with_context(|| format!("the token file {} is empty", path.display()))
}

/// CLI output, not a log line.
fn print(text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    std::io::stdout()
        .write_all(text.as_bytes())
        .context("writing to stdout")
}

/// `conveyord budget`.
fn print_budget(c: &Connect) -> anyhow::Result<()> {
    let (url, client) = client(c)?;
    let rt = tokio::runtime::Runtime::new().context("starting the runtime")?;
    let budget = rt
        .block_on(client.budget())
        .with_context(|| format!("GET {url}/api/budget"))?;
    print(&conveyor::budget::render(&budget))
}

/// `conveyord check`: prints the preflight; whether anything blocks.
fn check(c: &Connect) -> anyhow::Result<bool> {
    let (url, client) = client(c)?;
    let rt = tokio::runtime::Runtime::new().context("starting the runtime")?;
    let report = rt
        .block_on(client.preflight())
        .with_context(|| format!("GET {url}/api/preflight"))?;
    print(&conveyor::preflight::render(&report))?;
    Ok(report.blocking)
}

/// `conveyord bridge`: listens, then runs the command and exits with its code (or serves on).
fn bridge(args: BridgeArgs) -> anyhow::Result<()> {
    use conveyor::sandbox::bridge;
    let pipes = [
        (args.listen, args.socket),
        (args.forward, args.forward_socket),
    ]
    .into_iter()
    .filter_map(|(listen, socket)| {
        Some(bridge::Pipe {
            listen: listen?,
            socket: socket?,
        })
    })
    .collect::<Vec<_>>();
    anyhow::ensure!(
        !pipes.is_empty(),
        "give --listen and --socket, or --forward and --forward-socket"
    );
    let command = args.command;
    bridge::Bridge::bind(&pipes).context("listening")?.start();
    if command.is_empty() {
        loop {
            std::thread::park();
        }
    }
    let code = bridge::run(&command).context("running the command")?;
    std::process::exit(code);
}

/// `conveyord telegram-check`: prints the outcomes; whether every scenario passed.
fn telegram_check(
    config: &std::path::Path,
    dir: &std::path::Path,
    scenario: Option<&std::path::Path>,
    out: Option<PathBuf>,
) -> anyhow::Result<bool> {
    // Inside a tester's sandbox the daemon runs the check: the run cannot see the test
    // account's session, nor the config that names it.
    let socket = std::path::Path::new(conveyor_core::sandbox::TELEGRAM_SOCKET);
    if socket.exists() {
        let rt = tokio::runtime::Runtime::new().context("starting the runtime")?;
        let (text, code) = rt.block_on(conveyor::telegram::serve::ask(socket, scenario))?;
        print(&text)?;
        anyhow::ensure!(code != 2, "the daemon could not run the check (above)");
        return Ok(code == 0);
    }
    let cfg = conveyor::Config::load(config).context("loading the config")?;
    let tg = cfg.telegram.clone().with_context(|| {
        format!(
            "{} has no [telegram]: the Telegram checks need the test account (docs/conveyor.md, \"Telegram checks\")",
            config.display()
        )
    })?;
    let checklist = dir.join(".conveyor.toml");
    let project = match std::fs::read_to_string(&checklist) {
        Ok(text) => {
            conveyor::config::Checklist::parse(&text)
                .with_context(|| checklist.display().to_string())?
                .telegram
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Default::default(),
        Err(e) => return Err(e).context(checklist.display().to_string()),
    };
    let out = out.unwrap_or_else(|| {
        cfg.data_dir
            .join("telegram")
            .join(chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ").to_string())
    });
    let setup = conveyor::telegram::Setup {
        config: &tg,
        project: &project,
        out: &out,
    };
    let rt = tokio::runtime::Runtime::new().context("starting the runtime")?;
    let outcomes = rt.block_on(conveyor::telegram::check(setup, dir, scenario))?;
    print(&conveyor::telegram::render(&outcomes))?;
    Ok(outcomes.iter().all(|o| o.findings.is_empty()))
}

/// `conveyord telegram-login`: the user client's sign-in, at this terminal.
fn telegram_login(config: &std::path::Path) -> anyhow::Result<()> {
    let cfg = conveyor::Config::load(config).context("loading the config")?;
    let tg = cfg
        .telegram
        .with_context(|| format!("{} has no [telegram]", config.display()))?;
    let status = conveyor::telegram::login(&tg, &cfg.data_dir.join("telegram"))?;
    anyhow::ensure!(status.success(), "the sign-in did not finish ({status})");
    Ok(())
}

/// `conveyord hook …`: reads the hook's input on stdin, answers on stdout, exits 0.
fn hook(h: HookCmd) -> anyhow::Result<()> {
    use std::io::Read as _;
    let mut input = String::new();
    // The CLI writes the hook's input and may close early: a short read is fine.
    let _ = std::io::stdin().read_to_string(&mut input);
    let answer = match h {
        HookCmd::Verdict {
            file,
            given,
            state,
            rounds,
        } => conveyor::judge::stop_hook(&file, &given, &state, rounds),
        HookCmd::RoleVerdict {
            file,
            state,
            rounds,
        } => conveyor::roles::stop_hook(&file, &state, rounds),
        HookCmd::Guard { context } => conveyor::guard::hook_with_context_file(&input, &context),
        HookCmd::OnlyWrite { file } => conveyor::judge::only_write(&input, &file),
    };
    match answer {
        Some(a) => print(&format!("{a}\n")),
        None => Ok(()),
    }
}

/// `conveyord mcp`: the MCP server on stdio until its client closes it. A connection that
/// cannot be made (no config, no token file) is told by every tool, not by a server that
/// never starts.
fn mcp(c: &Connect) -> anyhow::Result<()> {
    let token_from =
        conveyor::mcp::token_origin(&c.config, c.token.is_some(), c.token_file.as_deref());
    let daemon = client(c)
        .map(|(url, client)| conveyor::mcp::Daemon::new(url, client, token_from))
        .map_err(|e| format!("{e:#}"));
    let rt = tokio::runtime::Runtime::new().context("starting the runtime")?;
    let served = rt.block_on(conveyor::mcp::serve(daemon));
    // A read of stdin cannot be cancelled: do not wait for it.
    rt.shutdown_background();
    served
}
