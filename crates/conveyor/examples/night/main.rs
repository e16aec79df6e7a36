//! The night simulator: seeded synthetic nights of lines and step costs replayed through the
//! real budget policy (`conveyor::budget::Policy`, the code the daemon's scheduler calls) with
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
//! Usage: `cargo run --release -p conveyor --example night -- [--seeds N] [--first-seed N]
//! [--hours H] [--server] [--block] [--live] [--sizes SIGMA] [--no-retry-floor]` (`--block`:
//! the account's window is a fixed block that opens with the first spending and empties at its
//! close, which the server's `resetsAt` reports, instead of a rolling one; `--live`: the running
//! steps' spend so far, as the daemon meters it; `--sizes`: the planner sizes each executor
//! step xs…xl, off its true cost by a lognormal error of σ, and the policy learns cost per
//! size as the daemon does; `--no-retry-floor`: attempts after a miss estimated by their
//! kind alone); diagnostics `--exact-running` (the running steps' true costs), `--size-hint
//! SIGMA` (each step's cost known before it runs, off by a lognormal error of σ) and
//! `--calibrate` (nights whose real limit differs from the threshold); or
//! `… -- --trace FILE.csv [--slots N] [--threshold USD] [--window-min M] [--hours H]` to replay
//! a night written down (`line,step,kind,cost_usd,minutes`; `docs/benchmarks/budget.md` has the
//! format).

// A command-line report: its output is the point.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod account;
mod calibrate;
mod synthetic;
mod trace;

use conveyor::budget::{Class, Decision, Outcome, Policy, Reserve, Run, Snapshot, calibration};
use conveyor::config::{BudgetConfig, Threshold};
use conveyor_api::StepKind;

use account::{Ledger, Setup};
use calibrate::calibration_table;
use synthetic::{Dist, Rng, trace};
use trace::read_trace;

const MIN_MS: i64 = 60_000;
const SLOTS: usize = 3;
const LINES: usize = 14;
const THRESHOLD: f64 = 50.0;
const WINDOW_MIN: i64 = 300;

/// What the policy is shown of the night.
#[derive(Debug, Clone, Copy)]
struct Sees {
    /// The CLI's `rate_limit_event`: the account's utilisation of the window, every minute.
    server: bool,
    /// The running steps' spend so far (the daemon's live cost from the stream's usage).
    live: bool,
    /// The running steps' true costs (what the live cost could tell at best; a diagnostic).
    exact_running: bool,
    /// A size for each step before it runs, off its true cost by a lognormal error of this σ
    /// (what a planner's own estimate of each step could give; a diagnostic).
    size_hint: Option<f64>,
    /// An attempt after a miss is estimated at least at what the miss spent.
    retry_floor: bool,
}

/// Cap misses of one step before its line is left for Anton (as the daemon does).
const CAP_MISSES: u32 = 3;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Policy,
    NoPacking,
    Fcfs,
    /// The policy's rule and packing with every step's true cost as its estimate, its true rate
    /// and its spend so far: what perfect estimates would give (a feasible schedule, so a lower
    /// bound on the optimum).
    Oracle,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Policy => "policy",
            Mode::NoPacking => "no-packing",
            Mode::Fcfs => "fcfs",
            Mode::Oracle => "oracle",
        }
    }
}

#[derive(Debug, Clone)]
struct Step {
    kind: StepKind,
    /// The planner's size of it (`--sizes`).
    size: Option<conveyor_api::StepSize>,
    cost: f64,
    minutes: i64,
}

#[derive(Debug, Clone)]
struct Line {
    project: String,
    priority: u32,
    steps: Vec<Step>,
    next: usize,
    cap_misses: u32,
    abandoned: bool,
    running: Option<Running>,
}

#[derive(Debug, Clone)]
struct Running {
    started: i64,
    reserve: Reserve,
    cap: Option<f64>,
    charged: f64,
}

/// One night's trace: the lines and the history of earlier nights.
#[derive(Debug, Clone)]
struct Trace {
    /// The night's seed (`--first-seed` counts these); none for a trace file.
    seed: Option<u64>,
    lines: Vec<Line>,
    history: Vec<Run>,
    demand: f64,
    max_rate: f64,
}

