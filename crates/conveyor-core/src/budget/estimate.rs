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
pub(super) const MIN_SAMPLES: usize = 3;
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
mod tests;
