//! The report's table: its header, and one row per distribution and mode, averaged over the
//! nights, with the nights on which the policy did less than first come, first served.

use conveyor_core::budget::BudgetConfig;

use super::account::Setup;
use super::model::Trace;
use super::sim::{Mode, Sees, Tally, simulate};

/// The table's header.
pub(super) fn header() {
    println!(
        "{:<15} {:<12} {:>8} {:>6} {:>7} {:>8} {:>8} {:>7} {:>6} {:>5} {:>5} {:>5} {:>5}",
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
pub(super) fn row(
    name: &str,
    mode: Mode,
    traces: &[Trace],
    cfg: &BudgetConfig,
    (minutes, setup): (i64, Setup),
    sees: Sees,
) {
    let mut sum = Tally::default();
    let mut worst_over_admit = 0;
    // Nights on which the policy (or the oracle) did less work than first come, first served
    // (in the queue's order, and in the order of arrival), and the largest shortfall.
    let mut below = [Below::default(), Below::default()];
    let against_fcfs = matches!(mode, Mode::Policy | Mode::Oracle);
    for tr in traces {
        let r = simulate(tr, mode, cfg, (minutes, setup), sees);
        if against_fcfs {
            for (b, base) in below.iter_mut().zip([Mode::Fcfs, Mode::FcfsArrival]) {
                let f = simulate(tr, base, cfg, (minutes, setup), sees);
                if r.work + 1e-9 < f.work && std::env::var_os("NIGHT_BELOW").is_some() {
                    // Each night below FCFS, to tell idling (less spent) from cuts (more wasted).
                    eprintln!(
                        "{name} {} seed {} < {}: work {:.2} < {:.2}; spent {:.2} / {:.2}; wasted {:.2} / {:.2}; hits {} / {}; caps {}",
                        mode.name(),
                        tr.seed.unwrap_or_default(),
                        base.name(),
                        r.work,
                        f.work,
                        r.spent,
                        f.spent,
                        r.wasted,
                        f.wasted,
                        r.limit_hits,
                        f.limit_hits,
                        r.cap_misses
                    );
                }
                b.count(&r, &f, tr.seed);
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
        "{:<15} {:<12} {:>8.2} {:>6.1} {:>7.1} {:>8.1} {:>8.2} {:>7.2} {:>6.0} {:>5} {:>5} {:>5} {:>5}",
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
        if matches!(mode, Mode::Fcfs | Mode::FcfsArrival) {
            "-".to_string()
        } else {
            worst_over_admit.to_string()
        }
    );
    for (b, base) in below.iter().zip([Mode::Fcfs, Mode::FcfsArrival]) {
        if against_fcfs && b.nights > 0 {
            // The worst night's seed, to replay it alone (`--first-seed N --seeds 1`).
            let seed = b.seed.map_or(String::new(), |n| format!(" (seed {n})"));
            println!(
                "{:<15} {} below {} on {} of {} nights, by {:.1}% at most{seed}",
                "",
                mode.name(),
                base.name(),
                b.nights,
                traces.len(),
                b.worst
            );
        }
    }
}

/// The nights a policy did less work than a baseline on, and the worst of them (% of the
/// baseline's work that night).
#[derive(Debug, Default)]
struct Below {
    nights: usize,
    worst: f64,
    seed: Option<u64>,
}

impl Below {
    fn count(&mut self, r: &Tally, base: &Tally, seed: Option<u64>) {
        if r.work + 1e-9 < base.work {
            self.nights += 1;
            let short = 100.0 * (base.work - r.work) / base.work;
            if short > self.worst {
                self.worst = short;
                self.seed = seed;
            }
        }
    }
}