#[derive(Debug, Default, Clone)]
struct Tally {
    work: f64,
    steps: u32,
    spent: f64,
    wasted: f64,
    overshoots: u32,
    max_window: f64,
    limit_hits: u32,
    cap_misses: u32,
    over_admitted: u32,
    bound: f64,
    /// Calibration: observations made, the last one after which the proposal was more than
    /// 10% off the real limit, and the proposal at dawn.
    observations: u32,
    unsettled: u32,
    proposal: f64,
}

/// What the policy learns a step's cost from: its kind, and its size when the planner gave one.
fn class(s: &Step) -> Class {
    Class {
        kind: s.kind,
        size: s.size,
    }
}

fn simulate(
    tr: &Trace,
    mode: Mode,
    cfg: &BudgetConfig,
    (minutes, setup): (i64, Setup),
    sees: Sees,
) -> Tally {
    let Sees {
        server,
        live,
        exact_running,
        size_hint,
        retry_floor,
    } = sees;
    let Setup {
        slots,
        window_min,
        real,
        ..
    } = setup;
    let policy = Policy::new(cfg.clone());
    let mut lines = tr.lines.clone();
    let mut history = tr.history.clone();
    let mut ledger = Ledger::new(window_min, setup.block);
    let mut park_until = i64::MIN;
    // Observed sizes of the window, and what they propose.
    let mut sizes: Vec<f64> = Vec::new();
    let mut proposal: Option<conveyor_api::Calibration> = None;
    let mut over = false;
    let mut t = Tally::default();
    let windows = (minutes + window_min - 1) / window_min;
    #[allow(clippy::cast_precision_loss)]
    let slot_bound = slots as f64 * minutes as f64 * tr.max_rate;
    #[allow(clippy::cast_precision_loss)]
    let budget_bound = real * windows as f64;
    t.bound = tr.demand.min(budget_bound).min(slot_bound);
    let mut order: Vec<usize> = (0..lines.len()).collect();
    if mode != Mode::Fcfs {
        // Priority first; the older line first among equals.
        order.sort_by_key(|i| (std::cmp::Reverse(lines[*i].priority), *i));
    }
    for now in 0..minutes {
        // 1. The running steps accrue their cost for this minute; caps and ends.
        let mut charged_now = 0.0;
        for l in &mut lines {
            let Some(r) = l.running.as_mut() else {
                continue;
            };
            let s = &l.steps[l.next];
            #[allow(clippy::cast_precision_loss)]
            let per_min = s.cost / s.minutes as f64;
            let elapsed = now - r.started;
            if let Some(cap) = r.cap
                && r.charged + per_min > cap
            {
                charged_now += cap - r.charged;
                t.wasted += cap;
                t.cap_misses += 1;
                history.push(Run {
                    kind: s.kind,
                    project: l.project.clone(),
                    step_id: format!("{}/{}", l.project, l.next),
                    size: s.size,
                    cost_usd: cap,
                    started_ms: r.started * MIN_MS,
                    finished_ms: now * MIN_MS,
                    outcome: Outcome::Miss,
                });
                l.cap_misses += 1;
                l.abandoned = l.cap_misses >= CAP_MISSES;
                l.running = None;
                continue;
            }
            r.charged += per_min;
            charged_now += per_min;
            if elapsed >= s.minutes {
                t.work += s.cost;
                t.steps += 1;
                history.push(Run {
                    kind: s.kind,
                    project: l.project.clone(),
                    step_id: format!("{}/{}", l.project, l.next),
                    size: s.size,
                    cost_usd: s.cost,
                    started_ms: r.started * MIN_MS,
                    finished_ms: now * MIN_MS,
                    outcome: Outcome::Done,
                });
                l.next += 1;
                l.cap_misses = 0;
                l.running = None;
            }
        }
        t.spent += charged_now;
        ledger.advance(now);
        if charged_now > 0.0 {
            ledger.charge(now, charged_now);
        }
        // 2. The account's limit: over it, every running step is cut.
        t.max_window = t.max_window.max(ledger.sum / real);
        if ledger.sum > real + 1e-9 {
            if !over {
                t.overshoots += 1;
                t.limit_hits += 1;
                over = true;
                park_until = ledger.drained_to(0.75 * real);
                for l in &mut lines {
                    if let Some(r) = l.running.take() {
                        t.wasted += r.charged;
                        history.push(Run {
                            kind: l.steps[l.next].kind,
                            project: l.project.clone(),
                            step_id: format!("{}/{}", l.project, l.next),
                            size: l.steps[l.next].size,
                            cost_usd: r.charged,
                            started_ms: r.started * MIN_MS,
                            finished_ms: now * MIN_MS,
                            outcome: Outcome::Miss,
                        });
                    }
                }
            }
        } else {
            over = false;
        }
        // 3. Calibration: while steps run, the CLI reports the server's utilisation (two
        // decimals); our own count of the window over it is one observation of its size.
        let busy = lines.iter().filter(|l| l.running.is_some()).count();
        if busy > 0 && mode == Mode::Policy {
            // As the daemon counts it (`store::runs::spent_since`, from the server's reset less
            // the span): a run that began before the window counts for its share of time
            // inside it.
            let since = (ledger.resets_at().unwrap_or(now) - window_min) * MIN_MS;
            #[allow(clippy::cast_precision_loss)]
            let mut own: f64 = history
                .iter()
                .filter(|r| r.finished_ms > since)
                .map(|r| {
                    let inside = (r.finished_ms - since) as f64
                        / (r.finished_ms - r.started_ms).max(1) as f64;
                    r.cost_usd * inside.min(1.0)
                })
                .sum();
            if live {
                own += lines
                    .iter()
                    .filter_map(|l| l.running.as_ref().map(|r| r.charged))
                    .sum::<f64>();
            }
            let util = (ledger.sum / real * 100.0).round() / 100.0;
            if let Some(size) = calibration::observe(own, util) {
                sizes.push(size);
                let c = calibration::propose(&sizes).expect("an observation");
                if (c.proposed_usd - real).abs() > 0.1 * real {
                    t.unsettled = u32::try_from(sizes.len()).unwrap_or(u32::MAX);
                }
                proposal = Some(c);
            }
        }
        // 4. Admission.
        let mut free = slots.saturating_sub(busy);
        if free == 0 || now < park_until {
            continue;
        }
        let mut snap = Snapshot {
            now_ms: now * MIN_MS,
            runs: history.clone(),
            running: lines
                .iter()
                .filter_map(|l| {
                    let r = l.running.as_ref()?;
                    let started_ms = Some(r.started * MIN_MS);
                    let s = &l.steps[l.next];
                    if mode == Mode::Oracle {
                        // Everything known: its cost, its rate and what it has spent.
                        return Some(Reserve {
                            live_usd: r.charged,
                            started_ms,
                            ..r.reserve
                        });
                    }
                    if exact_running {
                        // What the live cost could tell at best: the step's true cost.
                        return Some(Reserve {
                            estimate_usd: s.cost,
                            live_usd: r.charged,
                            rate_usd_min: r.reserve.rate_usd_min,
                            started_ms,
                        });
                    }
                    Some(if live {
                        Reserve {
                            started_ms,
                            ..policy.running(
                                &history,
                                class(s),
                                &l.project,
                                r.reserve.estimate_usd,
                                r.charged,
                            )
                        }
                    } else {
                        r.reserve
                    })
                })
                .collect(),
            // The CLI's `rate_limit_event`: the account's own utilisation of the window.
            server: server.then(|| conveyor::budget::ServerView {
                observed_ms: now * MIN_MS,
                window: Some(conveyor::budget::ServerWindow {
                    utilization: ledger.sum / real,
                    resets_at_ms: ledger.resets_at().map(|m| m * MIN_MS),
                }),
                ..Default::default()
            }),
            // Never parked yet: no park (its start, `i64::MIN`, would overflow in minutes).
            park_until: (park_until != i64::MIN).then(|| park_until.saturating_mul(MIN_MS)),
            live: live || mode == Mode::Oracle,
            window_calibration: proposal.clone(),
        };
        for &i in &order {
            if free == 0 {
                break;
            }
            let l = &mut lines[i];
            if l.running.is_some() || l.abandoned || l.next >= l.steps.len() {
                continue;
            }
            let kind = l.steps[l.next].kind;
            let class = class(&l.steps[l.next]);
            let reserve = if mode == Mode::Oracle {
                let s = &l.steps[l.next];
                #[allow(clippy::cast_precision_loss)]
                let rate_usd_min = s.cost / s.minutes as f64;
                Reserve {
                    rate_usd_min,
                    ..Reserve::fixed(s.cost)
                }
            } else if let Some(sigma) = size_hint {
                let step_id = format!("{}/{}", l.project, l.next);
                let base = policy.reserve_for(&snap.runs, kind, &l.project, Some(&step_id));
                let mut rng = Rng(0x51_2E ^ ((i as u64) << 20) ^ l.next as u64);
                let hint =
                    l.steps[l.next].cost * (sigma * rng.normal() - sigma * sigma / 2.0).exp();
                let m = 1.0 + cfg.margin;
                let floor = policy.retry_floor(&snap.runs, &step_id);
                let estimate = (hint * (1.2816 * sigma).exp() * m).max(floor);
                Reserve {
                    estimate_usd: estimate,
                    ..base
                }
            } else {
                policy.reserve_for(
                    &snap.runs,
                    class,
                    &l.project,
                    retry_floor
                        .then(|| format!("{}/{}", l.project, l.next))
                        .as_deref(),
                )
            };
            let (estimate, cap) = match mode {
                Mode::Fcfs => (Reserve::fixed(0.0), None),
                Mode::Policy | Mode::NoPacking | Mode::Oracle => {
                    match policy.decide_for(&snap, kind, reserve) {
                        Decision::Start { estimate_usd } => {
                            // Over-admission: the policy's own count above a threshold (only the
                            // "larger than the pool, into an empty pool" rule may do it).
                            for p in policy.pools(&snap) {
                                if policy.peak(&p, &snap, reserve) > p.threshold_usd + 1e-9 {
                                    t.over_admitted += 1;
                                }
                            }
                            snap.running.push(reserve);
                            let cap = if mode == Mode::Oracle {
                                None
                            } else {
                                policy
                                    .admitted(&snap.runs, kind, &l.project, estimate_usd)
                                    .cap_usd
                            };
                            (reserve, cap)
                        }
                        Decision::Wait { .. } if mode == Mode::NoPacking => break,
                        Decision::Wait { .. } => continue,
                    }
                }
            };
            l.running = Some(Running {
                started: now,
                reserve: estimate,
                cap,
                charged: 0.0,
            });
            free -= 1;
        }
    }
    t.observations = u32::try_from(sizes.len()).unwrap_or(u32::MAX);
    t.proposal = proposal.map_or(0.0, |c| c.proposed_usd);
    if (t.proposal - real).abs() > 0.1 * real {
        t.unsettled = t.observations;
    }
    // Work in flight at dawn counts pro rata (for every policy alike).
    for l in &lines {
        if let Some(r) = &l.running {
            t.work += r.charged;
        }
    }
    t
}

