//! The report's table: its header, and one row per distribution and mode, averaged over the
//! nights, with the nights on which the policy did less than first come, first served.

use conveyor_core::budget::BudgetConfig;

use super::account::Setup;
use super::model::Trace;
use super::sim::{Mode, Sees, Tally, simulate};

/// The table's header.
pub(super) fn header() {
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
