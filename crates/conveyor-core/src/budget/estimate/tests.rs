use super::super::config::BudgetConfig;
use super::super::policy::tests::{cfg, done, run, snap};
use super::super::{HOUR_MS, MINUTE_MS};
use super::*;

#[test]
fn the_estimate_is_a_high_quantile_robust_to_an_outlier() {
    let p = Policy::new(BudgetConfig {
        margin: 0.2,
        estimate_quantile: 0.75,
        ..cfg()
    });
    // Nine steps around 1 and one runaway at 40.
    let mut runs: Vec<Run> = (0..9)
        .map(|i| done(0.8 + 0.05 * f64::from(i), HOUR_MS + i64::from(i)))
        .collect();
    runs.push(done(40.0, HOUR_MS - 1));
    let e = p.estimate(&snap(runs.clone()).runs, StepKind::Executor, None);
    assert_eq!(e.count, 10);
    // p75 of 0.8..1.2 plus 40 is 1.1375; a mean would be 4.9.
    let q = 1.1375 * 1.2;
    assert!((e.usd - q).abs() < 1e-9, "{e:?}");
    assert!((e.median.unwrap() - 1.025).abs() < 1e-9, "{e:?}");
    assert!(e.high.unwrap() > 4.0, "p90 sees the tail: {e:?}");
    // Only the last `history_runs` count.
    let p = Policy::new(BudgetConfig {
        history_runs: 3,
        ..cfg()
    });
    let e = p.estimate(&snap(runs).runs, StepKind::Executor, None);
    assert_eq!(e.count, 3);
}

#[test]
fn cold_start_values_per_kind_bound_a_thin_history() {
    let p = Policy::new(BudgetConfig {
        cold_start_usd: [("reviewer".to_string(), 0.3)].into(),
        ..cfg()
    });
    let none = snap(vec![]);
    assert_eq!(p.estimate(&none.runs, StepKind::Executor, None).usd, 2.0);
    assert_eq!(p.estimate(&none.runs, StepKind::Planner, None).usd, 1.0);
    assert_eq!(p.estimate(&none.runs, StepKind::Tester, None).usd, 0.5);
    assert_eq!(p.estimate(&none.runs, StepKind::Reviewer, None).usd, 0.3);
    // Two cheap runs do not pull the estimate below the cold start yet; three do.
    let mut runs = vec![done(0.1, 3 * HOUR_MS), done(0.1, 2 * HOUR_MS)];
    assert_eq!(
        p.estimate(&snap(runs.clone()).runs, StepKind::Executor, None)
            .usd,
        2.0
    );
    runs.push(done(0.1, HOUR_MS));
    let e = p.estimate(&snap(runs).runs, StepKind::Executor, None);
    assert!((e.usd - 0.1).abs() < 1e-9, "{e:?}");
}

#[test]
fn a_project_with_enough_history_gets_its_own_estimate() {
    let p = Policy::new(BudgetConfig {
        project_min_runs: 3,
        estimate_quantile: 0.75,
        ..cfg()
    });
    let mut runs: Vec<Run> = (0..5)
        .map(|i| run(StepKind::Executor, "big", 6.0, HOUR_MS + i, Outcome::Done))
        .collect();
    runs.extend((0..20).map(|i| {
        run(
            StepKind::Executor,
            "small",
            1.0,
            HOUR_MS + 10 + i,
            Outcome::Done,
        )
    }));
    let s = snap(runs);
    let big = p.estimate(&s.runs, StepKind::Executor, Some("big"));
    assert!(big.per_project && (big.usd - 6.0).abs() < 1e-9, "{big:?}");
    // A project without enough runs gets the kind's estimate across projects (p75 of
    // twenty 1s and five 6s).
    let new = p.estimate(&s.runs, StepKind::Executor, Some("new"));
    assert!(!new.per_project && (new.usd - 1.0).abs() < 1e-9, "{new:?}");
}

