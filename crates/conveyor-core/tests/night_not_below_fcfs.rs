//! The budget policy never does less work than first come, first served on a night of the
//! simulator (`examples/night`, whose modules this test compiles as its own): every kind of
//! night, in the daemon's case (the live cost, the block account with the server's word and
//! its `resetsAt`, the planner's sizes off by σ 0.5), on the first seeds of each kind. The
//! benchmark (`scripts/bench-budget.sh`, release) covers a hundred nights a kind; this runs in
//! debug within the normal suite, so it covers fewer (`SEEDS`), chosen as the first ones, not
//! picked. Ignored while the policy is still below FCFS on one of these nights (run it with
//! `cargo test -p conveyor-core --test night_not_below_fcfs -- --ignored`): un-ignore it with
//! the fix, never by dropping the night.
#![allow(dead_code, clippy::print_stderr)]

#[path = "../examples/night/account.rs"]
mod account;
#[path = "../examples/night/model.rs"]
mod model;
#[path = "../examples/night/sim.rs"]
mod sim;
#[path = "../examples/night/synthetic.rs"]
mod synthetic;

use conveyor_core::budget::{BudgetConfig, Threshold};

use account::Setup;
use model::{SLOTS, THRESHOLD, Trace, WINDOW_MIN};
use sim::{Mode, Sees, simulate};
use synthetic::{Dist, projects, trace};

/// Nights per kind: the first seeds, as many as a busy two-core machine runs in debug in
/// well under a minute (six kinds × `SEEDS` nights × two modes).
const SEEDS: u64 = 3;
const HOURS: i64 = 10;
/// Earlier nights a warm "projects" night starts from (as the benchmark's).
const WARM_NIGHTS: usize = 3;

#[test]
#[ignore = "fails today: the policy is below FCFS on projects cold seed 1 (cap misses of cold Pareto executors); docs/benchmarks/budget.md"]
fn the_policy_does_at_least_as_much_work_as_fcfs_on_every_night_of_every_kind() {
    let setup = Setup {
        slots: SLOTS,
        threshold: THRESHOLD,
        window_min: WINDOW_MIN,
        real: THRESHOLD,
        block: true,
    };
    let cfg = BudgetConfig {
        window_secs: u32::try_from(WINDOW_MIN * 60).expect("a window in seconds"),
        threshold_usd: Threshold::Usd(THRESHOLD),
        ..BudgetConfig::default()
    };
    let sees = Sees {
        server: true,
        live: true,
        exact_running: false,
        size_hint: None,
        retry_floor: true,
        resume_keeps: 0.0,
    };
    let sizes = Some(0.5);
    let mut nights: Vec<(String, Trace)> = Vec::new();
    for seed in 1..=SEEDS {
        for dist in [Dist::Lognormal, Dist::Heavy, Dist::Bimodal, Dist::Uniform] {
            nights.push((dist.name().to_string(), trace(dist, seed, sizes)));
        }
        nights.push(("projects cold".into(), projects(seed, 0, THRESHOLD, sizes)));
        nights.push((
            "projects warm".into(),
            projects(seed, WARM_NIGHTS, THRESHOLD, sizes),
        ));
    }
    let mut below = Vec::new();
    for (kind, tr) in &nights {
        let run = |mode| simulate(tr, mode, &cfg, (HOURS * 60, setup), sees);
        let (policy, fcfs) = (run(Mode::Policy), run(Mode::Fcfs));
        // Both count in-flight work at dawn pro rata, so neither gains from the night's end.
        if policy.work + 1e-9 < fcfs.work {
            below.push(format!(
                "{kind}, seed {}: policy ${:.2} < fcfs ${:.2} ({} limit hits, ${:.2} wasted; fcfs {} hits, ${:.2})",
                tr.seed.unwrap_or_default(),
                policy.work,
                fcfs.work,
                policy.limit_hits,
                policy.wasted,
                fcfs.limit_hits,
                fcfs.wasted
            ));
        }
    }
    assert!(
        below.is_empty(),
        "the policy did less work than FCFS on {} of {} nights:\n{}",
        below.len(),
        nights.len(),
        below.join("\n")
    );
}
