//! What a step is expected to cost: learned from the finished runs of its kind (the project's
//! own once it has enough of them), raised by recent misses, with a floor for a step that was
//! already cut once; and the `--max-budget-usd` cap that follows from the estimate.

use conveyor_api::{StepKind, StepSize};

use super::policy::Policy;
use super::quantile::quantile;
use super::snapshot::{Class, Outcome, Run};

/// At most this many recent misses raise a kind's estimate (by `miss_factor` each).
const MISS_CAP: i32 = 3;
/// Below this many samples the cold-start value still bounds the estimate from below.
const MIN_SAMPLES: usize = 3;
/// A sized step is estimated from the runs of its kind and size once there are this many;
/// below, from its kind's (a size's few samples are noisier than the kind's many).
pub const SIZE_MIN_SAMPLES: usize = 5;

/// The runs a project's cost level is read from (the account's latest finished ones).
const LEVEL_RUNS: usize = 300;
/// The spreads of log costs assumed while too few runs or projects say (σ 0.5: a project's
/// steps within a factor of 1.6 of its kind's, as often as not).
const LEVEL_PRIOR_VAR: f64 = 0.25;
/// A floor of the spreads: a method-of-moments estimate can come out at 0 or below.
const LEVEL_MIN_VAR: f64 = 0.01;

/// What history says a step of one kind costs.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// What the policy counts for the step (margin and misses included).
    pub usd: f64,
    /// Samples (finished runs) it rests on.
    pub count: u32,
    pub median: Option<f64>,
    /// The 0.9 quantile.
    pub high: Option<f64>,
    /// Recent misses that raised it.
    pub misses: u32,
    /// From the project's own history rather than the kind's across projects.
    pub per_project: bool,
}

/// The finished runs an estimate rests on: their costs (sorted), the misses among them, and
/// whether they are the project's own.
#[derive(Debug, Clone, PartialEq)]
pub struct History {
    pub samples: Vec<f64>,
    /// How fast each of them spent, USD a minute (sorted; those that ran at least a second).
    pub rates: Vec<f64>,
    pub misses: u32,
    pub per_project: bool,
    /// Only the runs of the step's size (the planner's), not its whole kind's.
    pub per_size: bool,
}

impl Policy {
    /// The kind's last `history_runs` finished runs — the project's own when it has
    /// `project_min_runs` of them — as [`Policy::estimate`] and the running claims read them.
    /// For a sized step, those of its kind and size when there are [`SIZE_MIN_SAMPLES`] of
    /// them: a kind's costs spread over an order of magnitude and more (an executor that
    /// renames a field, one that adds a module), and the size the planner gave says which part
    /// of that spread the step belongs to before it has spent anything.
    pub fn history(&self, runs: &[Run], class: impl Into<Class>, project: Option<&str>) -> History {
        let Class { kind, size } = class.into();
        size.map(|s| self.history_of(runs, kind, Some(s), project))
            .filter(|sized| sized.samples.len() >= SIZE_MIN_SAMPLES)
            .unwrap_or_else(|| self.history_of(runs, kind, None, project))
    }

