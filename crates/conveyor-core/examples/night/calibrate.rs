//! `--calibrate`: nights whose real limit is off the configured threshold.

use conveyor_core::budget::{BudgetConfig, Threshold};

use super::account::Setup;
use super::model::{SLOTS, THRESHOLD, Trace, WINDOW_MIN};
use super::sim::{Mode, Sees, Tally, simulate};

/// Calibration on nights whose real limit is off the configured threshold by each of
/// `OFFSETS`: after how many observations the proposal stays within 10% of the real limit,
/// and what the night does with the configured threshold and with `"auto"`.
pub(super) fn calibration_table(
    traces: &[Trace],
    cfg: &BudgetConfig,
    (minutes, block): (i64, bool),
    sees: Sees,
) {
    const OFFSETS: [f64; 6] = [-0.4, -0.2, 0.0, 0.2, 0.4, 0.6];
    println!(
        "{:>7} {:>7} {:>9} {:>9} {:>9} {:>9} {:>8} {:>9} {:>6} {:>9} {:>6}",
        "offset",
        "real $",
        "obs mean",
        "obs max",
        "obs/night",
        "final $",
        "error %",
        "fixed %b",
        "hits",
        "auto %b",
        "hits"
    );
    for d in OFFSETS {
        let real = THRESHOLD * (1.0 + d);
        let setup = Setup {
            slots: SLOTS,
            threshold: THRESHOLD,
            window_min: WINDOW_MIN,
            real,
            block,
        };
        let auto_cfg = BudgetConfig {
            threshold_usd: Threshold::Auto,
            ..cfg.clone()
        };
        let (mut settled, mut worst, mut obs, mut fin, mut err) = (0.0, 0u32, 0.0, 0.0, 0.0_f64);
        let (mut fixed, mut auto) = (Tally::default(), Tally::default());
        for tr in traces {
            let f = simulate(tr, Mode::Policy, cfg, (minutes, setup), sees);
            let a = simulate(tr, Mode::Policy, &auto_cfg, (minutes, setup), sees);
            // The number of observations after which it stayed within 10%.
            let n = f.unsettled + 1;
            settled += f64::from(n);
            worst = worst.max(n);
            obs += f64::from(f.observations);
            fin += f.proposal;
            err = err.max((f.proposal - real).abs() / real);
            for (sum, r) in [(&mut fixed, &f), (&mut auto, &a)] {
                sum.work += r.work;
                sum.bound += r.bound;
                sum.limit_hits += r.limit_hits;
            }
        }
        #[allow(clippy::cast_precision_loss)]
        let n = traces.len() as f64;
        println!(
            "{:>+6.0}% {:>7.1} {:>9.1} {:>9} {:>9.0} {:>9.2} {:>8.1} {:>9.1} {:>6} {:>9.1} {:>6}",
            d * 100.0,
            real,
            settled / n,
            worst,
            obs / n,
            fin / n,
            100.0 * err,
            100.0 * fixed.work / fixed.bound,
            fixed.limit_hits,
            100.0 * auto.work / auto.bound,
            auto.limit_hits
        );
    }
}