/// A sized step is estimated from the runs of its kind and size once there are five of
/// them; a size with fewer, or a step without one, from its whole kind.
#[test]
fn a_sized_step_is_estimated_from_its_size_once_it_has_enough_runs() {
    let p = Policy::new(BudgetConfig {
        margin: 0.0,
        estimate_quantile: 0.9,
        history_runs: 40,
        ..cfg()
    });
    let sized = |size: StepSize, cost: f64, ago: i64| Run {
        size: Some(size),
        ..done(cost, ago)
    };
    // Ten small executors at $1, ten large at $8, interleaved; four medium at $3.
    let mut runs = Vec::new();
    for i in 0..10 {
        runs.push(sized(StepSize::S, 1.0, (40 - 2 * i) * MINUTE_MS));
        runs.push(sized(StepSize::L, 8.0, (39 - 2 * i) * MINUTE_MS));
    }
    for i in 0..4 {
        runs.push(sized(StepSize::M, 3.0, (50 + i) * MINUTE_MS));
    }
    let runs = snap(runs).runs;
    let of = |size: Option<StepSize>| {
        p.estimate(
            &runs,
            Class {
                kind: StepKind::Executor,
                size,
            },
            Some("p"),
        )
    };
    let kind = p.estimate(&runs, StepKind::Executor, Some("p"));
    assert_eq!(kind.count, 24);
    assert!((kind.usd - 8.0).abs() < 1e-9, "{kind:?}");
    let small = of(Some(StepSize::S));
    assert_eq!((small.count, small.usd, small.median), (10, 1.0, Some(1.0)));
    let large = of(Some(StepSize::L));
    assert_eq!((large.count, large.usd), (10, 8.0));
    // The size narrows the claim, never the cap: a small step is capped as its kind.
    let small_step = Class {
        kind: StepKind::Executor,
        size: Some(StepSize::S),
    };
    let a = p.admitted(&runs, small_step.kind, "p", small.usd);
    assert_eq!(a.estimate_usd, 1.0);
    assert_eq!(a.cap_usd, p.max_budget(8.0));
    assert_eq!(p.admitted_at(1.0).cap_usd, p.max_budget(1.0));
    assert!(p.max_budget(8.0) > p.max_budget(1.0));
    // Four medium runs are too few: the kind's history, as for an unsized step.
    assert_eq!(of(Some(StepSize::M)), kind);
    assert_eq!(of(None), kind);
    assert!(!p.history(&runs, StepKind::Executor, Some("p")).per_size);
    assert!(
        p.history(
            &runs,
            Class {
                kind: StepKind::Executor,
                size: Some(StepSize::S)
            },
            Some("p")
        )
        .per_size
    );
    // A fifth medium run makes the size's own history count.
    let mut runs = runs;
    runs.push(sized(StepSize::M, 3.0, 1));
    let medium = p.estimate(
        &runs,
        Class {
            kind: StepKind::Executor,
            size: Some(StepSize::M),
        },
        Some("p"),
    );
    assert_eq!((medium.count, medium.usd), (5, 3.0));
    // A reviewer is not an executor of that size.
    let reviewer = p.estimate(
        &runs,
        Class {
            kind: StepKind::Reviewer,
            size: Some(StepSize::S),
        },
        Some("p"),
    );
    assert_eq!(reviewer.count, 0);
}

/// The running claim of a sized step reads the same history: a small step that has spent
/// $0.5 is claimed as a small one, not as one of its kind's large steps.
#[test]
fn a_sized_running_step_is_claimed_from_its_size() {
    let p = Policy::new(BudgetConfig {
        margin: 0.0,
        estimate_quantile: 0.9,
        history_runs: 40,
        ..cfg()
    });
    let mut runs = Vec::new();
    for i in 0..10 {
        for (size, cost) in [(StepSize::S, 1.0 + 0.01 * f64::from(i)), (StepSize::L, 8.0)] {
            runs.push(Run {
                size: Some(size),
                ..done(cost, i64::from(40 - i) * MINUTE_MS)
            });
        }
    }
    let runs = snap(runs).runs;
    let small = Class {
        kind: StepKind::Executor,
        size: Some(StepSize::S),
    };
    let admitted = p.reserve_for(&runs, small, "p", None);
    assert!(admitted.estimate_usd < 1.1, "{admitted:?}");
    let r = p.running(&runs, small, "p", admitted.estimate_usd, 0.5);
    assert!(r.estimate_usd < 1.1, "{r:?}");
    // Unsized, the same spend is claimed at the kind's tail.
    let r = p.running(&runs, StepKind::Executor, "p", 8.0, 0.5);
    assert!((r.estimate_usd - 8.0).abs() < 1e-9, "{r:?}");
}