    /// [`Policy::history`] of the runs of `kind` (and of `size`, when given).
    fn history_of(
        &self,
        runs: &[Run],
        kind: StepKind,
        size: Option<StepSize>,
        project: Option<&str>,
    ) -> History {
        let n = self.cfg.history_runs as usize;
        // The kind's pooled samples are moved to the step's project's level (see
        // `project_levels`). They keep the spread between projects they were drawn from:
        // that spread stands for what is not yet known of this project's level (a project
        // without runs is estimated as the pool, as before), and the level moves it by what
        // the project's runs of other kinds already say.
        let levels = project
            .map(|_| self.project_levels(runs))
            .unwrap_or_default();
        let level = |p: &str| levels.get(p).copied().unwrap_or(0.0);
        // A project without runs has no level of its own: the pool as it is.
        let here = project.and_then(|p| levels.get(p).copied());
        let recent = |p: Option<&str>| -> (Vec<f64>, Vec<f64>, u32, f64) {
            let mut samples = Vec::new();
            let mut levels_sum = 0.0;
            let mut rates = Vec::new();
            let mut misses = 0u32;
            let mut seen = 0usize;
            for r in runs.iter().rev() {
                if r.kind != kind
                    || p.is_some_and(|p| p != r.project)
                    || size.is_some_and(|s| r.size != Some(s))
                {
                    continue;
                }
                match r.outcome {
                    Outcome::Done => {
                        samples.push(r.cost_usd);
                        levels_sum += level(&r.project);
                    }
                    Outcome::Miss => misses += 1,
                    Outcome::Other => continue,
                }
                // Rates from runs that went to their end and cost something: a run cut at once
                // by a limit says nothing of how fast its kind spends.
                let ms = r.finished_ms - r.started_ms;
                if r.outcome == Outcome::Done && r.cost_usd > 0.0 && ms >= 1000 {
                    #[allow(clippy::cast_precision_loss)]
                    rates.push(r.cost_usd / (ms as f64 / 60_000.0));
                }
                seen += 1;
                if seen >= n {
                    break;
                }
            }
            (samples, rates, misses, levels_sum)
        };
        let mut per_project = false;
        let (mut samples, mut rates, mut misses, levels_sum) = recent(None);
        if let Some(here) = here
            && !samples.is_empty()
        {
            // The pool is moved from its samples' mean level to this project's: a pool of
            // this project's runs alone is not moved at all.
            #[allow(clippy::cast_precision_loss)]
            let shift = (here - levels_sum / samples.len() as f64).exp();
            for x in &mut samples {
                *x *= shift;
            }
        }
        if let Some(p) = project {
            let (own, own_rates, own_misses, _) = recent(Some(p));
            if own.len() >= self.cfg.project_min_runs as usize {
                (samples, rates, misses, per_project) = (own, own_rates, own_misses, true);
            }
        }
        samples.sort_by(f64::total_cmp);
        rates.sort_by(f64::total_cmp);
        History {
            samples,
            rates,
            misses,
            per_project,
            per_size: size.is_some(),
        }
    }

    /// Each project's cost level: the log of how much its steps cost against the median of
    /// their kind across projects, shrunk towards 0 (the kind's own level) by how little the
    /// project's runs say. The model is the normal–normal hierarchical one on log costs,
    /// `ln c = μ_kind + α_project + ε`, `α ~ N(0, τ²)`, `ε ~ N(0, σ²)`, and the level is the
    /// posterior mean of `α`: the project's mean residual × `n τ² / (n τ² + σ²)`, with `σ²`
    /// (the spread within projects) and `τ²` (the spread between them) estimated from the runs
    /// themselves by the method of moments — empirical Bayes. Why this and not the project's own
    /// quantile once it has enough runs, the kind's before: a project whose steps cost twice
    /// the others' shows it in its first planner, and every kind of its steps shares it, so
    /// its first executor is already claimed as that project's, not as an average one; and one
    /// cheap run moves a project's level by a fraction only, as much as one run can be trusted
    /// against the spread within projects. Log costs because costs are multiplicative (a
    /// project's scale multiplies every step) and their tails are long.
    pub fn project_levels(&self, runs: &[Run]) -> std::collections::HashMap<String, f64> {
        use std::collections::HashMap;
        let recent: Vec<&Run> = runs
            .iter()
            .rev()
            .filter(|r| r.outcome == Outcome::Done && r.cost_usd > 0.0)
            .take(LEVEL_RUNS)
            .collect();
        let mut by_kind: HashMap<StepKind, Vec<f64>> = HashMap::new();
        for r in &recent {
            by_kind.entry(r.kind).or_default().push(r.cost_usd.ln());
        }
        let medians: HashMap<StepKind, f64> = by_kind
            .into_iter()
            .map(|(k, mut v)| {
                v.sort_by(f64::total_cmp);
                (k, quantile(&v, 0.5))
            })
            .collect();
        // Per project: count, sum and sum of squares of the residuals.
        let mut groups: HashMap<&str, (f64, f64, f64)> = HashMap::new();
        for r in &recent {
            let e = r.cost_usd.ln() - medians[&r.kind];
            let g = groups.entry(r.project.as_str()).or_default();
            *g = (g.0 + 1.0, g.1 + e, g.2 + e * e);
        }
        #[allow(clippy::cast_precision_loss)]
        let projects = groups.len() as f64;
        let total: f64 = groups.values().map(|g| g.0).sum();
        let within: f64 = groups.values().map(|g| g.2 - g.1 * g.1 / g.0).sum();
        let sigma2 = if total > projects + 1.0 {
            (within / (total - projects)).max(LEVEL_MIN_VAR)
        } else {
            LEVEL_PRIOR_VAR
        };
        let tau2 = if projects >= 3.0 {
            let means: Vec<f64> = groups.values().map(|g| g.1 / g.0).collect();
            let grand = means.iter().sum::<f64>() / projects;
            let spread = means.iter().map(|m| (m - grand).powi(2)).sum::<f64>() / (projects - 1.0);
            let noise = groups.values().map(|g| sigma2 / g.0).sum::<f64>() / projects;
            (spread - noise).max(LEVEL_MIN_VAR)
        } else {
            LEVEL_PRIOR_VAR
        };
        groups
            .into_iter()
            .map(|(p, (n, sum, _))| {
                let shrink = n * tau2 / (n * tau2 + sigma2);
                (p.to_string(), shrink * sum / n)
            })
            .collect()
    }

