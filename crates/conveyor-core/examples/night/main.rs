//! The night simulator: seeded synthetic nights of lines and step costs replayed through the
//! real budget policy (`conveyor_core::budget::Policy`, the code the daemon's scheduler calls) with
//! a virtual clock, against first-come-first-served admission, an oracle with perfect estimates
//! and an upper bound on the offline optimum. `scripts/bench-budget.sh` runs it in release;
//! `docs/benchmarks/budget.md` has the figures and what each column means.
//!
//! The model, one tick per virtual minute:
//! - A line is a chain of steps (planner, executors, reviewer, fixer), each with a true cost
//!   drawn from the night's distribution (scaled per kind and per project) and a duration
//!   proportional to its cost. The account accrues a running step's cost minute by minute.
//! - The account's real limit is the threshold: when the accrued spend of the last
//!   `window` (or of the block open now, with `--block`) exceeds it, every running step is cut
//!   (a limit hit: its work is lost, it is retried later) and the account is parked until the
//!   window has drained to 3/4 of it (the block's close).
//! - The policy sees what the daemon sees: finished runs (cost counted at their end),
//!   estimates of running steps, misses, and the park. It sets each step's `--max-budget-usd`
//!   to estimate × `max_budget_factor`; a step that reaches it is cut (a miss).
//! - `fcfs` starts the next step of the earliest line whenever a slot is free, with no budget
//!   check and no cap; only the account's limit stops it. `no-packing` is the policy with
//!   head-of-line blocking (the first step that does not fit stops admission). `oracle` is the
//!   policy's rule and packing with every step's true cost as its estimate, its true rate and
//!   what it has spent so far (and no cap): a feasible schedule, so a lower bound on the
//!   optimum, as the printed bound is an upper one.
//!
//! Usage: `cargo run --release -p conveyor-core --example night -- [--seeds N] [--first-seed N]
//! [--hours H] [--server] [--block] [--live] [--sizes SIGMA] [--no-retry-floor]` (`--block`:
//! the account's window is a fixed block that opens with the first spending and empties at its
//! close, which the server's `resetsAt` reports, instead of a rolling one; `--live`: the running
//! steps' spend so far, as the daemon meters it; `--sizes`: the planner sizes each executor
//! step xs…xl, off its true cost by a lognormal error of σ, and the policy learns cost per
//! size as the daemon does; `--no-retry-floor`: attempts after a miss estimated by their
//! kind alone; `--resume-keeps F`: a step cut by the limit has its resumed session keep that
//! share of the cut attempt's spend, which is then not waste and not redone, 0 by default,
//! below 0 when the resume costs more than the cut spend; `--cap-keeps F` the same for a cap
//! miss, `--resume-keeps` by default); diagnostics `--exact-running` (the running steps' true costs), `--size-hint
//! SIGMA` (each step's cost known before it runs, off by a lognormal error of σ) and
//! `--calibrate` (nights whose real limit differs from the threshold); or
//! `… -- --trace FILE.csv [--slots N] [--threshold USD] [--window-min M] [--hours H]` to replay
//! a night written down (`line,step,kind,cost_usd,minutes[,size[,project]]`;
//! `docs/benchmarks/budget.md` has the format), with `--history FILE…` (earlier nights, oldest
//! first) to replay it warm as well as cold. `--kind K[,K…]` runs only those kinds
//! (`lognormal`, `heavy`, `bimodal`, `uniform`, `projects`); `--write-traces DIR` writes the
//! "projects" nights of the seeds and their three earlier nights as trace files.

// A command-line report: its output is the point.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod account;
mod calibrate;
mod model;
mod sim;
mod synthetic;
mod table;
mod trace;

use conveyor_core::budget::{BudgetConfig, Threshold};

use account::Setup;
use calibrate::calibration_table;
use model::{LINES, SLOTS, THRESHOLD, Trace, WINDOW_MIN};
use sim::{Mode, Sees};
use synthetic::{Dist, projects, runs_of, trace};
use table::{header, row};
use trace::{read_trace, write_trace};

/// Earlier nights of the same projects a warm "projects" night starts from.
const WARM_NIGHTS: usize = 3;