/// The table's header.
fn header() {
    println!(
        "{:<15} {:<10} {:>8} {:>6} {:>7} {:>8} {:>8} {:>7} {:>6} {:>5} {:>5} {:>5} {:>5}",
        "distribution",
        "policy",
        "work $",
        "steps",
        "util %",
        "% bound",
        "spent $",
        "waste $",
        "max w%",
        "over",
        "hits",
        "caps",
        "adm>T"
    );
}

/// One row: a policy over the traces, averaged.
fn row(
    name: &str,
    mode: Mode,
    traces: &[Trace],
    cfg: &BudgetConfig,
    (minutes, setup): (i64, Setup),
    sees: Sees,
) {
    let mut sum = Tally::default();
    let mut worst_over_admit = 0;
    // Nights on which the policy (or the oracle) did less work than first come, first served,
    // and the largest shortfall, % of FCFS's work that night.
    let mut below_fcfs = 0;
    let mut worst_below: f64 = 0.0;
    let mut worst_seed = None;
    let against_fcfs = matches!(mode, Mode::Policy | Mode::Oracle);
    for tr in traces {
        let r = simulate(tr, mode, cfg, (minutes, setup), sees);
        if against_fcfs {
            let fcfs = simulate(tr, Mode::Fcfs, cfg, (minutes, setup), sees).work;
            if r.work + 1e-9 < fcfs {
                below_fcfs += 1;
                let short = 100.0 * (fcfs - r.work) / fcfs;
                if short > worst_below {
                    worst_below = short;
                    worst_seed = tr.seed;
                }
            }
        }
        sum.work += r.work;
        sum.steps += r.steps;
        sum.spent += r.spent;
        sum.wasted += r.wasted;
        sum.overshoots += r.overshoots;
        sum.max_window = sum.max_window.max(r.max_window);
        sum.limit_hits += r.limit_hits;
        sum.cap_misses += r.cap_misses;
        sum.bound += r.bound;
        worst_over_admit = worst_over_admit.max(r.over_admitted);
    }
    #[allow(clippy::cast_precision_loss)]
    let n = traces.len() as f64;
    #[allow(clippy::cast_precision_loss)]
    let capacity = setup.threshold * ((minutes + setup.window_min - 1) / setup.window_min) as f64;
    println!(
        "{:<15} {:<10} {:>8.2} {:>6.1} {:>7.1} {:>8.1} {:>8.2} {:>7.2} {:>6.0} {:>5} {:>5} {:>5} {:>5}",
        name,
        mode.name(),
        sum.work / n,
        f64::from(sum.steps) / n,
        100.0 * sum.work / n / capacity,
        100.0 * sum.work / sum.bound,
        sum.spent / n,
        sum.wasted / n,
        100.0 * sum.max_window,
        sum.overshoots,
        sum.limit_hits,
        sum.cap_misses,
        if mode == Mode::Fcfs {
            "-".to_string()
        } else {
            worst_over_admit.to_string()
        }
    );
    if against_fcfs && below_fcfs > 0 {
        // The worst night's seed, to replay it alone (`--first-seed N --seeds 1`).
        let seed = worst_seed.map_or(String::new(), |n| format!(" (seed {n})"));
        println!(
            "{:<15} {} below fcfs on {below_fcfs} of {} nights, by {worst_below:.1}% at most{seed}",
            "",
            mode.name(),
            traces.len()
        );
    }
}

