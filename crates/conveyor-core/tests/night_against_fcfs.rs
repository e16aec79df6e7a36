//! The budget policy against first come, first served on the simulator's nights
//! (`examples/night`, whose modules this test compiles as its own), in the daemon's case (the
//! live cost, the block account with the server's word and its `resetsAt`, the planner's sizes
//! off by σ 0.5, the cut shares measured with the real CLI).
//!
//! Issue 35 asked for a test that fails whenever the policy does less work than FCFS on any
//! night. No policy that keeps the seed's rule (spent + running + the step's estimate within
//! the threshold) can pass that on every night: FCFS checks nothing, and on a night where the
//! steps its rule-breaking starts happen to fit, it does more. The first test here is such a
//! night, built by hand. The second is the nearest claim that holds: over the nights of every
//! kind the policy does more work than FCFS and throws less away, it never admits over the
//! threshold, and on no single night does it fall far below. FCFS runs the queue in its own
//! order (priority, then age), as the daemon would without the budget: the order of arrival,
//! ignoring Anton's priorities, is a different schedule, not a different admission
//! (`docs/benchmarks/budget.md`, "Against FCFS"). The benchmark (`scripts/bench-budget.sh`,
//! release) covers a hundred nights a kind; this runs in debug within the normal suite, so it
//! covers the first `SEEDS` of each kind, not picked ones.
#![allow(dead_code, clippy::print_stderr)]

#[path = "../examples/night/account.rs"]
mod account;
#[path = "../examples/night/model.rs"]
mod model;
#[path = "../examples/night/sim.rs"]
mod sim;
#[path = "../examples/night/synthetic.rs"]
mod synthetic;

use conveyor_api::StepKind;
use conveyor_core::budget::{BudgetConfig, Outcome, Run, Threshold};

use account::Setup;
use model::{Line, MIN_MS, SLOTS, Step, THRESHOLD, Trace, WINDOW_MIN};
use sim::{Mode, Sees, simulate};
use synthetic::{Dist, projects, trace};

/// Nights per kind: the first seeds, as many as a busy two-core machine runs in debug in
/// well under a minute (six kinds × `SEEDS` nights × two modes).
const SEEDS: u64 = 3;
const HOURS: i64 = 10;
/// Earlier nights a warm "projects" night starts from (as the benchmark's).
const WARM_NIGHTS: usize = 3;
/// The most the policy may fall below FCFS on one night, % of FCFS's work: about what one
/// limit hit in a block throws away when it cuts two heavy steps late. On a hundred nights of
/// each kind (seeds 1–100 and 101–200, the daemon's case with the measured cut shares) the worst
/// is 15.3% (heavy, seed 24).
const WORST_NIGHT_PCT: f64 = 20.0;

fn daemons_case() -> (Setup, BudgetConfig, Sees) {
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
        // The cut shares measured with the real CLI: a limit hit's resume keeps nothing, a cap
        // miss's, within the hour, about half (`docs/benchmarks/budget.md`).
        resume_keeps: 0.0,
        cap_keeps: 0.5,
    };
    (setup, cfg, sees)
}