    /// The fastest a step of `kind` is expected to spend, USD a minute: the `estimate_quantile`
    /// of its history's rates × (1 + margin); infinite (its whole claim at once) with fewer
    /// than three.
    pub fn rate(&self, h: &History) -> f64 {
        if h.rates.len() < MIN_SAMPLES {
            return f64::INFINITY;
        }
        let r = quantile(&h.rates, self.cfg.estimate_quantile) * (1.0 + self.cfg.margin);
        if r.is_finite() && r > 0.0 {
            r
        } else {
            f64::INFINITY
        }
    }

    /// `miss_factor` per recent miss, up to three.
    pub(super) fn raise(&self, misses: u32) -> f64 {
        self.cfg
            .miss_factor
            .powi(i32::try_from(misses).unwrap_or(MISS_CAP).min(MISS_CAP))
    }

    /// The estimate of a kind that has no history: `cold_start_usd.<kind>`, else a built-in
    /// multiple of `default_estimate_usd` (an executor does the most, a reviewer reads).
    pub fn cold_start(&self, kind: StepKind) -> f64 {
        if let Some(v) = self.cfg.cold_start_usd.get(kind.as_str()) {
            return *v;
        }
        let scale = match kind {
            StepKind::Executor => 2.0,
            StepKind::Planner
            | StepKind::Fixer
            | StepKind::Remarks
            | StepKind::Rework
            | StepKind::Answer
            | StepKind::Investigate => 1.0,
            StepKind::Reviewer | StepKind::Tester | StepKind::Skeptic | StepKind::Extra => 0.5,
            // Reads the entries, the diff and the memory; writes one small file.
            StepKind::Judge => 0.3,
        };
        self.cfg.default_estimate_usd * scale
    }

    /// The estimate for a step of `class` (its kind, and its size when the plan gave one) in
    /// `project`.
    ///
    /// The base is a high quantile (`estimate_quantile`, 0.9 by default) of the kind's last
    /// `history_runs` finished runs — the project's own when it has `project_min_runs` of
    /// them. A quantile, not a mean or an exponentially weighted mean: one runaway step (a
    /// subagent storm) moves a mean by its whole excess and keeps an EWMA high for many runs,
    /// while it moves a quantile by one rank; and a quantile above the median keeps most steps
    /// within their estimate without paying for the tail on every step. Then `× (1 + margin)`,
    /// and `× miss_factor` per recent miss (up to three): a cut step's cost is only a lower
    /// bound of what it needed. With fewer than three samples the cold-start value still
    /// bounds it from below.
    pub fn estimate(
        &self,
        runs: &[Run],
        class: impl Into<Class>,
        project: Option<&str>,
    ) -> Estimate {
        let class = class.into();
        let History {
            samples,
            misses,
            per_project,
            ..
        } = self.history(runs, class, project);
        // A kind without history yet: its cold start, on the project's level when its other
        // kinds' runs say it is a dear or a cheap one.
        let level = project
            .filter(|_| samples.len() < MIN_SAMPLES)
            .and_then(|p| self.project_levels(runs).get(p).copied())
            .unwrap_or(0.0);
        let cold = self.cold_start(class.kind) * level.exp();
        let base = match samples.len() {
            0 => cold,
            k if k < MIN_SAMPLES => quantile(&samples, self.cfg.estimate_quantile).max(cold),
            _ => quantile(&samples, self.cfg.estimate_quantile),
        };
        let raise = self.raise(misses);
        Estimate {
            usd: base * (1.0 + self.cfg.margin) * raise,
            count: u32::try_from(samples.len()).unwrap_or(u32::MAX),
            median: (!samples.is_empty()).then(|| quantile(&samples, 0.5)),
            high: (!samples.is_empty()).then(|| quantile(&samples, 0.9)),
            misses,
            per_project,
        }
    }
}

#[cfg(test)]
mod tests {
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
}
