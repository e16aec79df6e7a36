//! What a step is let through with: its `--max-budget-usd` cap (a runaway stops; a merely
//! large step does not), the floor of an attempt after a cut one, and what frequent cuts say.

use conveyor_api::StepKind;

use super::policy::{Admitted, Policy};
use super::snapshot::{Outcome, Run};
use super::time::DAY_MS;

/// How much wider a young kind's cap is: one the account has run fewer times than a project
/// needs for an estimate of its own (`project_min_runs`, 8). Its estimate is then a cold start
/// or the p90 of a few runs, neither of which says how far the kind's costs spread, and the
/// first steps of a new account, or of a kind never run, are the ones a cap at four times that
/// cuts while merely large: on the simulator's cold nights of a few projects (the daemon's
/// case, `--resume-keeps 0.15`) 22 cap misses in 100 nights threw away half the waste, each its
/// whole cap, and three in a row leave a line for Anton. Doubled below eight runs: 6 misses,
/// 94.6 → 95.6% of the bound on seeds 1–100 (10 → 4 misses, 95.0 → 95.6% on 101–200, never
/// used to choose it); below three runs only, 15 misses and 95.3%. The warm nights, whose
/// kinds all have runs, do not change. A runaway step is still stopped, at twice the spend.
pub const COLD_CAP_RAISE: f64 = 2.0;

impl Policy {
    /// `--max-budget-usd` for a step with this estimate; `None` when no cap is configured.
    pub fn max_budget(&self, estimate_usd: f64) -> Option<f64> {
        (self.cfg.max_budget_factor > 0.0).then_some(estimate_usd * self.cfg.max_budget_factor)
    }

    /// A step let through at `estimate_usd`, capped by [`Policy::max_budget`] of it (no cap
    /// below a hundredth of a cent).
    pub fn admitted_at(&self, estimate_usd: f64) -> Admitted {
        Admitted {
            estimate_usd,
            cap_usd: self.max_budget(estimate_usd).filter(|usd| *usd >= 0.0001),
        }
    }

    /// A step of `kind` in `project` let through at `estimate_usd`: capped at the largest of
    /// its estimate, its kind's in the project and its kind's over every project.
    ///
    /// The cap stops a runaway step; it must not cut a step that is merely large. So the
    /// planner's size narrows what a step claims of the budget, never its cap: a step sized
    /// too small is not cut for the planner's error (on the simulator's bimodal nights with a
    /// poor planner, σ 1.2, capping at the sized estimate made 28 cap misses in 20 nights and
    /// cost 3.7 points of work). And a project's own estimate of a kind may rest on a handful of
    /// runs (`project_min_runs`, 8): the p90 of so few from a heavy tail often lands low. On the
    /// simulator's nights (seeds 21–40, planner sizes σ 0.5) every one of the 17 cap misses
    /// over the four kinds of night was a planner, reviewer or fixer with ten runs behind it;
    /// with the whole account's estimate of the kind as a floor, 2 remain.
    ///
    /// While the account has fewer runs of the kind than a project needs for an estimate of its
    /// own (`project_min_runs`), the cap is raised by `COLD_CAP_RAISE`.
    pub fn admitted(
        &self,
        runs: &[Run],
        kind: StepKind,
        project: &str,
        estimate_usd: f64,
    ) -> Admitted {
        let here = self.estimate(runs, kind, Some(project)).usd;
        let anywhere = self.estimate(runs, kind, None);
        let mut a = self.admitted_at(estimate_usd.max(here).max(anywhere.usd));
        if anywhere.count < self.cfg.project_min_runs {
            a.cap_usd = a.cap_usd.map(|c| c * COLD_CAP_RAISE);
        }
        Admitted { estimate_usd, ..a }
    }

    /// The least a step's next attempt is estimated at: the most one of its earlier attempts
    /// spent before a usage limit or its cap cut it (× `1 + margin`), 0 when none was cut.
    /// Raising the kind's estimate by `miss_factor` is not enough for the step that missed:
    /// cut at a cap of 4 × its estimate, it needs more than 4 × that estimate, and a cap of
    /// 4 × 1.5 × the estimate cuts it again.
    pub fn retry_floor(&self, runs: &[Run], step: &str) -> f64 {
        runs.iter()
            .filter(|r| r.outcome == Outcome::Miss && r.step_id == step)
            .fold(0.0, |a: f64, r| a.max(r.cost_usd))
            * (1.0 + self.cfg.margin)
    }

    /// Misses: (all, in the last 24 hours, advice when the latter reaches
    /// `miss_advice_count`).
    pub fn misses(&self, runs: &[Run], now_ms: i64) -> (u32, u32, Option<String>) {
        let total = runs.iter().filter(|r| r.outcome == Outcome::Miss).count();
        let recent = runs
            .iter()
            .filter(|r| r.outcome == Outcome::Miss && r.finished_ms > now_ms - DAY_MS)
            .count();
        let recent = u32::try_from(recent).unwrap_or(u32::MAX);
        let advice = (self.cfg.miss_advice_count > 0 && recent >= self.cfg.miss_advice_count)
            .then(|| {
                format!(
                "steps too large: cut them finer ({recent} steps cut by a usage limit or their budget cap in 24 hours)"
            )
            });
        (u32::try_from(total).unwrap_or(u32::MAX), recent, advice)
    }
}

#[cfg(test)]
mod tests {
    use super::super::config::BudgetConfig;
    use super::super::policy::tests::{NOW, cfg, done, run, snap};
    use super::super::{Decision, HOUR_MS, MINUTE_MS};
    use super::*;