#[test]
fn fcfs_does_more_than_the_seeds_rule_allows_on_a_night_whose_steps_all_happen_to_fit() {
    let (mut setup, mut cfg, sees) = daemons_case();
    // One slot and one five-hour block of $10: the whole night.
    setup.slots = 1;
    setup.threshold = 10.0;
    setup.real = 10.0;
    cfg.threshold_usd = Threshold::Usd(10.0);
    // The project's executors cost $1, and one in five $8 (earlier nights, long gone from the
    // window): any estimate that keeps most steps within it is about $8.
    let history = (0..10)
        .map(|i| Run {
            kind: StepKind::Executor,
            project: "p".into(),
            step_id: format!("p/{i}"),
            size: None,
            cost_usd: if i % 5 == 4 { 8.0 } else { 1.0 },
            started_ms: -(i + 2) * 24 * 60 * MIN_MS,
            finished_ms: -(i + 2) * 24 * 60 * MIN_MS + 30 * MIN_MS,
            outcome: Outcome::Done,
        })
        .collect();
    // Tonight, three executors of $3 each: all three fit in the $10.
    let step = Step {
        kind: StepKind::Executor,
        size: None,
        cost: 3.0,
        minutes: 30,
    };
    let line = Line {
        project: "p".into(),
        priority: 0,
        steps: vec![step.clone(), step.clone(), step],
        next: 0,
        cap_misses: 0,
        abandoned: false,
        running: None,
        kept: 0.0,
    };
    let night = Trace::new(None, vec![line], history, 0.1);
    let run = |mode| simulate(&night, mode, &cfg, (WINDOW_MIN, setup), sees);
    let (policy, fcfs) = (run(Mode::Policy), run(Mode::Fcfs));
    // FCFS starts each step as the last ends, checks nothing, and is lucky: $9, no hit.
    assert_eq!((fcfs.work, fcfs.limit_hits), (9.0, 0));
    // The policy starts the first ($0 + about $8 ≤ $10), and the second ($3 + about $8 > $10)
    // only once what it can spend before the block closes fits: by dawn it has done one step
    // and part of the next, a whole step's work less than FCFS.
    assert_eq!((policy.steps, policy.over_admitted), (1, 0));
    assert!(
        fcfs.work - policy.work >= 3.0,
        "{} vs {}",
        policy.work,
        fcfs.work
    );
}

#[test]
fn over_every_kind_the_policy_does_more_than_fcfs_and_never_far_less_on_a_night() {
    let (setup, cfg, sees) = daemons_case();
    let sizes = Some(0.5);
    let mut kinds: Vec<(String, Vec<Trace>)> = Vec::new();
    for dist in [Dist::Lognormal, Dist::Heavy, Dist::Bimodal, Dist::Uniform] {
        let nights = (1..=SEEDS).map(|seed| trace(dist, seed, sizes)).collect();
        kinds.push((dist.name().to_string(), nights));
    }
    for (kind, earlier) in [("projects cold", 0), ("projects warm", WARM_NIGHTS)] {
        let nights = (1..=SEEDS)
            .map(|seed| projects(seed, earlier, THRESHOLD, sizes))
            .collect();
        kinds.push((kind.to_string(), nights));
    }
    let mut wrong = Vec::new();
    for (kind, nights) in &kinds {
        let (mut work, mut fcfs_work, mut wasted, mut fcfs_wasted) = (0.0, 0.0, 0.0, 0.0);
        for tr in nights {
            let run = |mode| simulate(tr, mode, &cfg, (HOURS * 60, setup), sees);
            let (policy, fcfs) = (run(Mode::Policy), run(Mode::Fcfs));
            let seed = tr.seed.unwrap_or_default();
            // Both count in-flight work at dawn pro rata, so neither gains from the night's end.
            let short = 100.0 * (fcfs.work - policy.work) / fcfs.work;
            eprintln!(
                "{kind}, seed {seed}: policy ${:.2}, fcfs ${:.2} ({short:+.1}% short); wasted ${:.2} / ${:.2}",
                policy.work, fcfs.work, policy.wasted, fcfs.wasted
            );
            if short > WORST_NIGHT_PCT {
                wrong.push(format!(
                    "{kind}, seed {seed}: {short:.1}% below FCFS (${:.2} < ${:.2}; {} limit hits, ${:.2} wasted)",
                    policy.work, fcfs.work, policy.limit_hits, policy.wasted
                ));
            }
            if policy.over_admitted > 0 {
                wrong.push(format!(
                    "{kind}, seed {seed}: {} admissions over the threshold",
                    policy.over_admitted
                ));
            }
            work += policy.work;
            fcfs_work += fcfs.work;
            wasted += policy.wasted;
            fcfs_wasted += fcfs.wasted;
        }
        if work <= fcfs_work {
            wrong.push(format!(
                "{kind}: ${work:.2} of work over its nights, FCFS ${fcfs_work:.2}"
            ));
        }
        if wasted >= fcfs_wasted {
            wrong.push(format!(
                "{kind}: ${wasted:.2} thrown away over its nights, FCFS ${fcfs_wasted:.2}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