fn main() {
    let mut seeds = 10u64;
    let mut hours = 10i64;
    let mut sees = Sees {
        server: false,
        live: false,
        exact_running: false,
        size_hint: None,
        retry_floor: true,
    };
    let mut first_seed = 1u64;
    let mut sizes: Option<f64> = None;
    let mut trace_file: Option<String> = None;
    let mut calibrate = false;
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
            "usage: night [--seeds N] [--first-seed N] [--hours H] [--server] [--block] [--live] [--exact-running] [--size-hint SIGMA] [--sizes SIGMA] [--calibrate] [--quantile Q] [--margin M] [--cap-factor F] [--no-retry-floor]\n       night --trace FILE.csv [--slots N] [--threshold USD] [--window-min M] [--hours H] [--server] [--block] …"
        );
        std::process::exit(2);
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
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
            "--quantile" => cfg.estimate_quantile = value("--quantile").parse().unwrap_or(0.75),
            "--margin" => cfg.margin = value("--margin").parse().unwrap_or(0.0),
            "--cap-factor" => cfg.max_budget_factor = value("--cap-factor").parse().unwrap_or(3.0),
            "--trace" => trace_file = Some(value("--trace")),
            "--calibrate" => calibrate = true,
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
        header();
        for mode in [Mode::Policy, Mode::NoPacking, Mode::Fcfs, Mode::Oracle] {
            row(
                "trace",
                mode,
                std::slice::from_ref(&tr),
                &cfg,
                (minutes, setup),
                sees,
            );
        }
        return;
    }
    println!(
        "night: {LINES} lines × 8 steps, {} slots, threshold ${} per {}h {}, {hours}h, seeds {first_seed}–{} per distribution",
        setup.slots,
        setup.threshold,
        setup.window_min / 60,
        setup.window_name(),
        first_seed + seeds - 1
    );
    println!(
        "policy: estimate = p{:.0} × (1 + {}), cap = estimate × {}, server utilisation {}, live cost {}{}",
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
        let traces: Vec<Trace> = (first_seed..first_seed + seeds)
            .map(|s| trace(dist, s, sizes))
            .collect();
        for mode in [Mode::Policy, Mode::NoPacking, Mode::Fcfs, Mode::Oracle] {
            row(dist.name(), mode, &traces, &cfg, (minutes, setup), sees);
        }
    }
}