    #[test]
    fn the_cap_rests_on_the_whole_accounts_runs_of_the_kind_when_they_cost_more() {
        let p = Policy::new(cfg());
        // Project "p": eight planners at $1; project "q": eight at $5.
        let runs = snap(
            (0..16)
                .map(|i| {
                    let (project, cost) = if i % 2 == 0 { ("p", 1.0) } else { ("q", 5.0) };
                    run(
                        StepKind::Planner,
                        project,
                        cost,
                        (i + 1) * MINUTE_MS,
                        Outcome::Done,
                    )
                })
                .collect(),
        )
        .runs;
        let here = p.estimate(&runs, StepKind::Planner, Some("p"));
        assert!(here.per_project);
        assert!((here.usd - 1.0).abs() < 1e-9, "{here:?}");
        let anywhere = p.estimate(&runs, StepKind::Planner, None).usd;
        assert!((anywhere - 5.0).abs() < 1e-9, "{anywhere}");
        // "p"'s planner is admitted at its own $1, and capped as the account's planners.
        let a = p.admitted(&runs, StepKind::Planner, "p", here.usd);
        assert_eq!(a.estimate_usd, 1.0);
        assert_eq!(a.cap_usd, p.max_budget(5.0));
        // "q"'s own estimate is the larger: its cap rests on it.
        let q = p.estimate(&runs, StepKind::Planner, Some("q")).usd;
        assert_eq!(
            p.admitted(&runs, StepKind::Planner, "q", q).cap_usd,
            p.max_budget(q)
        );
    }

    #[test]
    fn a_young_kind_is_capped_twice_as_wide_until_it_has_project_min_runs() {
        let p = Policy::new(cfg());
        // No executor has run: its cold start, $2, and a cap of 2 × 4 × $2.
        let a = p.admitted(&[], StepKind::Executor, "p", 2.0);
        assert_eq!(a.cap_usd, Some(2.0 * 4.0 * COLD_CAP_RAISE));
        // Seven runs anywhere are still too few to say how wide its costs spread.
        let mut runs: Vec<Run> = (1..=7).map(|i| done(2.0, i * MINUTE_MS)).collect();
        assert_eq!(
            p.admitted(&runs, StepKind::Executor, "p", 2.0).cap_usd,
            Some(2.0 * 4.0 * COLD_CAP_RAISE)
        );
        // The eighth: the cap is the estimate's.
        runs.insert(0, done(2.0, 8 * MINUTE_MS));
        assert_eq!(p.cfg.project_min_runs, 8);
        assert_eq!(
            p.admitted(&runs, StepKind::Executor, "p", 2.0).cap_usd,
            Some(8.0)
        );
    }

    #[test]
    fn the_cap_is_the_estimate_times_a_generous_factor() {
        assert_eq!(Policy::new(cfg()).max_budget(2.0), Some(8.0));
        let off = Policy::new(BudgetConfig {
            max_budget_factor: 0.0,
            ..cfg()
        });
        assert_eq!(off.max_budget(2.0), None);
    }

    #[test]
    fn frequent_misses_say_cut_the_steps_finer() {
        let p = Policy::new(cfg());
        let miss = |ago| run(StepKind::Executor, "p", 0.1, ago, Outcome::Miss);
        let mut runs = vec![miss(2 * DAY_MS), miss(HOUR_MS), miss(2 * HOUR_MS)];
        assert_eq!(p.misses(&runs, NOW), (3, 2, None));
        runs.push(miss(MINUTE_MS));
        let (total, recent, advice) = p.misses(&runs, NOW);
        assert_eq!((total, recent), (4, 3));
        assert!(advice.unwrap().contains("cut them finer"));
    }

    #[test]
    fn a_step_cut_short_is_estimated_at_least_at_what_it_spent() {
        let p = Policy::new(BudgetConfig {
            margin: 0.1,
            ..cfg()
        });
        let mut runs = vec![
            done(2.0, 50 * MINUTE_MS),
            done(2.0, 40 * MINUTE_MS),
            done(2.0, 30 * MINUTE_MS),
        ];
        // Step "big" ran into its cap (4 × 2.2 = 8.8) once; the limit cut it at 3 another time.
        for (cost, ago) in [(8.8, 20 * MINUTE_MS), (3.0, 10 * MINUTE_MS)] {
            runs.push(Run {
                step_id: "big".into(),
                ..run(StepKind::Executor, "p", cost, ago, Outcome::Miss)
            });
        }
        // Two hours later: the hour-long window is empty again.
        let mut s = snap(runs);
        s.now_ms = NOW + 2 * HOUR_MS;
        // The kind's estimate: 2 × 1.1, raised twice by the misses.
        let kind = 2.0 * 1.1 * 1.5 * 1.5;
        let other = p.decide(&s, StepKind::Executor, "p", Some("other"));
        assert_eq!(other, Decision::Start { estimate_usd: kind });
        assert_eq!(p.decide(&s, StepKind::Executor, "p", None), other);
        // The step that missed: at least its largest miss × (1 + margin).
        assert!((p.retry_floor(&s.runs, "big") - 8.8 * 1.1).abs() < 1e-9);
        let Decision::Start { estimate_usd } = p.decide(&s, StepKind::Executor, "p", Some("big"))
        else {
            panic!("an empty window has room for 9.68");
        };
        assert!((estimate_usd - 8.8 * 1.1).abs() < 1e-9, "{estimate_usd}");
        assert_eq!(p.retry_floor(&s.runs, "other"), 0.0);
    }
}