/// A project whose first planner cost twice the others' gets its executors claimed
/// dearer before it has run one, by less than the whole factor while one run says it;
/// the more of its runs say so, the closer to the whole factor.
#[test]
fn a_projects_level_carries_across_kinds_shrunk_by_how_little_its_runs_say() {
    let p = Policy::new(BudgetConfig {
        margin: 0.0,
        estimate_quantile: 0.5,
        history_runs: 100,
        ..cfg()
    });
    let mut runs = Vec::new();
    let mut ago = 1000;
    for project in ["a", "b", "c"] {
        for i in 0..10 {
            let spread = 1.0 + 0.05 * f64::from(i % 3);
            runs.push(run(
                StepKind::Executor,
                project,
                2.0 * spread,
                ago * MINUTE_MS,
                Outcome::Done,
            ));
            runs.push(run(
                StepKind::Planner,
                project,
                spread,
                (ago - 1) * MINUTE_MS,
                Outcome::Done,
            ));
            ago -= 2;
        }
    }
    let dear = |runs: &[Run], n: i64| {
        let mut runs = runs.to_vec();
        for k in 0..n {
            runs.push(run(
                StepKind::Planner,
                "d",
                2.1,
                (ago - 1 - k) * MINUTE_MS,
                Outcome::Done,
            ));
        }
        let runs = snap(runs).runs;
        let level = p.project_levels(&runs)["d"];
        let own = p.estimate(&runs, StepKind::Executor, Some("d")).usd;
        let other = p.estimate(&runs, StepKind::Executor, Some("a")).usd;
        (level, own / other)
    };
    let (one, ratio_one) = dear(&runs, 1);
    let (five, ratio_five) = dear(&runs, 5);
    let whole = (2.1f64 / 1.05).ln();
    assert!(0.0 < one && one < whole, "one run: {one} of {whole}");
    assert!(one < five && five < whole, "five runs: {five} of {whole}");
    assert!(
        1.0 < ratio_one && ratio_one < ratio_five && ratio_five < 2.0,
        "{ratio_one} {ratio_five}"
    );
    // A kind with no history: its cold start on the project's level.
    let runs = snap(vec![run(
        StepKind::Planner,
        "d",
        2.0,
        MINUTE_MS,
        Outcome::Done,
    )])
    .runs;
    let cold = p.estimate(&runs, StepKind::Executor, Some("d")).usd;
    assert!(
        (cold - 2.0).abs() < 1e-9,
        "one project alone has no level against others: {cold}"
    );
    assert!(p.project_levels(&[]).is_empty());
}

#[test]
fn a_miss_raises_the_estimate_of_its_kind() {
    let p = Policy::new(cfg());
    let mut runs = vec![
        done(2.0, 50 * MINUTE_MS),
        done(2.0, 40 * MINUTE_MS),
        done(2.0, 30 * MINUTE_MS),
    ];
    assert_eq!(
        p.estimate(&snap(runs.clone()).runs, StepKind::Executor, None)
            .usd,
        2.0
    );
    runs.push(run(
        StepKind::Executor,
        "p",
        0.4,
        20 * MINUTE_MS,
        Outcome::Miss,
    ));
    let e = p.estimate(&snap(runs.clone()).runs, StepKind::Executor, None);
    assert_eq!((e.usd, e.misses, e.count), (3.0, 1, 3));
    // Other kinds are not affected.
    assert_eq!(
        p.estimate(&snap(runs.clone()).runs, StepKind::Planner, None)
            .usd,
        1.0
    );
    // At most three misses count.
    for i in 0..5 {
        runs.push(run(
            StepKind::Executor,
            "p",
            0.4,
            10 * MINUTE_MS - i,
            Outcome::Miss,
        ));
    }
    let e = p.estimate(&snap(runs).runs, StepKind::Executor, None);
    assert!((e.usd - 2.0 * 1.5f64.powi(3)).abs() < 1e-9, "{e:?}");
}
