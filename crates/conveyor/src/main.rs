//! `conveyord serve --config conveyor.toml`: the daemon. `conveyord budget`: what a running
//! daemon's budget looks like.

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
    Budget {
        /// The daemon's config file (for its listen address and token).
        #[arg(long, default_value = "conveyor.toml")]
        config: PathBuf,
        /// The daemon's URL, instead of the config's listen address.
        #[arg(long)]
        url: Option<String>,
        /// The bearer token, instead of the config's token file.
        #[arg(long)]
        token: Option<String>,
    },
}

fn main() -> anyhow::Result<()> {
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
        Cmd::Budget { config, url, token } => return print_budget(&config, url, token),
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

/// `conveyord budget`.
fn print_budget(
    config: &std::path::Path,
    url: Option<String>,
    token: Option<String>,
) -> anyhow::Result<()> {
    let (url, token) = match (url, token) {
        (Some(u), Some(t)) => (u, t),
        (url, token) => {
            let cfg = conveyor::Config::load(config).context("loading the config")?;
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
    let rt = tokio::runtime::Runtime::new().context("starting the runtime")?;
    let budget = rt
        .block_on(conveyor_api::Client::new(url.clone(), Some(token)).budget())
        .with_context(|| format!("GET {url}/api/budget"))?;
    // CLI output, not a log line.
    use std::io::Write as _;
    std::io::stdout()
        .write_all(conveyor::budget::render(&budget).as_bytes())
        .context("writing to stdout")?;
    Ok(())
}