fn main() {
    let mut seeds = 10u64;
    let mut hours = 10i64;
    let mut sees = Sees {
        server: false,
        live: false,
        exact_running: false,
        size_hint: None,
        retry_floor: true,
        resume_keeps: 0.0,
        cap_keeps: 0.0,
    };
    let mut first_seed = 1u64;
    let mut sizes: Option<f64> = None;
    let mut trace_file: Option<String> = None;
    let mut calibrate = false;
    let mut history_files: Vec<String> = Vec::new();
    let mut kinds: Option<Vec<String>> = None;
    let mut write_dir: Option<String> = None;
    let mut cap_keeps: Option<f64> = None;
    let mut setup = Setup {
        slots: SLOTS,
        threshold: THRESHOLD,
        window_min: WINDOW_MIN,
        real: THRESHOLD,
        block: false,
    };
    let mut cfg = BudgetConfig {
        window_secs: u32::try_from(WINDOW_MIN * 60).unwrap_or(18000),
        threshold_usd: Threshold::Usd(THRESHOLD),
        ..BudgetConfig::default()
    };
    let usage = || -> ! {
        eprintln!(
            "usage: night [--seeds N] [--first-seed N] [--hours H] [--server] [--block] [--live] [--exact-running] [--size-hint SIGMA] [--sizes SIGMA] [--calibrate] [--quantile Q] [--margin M] [--cap-factor F] [--no-retry-floor] [--no-tail] [--resume-keeps F] [--cap-keeps F]\n       night --trace FILE.csv [--history EARLIER.csv…] [--slots N] [--threshold USD] [--window-min M] [--hours H] [--server] [--block] …\n       night --write-traces DIR [--first-seed N] [--seeds N]\n       --kind lognormal,heavy,bimodal,uniform,projects"
        );
        std::process::exit(2);
    };
    let mut args = std::env::args().skip(1).peekable();
    while let Some(a) = args.next() {
        if a == "--history" {
            // Every file up to the next flag: the earlier nights, oldest first.
            while let Some(f) = args.next_if(|f| !f.starts_with("--")) {
                history_files.push(f);
            }
            if history_files.is_empty() {
                eprintln!("night: --history needs a file");
                usage()
            }
            continue;
        }
        let mut value = |name: &str| {
            args.next().unwrap_or_else(|| {
                eprintln!("night: {name} needs a value");
                usage()
            })
        };
        let mut number = |name: &str| {
            let v = value(name);
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x > 0.0)
                .unwrap_or_else(|| {
                    eprintln!("night: {name}: {v:?} is not a positive number");
                    usage()
                })
        };
        match a.as_str() {
            "--seeds" => seeds = value("--seeds").parse().unwrap_or(seeds),
            "--hours" => hours = value("--hours").parse().unwrap_or(hours),
            "--server" => sees.server = true,
            "--block" => setup.block = true,
            "--live" => sees.live = true,
            "--exact-running" => sees.exact_running = true,
            "--size-hint" => sees.size_hint = Some(number("--size-hint")),
            "--sizes" => sizes = Some(number("--sizes")),
            "--first-seed" => first_seed = value("--first-seed").parse().unwrap_or(first_seed),
            "--no-retry-floor" => sees.retry_floor = false,
            "--no-tail" => cfg.weigh_tail = false,
            flag @ ("--resume-keeps" | "--cap-keeps") => {
                let v = value(flag);
                let share = v
                    .parse::<f64>()
                    .ok()
                    .filter(|x| (-1.0..=1.0).contains(x))
                    .unwrap_or_else(|| {
                        eprintln!("night: {flag}: {v:?} is not a share between -1 and 1");
                        usage()
                    });
                if flag == "--resume-keeps" {
                    sees.resume_keeps = share;
                } else {
                    cap_keeps = Some(share);
                }
            }
            "--quantile" => cfg.estimate_quantile = value("--quantile").parse().unwrap_or(0.75),
            "--margin" => cfg.margin = value("--margin").parse().unwrap_or(0.0),
            "--cap-factor" => cfg.max_budget_factor = value("--cap-factor").parse().unwrap_or(3.0),
            "--trace" => trace_file = Some(value("--trace")),
            "--calibrate" => calibrate = true,
            "--kind" => {
                kinds = Some(
                    value("--kind")
                        .split(',')
                        .map(|k| k.trim().to_string())
                        .collect(),
                );
            }
            "--write-traces" => write_dir = Some(value("--write-traces")),
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            "--slots" => setup.slots = number("--slots") as usize,
            "--threshold" => setup.threshold = number("--threshold"),
            #[allow(clippy::cast_possible_truncation)]
            "--window-min" => setup.window_min = number("--window-min") as i64,
            _ => usage(),
        }
    }
    cfg.threshold_usd = Threshold::Usd(setup.threshold);
    setup.real = setup.threshold;
    sees.cap_keeps = cap_keeps.unwrap_or(sees.resume_keeps);
    cfg.window_secs = u32::try_from(setup.window_min * 60).unwrap_or(u32::MAX);
    let minutes = hours * 60;
    if let Some(path) = trace_file {
        let tr = match read_trace(&path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("night: {e}");
                std::process::exit(2);
            }
        };
        println!(
            "night: the trace {path}: {} lines, {} steps, ${:.2} of work; {} slots, threshold ${} per {}-minute {}, {hours}h",
            tr.lines.len(),
            tr.lines.iter().map(|l| l.steps.len()).sum::<usize>(),
            tr.demand,
            setup.slots,
            setup.threshold,
            setup.window_min,
            setup.window_name()
        );
        let mut warm = tr.clone();
        let count = history_files.len();
        for (k, f) in history_files.iter().enumerate() {
            let past = match read_trace(f) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("night: --history {e}");
                    std::process::exit(2);
                }
            };
            // The last file is last night, the one before it the night before, …
            #[allow(clippy::cast_possible_wrap)]
            let days = (count - k) as i64;
            warm.history.extend(runs_of(&past.lines, -days * 24 * 60));
        }
        warm.history.sort_by_key(|r| r.finished_ms);
        if count > 0 {
            println!(
                "history: {count} earlier nights, {} runs ({})",
                warm.history.len(),
                history_files.join(", ")
            );
        }
        header();
        let mut replays = vec![("trace cold", tr)];
        if count > 0 {
            replays.push(("trace warm", warm));
        }
        for (name, tr) in &replays {
            for mode in Mode::ALL {
                row(
                    name,
                    mode,
                    std::slice::from_ref(tr),
                    &cfg,
                    (minutes, setup),
                    sees,
                );
            }
        }
        return;
    }
    if let Some(dir) = write_dir {
        // The "projects" nights as trace files: tonight and its earlier nights, for
        // `--trace … --history …` and to keep in docs/traces.
        for seed in first_seed..first_seed + seeds {
            let tr = projects(seed, 0, setup.threshold, sizes);
            let mut files = vec![(format!("{dir}/projects-{seed}.csv"), tr.lines)];
            for k in 1..=WARM_NIGHTS {
                let past = synthetic::projects_earlier(seed, k, setup.threshold, sizes);
                files.push((format!("{dir}/projects-{seed}-earlier-{k}.csv"), past));
            }
            for (path, lines) in files {
                if let Err(e) = write_trace(&path, &lines) {
                    eprintln!("night: {e}");
                    std::process::exit(2);
                }
                println!("night: wrote {path}");
            }
        }
        return;
    }
    let wanted = |name: &str| kinds.as_ref().is_none_or(|k| k.iter().any(|k| k == name));
    println!(
        "night: {LINES} lines × 8 steps (projects: 16 lines of 4–11 steps over 5 projects), {} slots, threshold ${} per {}h {}, {hours}h, seeds {first_seed}–{} per distribution",
        setup.slots,
        setup.threshold,
        setup.window_min / 60,
        setup.window_name(),
        first_seed + seeds - 1
    );
    println!(
        "policy: estimate = p{:.0} × (1 + {}), cap = estimate × {} (× 2 while a kind has few runs), server utilisation {}, live cost {}{}",
        cfg.estimate_quantile * 100.0,
        cfg.margin,
        cfg.max_budget_factor,
        if sees.server { "on" } else { "off" },
        if sees.live { "on" } else { "off" },
        if sees.exact_running {
            ", running steps' true costs known"
        } else {
            ""
        },
    );
    if let Some(sigma) = sizes {
        println!(
            "planner sizes: each executor step sized xs…xl, off its true cost by a lognormal error of σ {sigma}"
        );
    }
    if sees.resume_keeps != 0.0 || sees.cap_keeps != 0.0 {
        println!(
            "a cut step's resumed session keeps {} of its spend after a limit hit, {} after a cap miss",
            sees.resume_keeps, sees.cap_keeps
        );
    }
    if calibrate {
        println!(
            "calibration: the real limit off the configured ${THRESHOLD} by each offset; \"auto\" between ${} and ${}",
            cfg.threshold_floor_usd, cfg.threshold_ceiling_usd
        );
        for dist in [Dist::Lognormal, Dist::Heavy, Dist::Bimodal, Dist::Uniform] {
            println!("{}", dist.name());
            let traces: Vec<Trace> = (first_seed..first_seed + seeds)
                .map(|s| trace(dist, s, sizes))
                .collect();
            calibration_table(&traces, &cfg, (minutes, setup.block), sees);
        }
        return;
    }
    header();
    for dist in [Dist::Lognormal, Dist::Heavy, Dist::Bimodal, Dist::Uniform] {
        if !wanted(dist.key()) {
            continue;
        }
        let traces: Vec<Trace> = (first_seed..first_seed + seeds)
            .map(|s| trace(dist, s, sizes))
            .collect();
        for mode in Mode::ALL {
            row(dist.name(), mode, &traces, &cfg, (minutes, setup), sees);
        }
    }
    if wanted("projects") {
        // Cold (a first night of these projects) and warm (after three earlier nights).
        for (name, earlier) in [("projects cold", 0), ("projects warm", WARM_NIGHTS)] {
            let traces: Vec<Trace> = (first_seed..first_seed + seeds)
                .map(|s| projects(s, earlier, setup.threshold, sizes))
                .collect();
            for mode in Mode::ALL {
                row(name, mode, &traces, &cfg, (minutes, setup), sees);
            }
        }
    }
}
