//! The pool's real size, found rather than invented (the seed's «Калибровка»): every
//! `rate_limit_event` that gives a window's utilisation is one observation of it, our own
//! spending in that window at that moment ÷ the utilisation.
//!
//! Pure, as the policy: the daemon records observations as the CLI reports them (`calibration`
//! table) and the night simulator feeds it its own; both ask [`propose`].
//!
//! Why a median and few observations: each observation's error comes from the utilisation's
//! rounding (two decimals: ±0.005 of a 0.3 utilisation is ±1.7%), from our count lagging the
//! server's (a call's cost is counted when its message starts), and from spending elsewhere on
//! the same account, which makes an observation too small. The median of the recent ones
//! ignores the odd one out, and a small utilisation (below [`MIN_UTILIZATION`]) is not taken
//! at all: its rounding alone could be a third of it.

use conveyor_api::Calibration;

/// Utilisations below this say too little (see the module's note).
pub const MIN_UTILIZATION: f64 = 0.05;
/// The proposal rests on at most this many recent observations...
pub const RECENT: usize = 20;
/// ...and on at least this many before `threshold_usd = "auto"` uses it.
pub const MIN_OBSERVATIONS: u32 = 3;

/// One observation's size, when it is one: our spending in the window ÷ the server's
/// utilisation of it.
pub fn observe(spent_usd: f64, utilization: f64) -> Option<f64> {
    ((MIN_UTILIZATION..=1.0).contains(&utilization) && spent_usd > 0.0)
        .then(|| spent_usd / utilization)
}

/// The proposal from observed sizes, newest last: the median of the last [`RECENT`], with
/// their spread; `None` without any.
pub fn propose(sizes: &[f64]) -> Option<Calibration> {
    let recent = &sizes[sizes.len().saturating_sub(RECENT)..];
    if recent.is_empty() {
        return None;
    }
    let mut s = recent.to_vec();
    s.sort_by(f64::total_cmp);
    let median = super::quantile::quantile(&s, 0.5);
    let mut dev: Vec<f64> = s.iter().map(|x| (x - median).abs()).collect();
    dev.sort_by(f64::total_cmp);
    Some(Calibration {
        observed_size_usd: median,
        // The observed size is the best estimate of the pool: the policy's own margins
        // (p90 estimates, the margin, the claims of running steps) keep a step's tail out
        // of it, as they do under a configured threshold.
        proposed_usd: median,
        spread_usd: 1.4826 * super::quantile::quantile(&dev, 0.5),
        observations: u32::try_from(recent.len()).unwrap_or(u32::MAX),
    })
}

/// The threshold `"auto"` gives: the proposal within the floor and the ceiling once it rests
/// on [`MIN_OBSERVATIONS`], else the floor.
pub fn auto_threshold(c: Option<&Calibration>, floor: f64, ceiling: f64) -> f64 {
    match c {
        Some(c) if c.observations >= MIN_OBSERVATIONS => c.proposed_usd.clamp(floor, ceiling),
        _ => floor,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_size_is_spent_over_utilisation_when_the_utilisation_says_enough() {
        assert_eq!(observe(15.0, 0.3), Some(50.0));
        assert_eq!(observe(1.0, 0.04), None, "too small to say");
        assert_eq!(observe(0.0, 0.5), None, "nothing of ours in it");
        assert_eq!(observe(10.0, 1.2), None, "not a utilisation");
    }

    #[test]
    fn the_proposal_is_the_median_of_the_recent_with_its_spread() {
        assert_eq!(propose(&[]), None);
        // An odd one out (the account used elsewhere) does not move the median.
        let c = propose(&[48.0, 50.0, 52.0, 20.0, 50.0]).unwrap();
        assert_eq!(c.observed_size_usd, 50.0);
        assert_eq!(c.proposed_usd, 50.0);
        assert_eq!(c.observations, 5);
        // Deviations 2, 0, 2, 30, 0: their median 2.
        assert!((c.spread_usd - 1.4826 * 2.0).abs() < 1e-9, "{c:?}");
        // Only the last RECENT count: old observations of another size are forgotten.
        let mut sizes = vec![10.0; 50];
        sizes.extend(std::iter::repeat_n(80.0, RECENT));
        let c = propose(&sizes).unwrap();
        assert_eq!((c.observed_size_usd, c.observations), (80.0, 20));
    }

    #[test]
    fn auto_is_the_floor_until_three_observations_then_the_proposal_within_bounds() {
        let c = |n: &[f64]| propose(n);
        assert_eq!(auto_threshold(None, 20.0, 100.0), 20.0);
        assert_eq!(auto_threshold(c(&[60.0, 61.0]).as_ref(), 20.0, 100.0), 20.0);
        assert_eq!(
            auto_threshold(c(&[60.0, 61.0, 59.0]).as_ref(), 20.0, 100.0),
            60.0
        );
        assert_eq!(
            auto_threshold(c(&[600.0, 610.0, 590.0]).as_ref(), 20.0, 100.0),
            100.0
        );
        assert_eq!(
            auto_threshold(c(&[6.0, 6.1, 5.9]).as_ref(), 20.0, 100.0),
            20.0
        );
    }
}
