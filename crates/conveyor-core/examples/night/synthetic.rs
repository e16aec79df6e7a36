//! The seeded synthetic nights: lines of steps whose costs are drawn from a distribution, and
//! the earlier nights each project's history holds.

use conveyor_api::{StepKind, StepSize};
use conveyor_core::budget::{Outcome, Run};

use super::model::{LINES, Line, MIN_MS, Step, Trace};

/// SplitMix64: small, seeded, good enough for synthetic traces.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in (0, 1).
    #[allow(clippy::cast_precision_loss)]
    pub(super) fn f64(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    pub(super) fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.f64()
    }
    pub(super) fn normal(&mut self) -> f64 {
        let (u, v) = (self.f64(), self.f64());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
    /// A lognormal with mean 1.
    pub(super) fn lognormal(&mut self, sigma: f64) -> f64 {
        (sigma * self.normal() - sigma * sigma / 2.0).exp()
    }
}

/// The shape of step costs around a kind's mean (each has mean 1).
#[derive(Debug, Clone, Copy)]
pub(super) enum Dist {
    /// Lognormal, σ = 0.5: the usual spread.
    Lognormal,
    /// Lognormal, σ = 1.0: a heavy tail (subagent storms).
    Heavy,
    /// Three steps in four small (0.4), one large (2.8).
    Bimodal,
    /// Uniform on [0.2, 1.8].
    Uniform,
}

impl Dist {
    pub(super) fn name(self) -> &'static str {
        match self {
            Dist::Lognormal => "lognormal σ0.5",
            Dist::Heavy => "heavy σ1.0",
            Dist::Bimodal => "bimodal",
            Dist::Uniform => "uniform",
        }
    }
    /// Its name for `--kind`.
    pub(super) fn key(self) -> &'static str {
        match self {
            Dist::Lognormal => "lognormal",
            Dist::Heavy => "heavy",
            Dist::Bimodal => "bimodal",
            Dist::Uniform => "uniform",
        }
    }
    pub(super) fn draw(self, rng: &mut Rng) -> f64 {
        match self {
            Dist::Lognormal => rng.lognormal(0.5),
            Dist::Heavy => rng.lognormal(1.0),
            Dist::Bimodal => {
                if rng.f64() < 0.75 {
                    0.4
                } else {
                    2.8
                }
            }
            Dist::Uniform => rng.range(0.2, 1.8),
        }
    }
}

fn kind_mean(kind: StepKind) -> f64 {
    match kind {
        StepKind::Planner => 0.6,
        StepKind::Executor => 2.0,
        StepKind::Reviewer => 0.5,
        _ => 1.0,
    }
}

/// The size a planner gives a step whose cost is `rel` × its kind's mean in its project, when
/// its judgement is off by a lognormal error of σ `sigma` (`z`: a standard normal draw): the
/// sizes are a factor of two apart, M around the kind's mean.
pub(super) fn planned_size(rel: f64, sigma: f64, z: f64) -> StepSize {
    let seen = rel * (sigma * z).exp();
    match seen {
        s if s < 0.35 => StepSize::Xs,
        s if s < 0.7 => StepSize::S,
        s if s < 1.4 => StepSize::M,
        s if s < 2.8 => StepSize::L,
        _ => StepSize::Xl,
    }
}

/// Night number `seed` of `dist` (as `--first-seed` counts them). `sizes`: the planner sizes
/// the executor steps (tonight's and the history's), off by a lognormal error of this σ. The
/// planner's errors come from a stream of their own, so a night's costs are the same with
/// sizes or without.
pub(super) fn trace(dist: Dist, seed: u64, sizes: Option<f64>) -> Trace {
    let state = 0x5EED_0000 + seed * 7919;
    let mut rng = Rng(state);
    let mut judge = Rng(state ^ 0x5123_0000_0000);
    let mut size_of = |kind: StepKind, rel: f64| -> Option<StepSize> {
        let sigma = sizes?;
        (kind == StepKind::Executor).then(|| planned_size(rel, sigma, judge.normal()))
    };
    let mut lines = Vec::new();
    let mut history = Vec::new();
    let mut max_rate: f64 = 0.0;
    let mut step = |rng: &mut Rng, kind: StepKind, scale: f64| {
        let rel = dist.draw(rng);
        let cost = kind_mean(kind) * scale * rel;
        // $0.08 a minute, ±30%.
        let rate = 0.08 * rng.range(0.7, 1.3);
        max_rate = max_rate.max(rate);
        #[allow(clippy::cast_possible_truncation)]
        let minutes = ((cost / rate).round() as i64).max(2);
        (
            Step {
                kind,
                size: None,
                cost,
                minutes,
            },
            rel,
        )
    };
    for i in 0..LINES {
        let project = format!("p{i}");
        let scale = rng.range(0.6, 1.6);
        let mut kinds = vec![StepKind::Planner];
        kinds.extend(std::iter::repeat_n(StepKind::Executor, 5));
        kinds.extend([StepKind::Reviewer, StepKind::Fixer]);
        let steps: Vec<(Step, f64)> = kinds.iter().map(|k| step(&mut rng, *k, scale)).collect();
        // Earlier nights of the same project: ten runs per step of the chain (so fifty
        // executors), days ago, drawn like tonight's.
        for (j, k) in kinds.iter().enumerate() {
            for n in 0..10 {
                let (s, rel) = step(&mut rng, *k, scale);
                #[allow(clippy::cast_possible_wrap)]
                let finished_ms = -((3 * 24 * 60 + (j * 10 + n) as i64 * 7 + i as i64) * MIN_MS);
                history.push(Run {
                    kind: s.kind,
                    project: project.clone(),
                    step_id: format!("{project}/earlier/{j}/{n}"),
                    size: size_of(s.kind, rel),
                    cost_usd: s.cost,
                    started_ms: finished_ms - s.minutes * MIN_MS,
                    finished_ms,
                    outcome: Outcome::Done,
                });
            }
        }
        let steps = steps
            .into_iter()
            .map(|(s, rel)| Step {
                size: size_of(s.kind, rel),
                ..s
            })
            .collect();
        lines.push(Line {
            project,
            #[allow(clippy::cast_possible_truncation)]
            priority: (rng.next_u64() % 10) as u32,
            steps,
            next: 0,
            cap_misses: 0,
            abandoned: false,
            running: None,
            kept: 0.0,
        });
    }
    Trace::new(Some(seed), lines, history, max_rate)
}

/// Projects of the "projects" night, lines drawn over them.
const PROJECTS: usize = 5;
/// Lines of the "projects" night.
const PROJECT_LINES: usize = 16;
/// The Pareto tail's index for executor costs: a finite mean, an infinite-looking tail (the
/// variance is infinite at 2), so now and then an executor costs five times the median.
const PARETO_ALPHA: f64 = 2.0;

/// A Pareto draw with mean 1 (scale (α − 1)/α).
fn pareto(rng: &mut Rng, alpha: f64) -> f64 {
    (alpha - 1.0) / alpha * rng.f64().powf(-1.0 / alpha)
}

/// Night number `seed` of the "projects" kind, the shape of Anton's nights: 16 lines of four
/// to eleven steps (a planner, one to eight executors, a reviewer, a fixer) over five projects,
/// each project's steps costing 0.5–2.2× its kind's mean, executors with a Pareto tail
/// (α = 2, truncated at 40% of `threshold`, the largest step a window holds twice and a half),
/// the rest lognormal σ 0.5. `earlier`: how many earlier nights of the same projects (same
/// scales, fresh draws) make the history, one a day before tonight; 0 is a cold start.
/// `sizes` as in [`trace`].
pub(super) fn projects(seed: u64, earlier: usize, threshold: f64, sizes: Option<f64>) -> Trace {
    let (state, scales) = project_scales(seed);
    let night = |n: u64| projects_night(state, n, &scales, threshold, sizes);
    let (lines, max_rate) = night(0);
    let mut history = Vec::new();
    for k in 1..=earlier as u64 {
        let (past, _) = night(k);
        #[allow(clippy::cast_possible_wrap)]
        history.extend(runs_of(&past, -(k as i64) * 24 * 60));
    }
    Trace::new(Some(seed), lines, history, max_rate)
}

/// The earlier night `k` (days before tonight) of [`projects`]'s night `seed`.
pub(super) fn projects_earlier(
    seed: u64,
    k: usize,
    threshold: f64,
    sizes: Option<f64>,
) -> Vec<Line> {
    let (state, scales) = project_scales(seed);
    projects_night(state, k as u64, &scales, threshold, sizes).0
}

/// The projects of night `seed` of the "projects" kind: its random state and each project's
/// scale (0.5–2.2× its kinds' means), the same on every earlier night of those projects.
fn project_scales(seed: u64) -> (u64, Vec<f64>) {
    let state = 0x9A0_0000 + seed * 7919;
    let mut rng = Rng(state);
    (state, (0..PROJECTS).map(|_| rng.range(0.5, 2.2)).collect())
}

/// One night of the projects' lines (`n`: 0 tonight, k the night k days before), and the
/// fastest rate in it.
fn projects_night(
    state: u64,
    n: u64,
    scales: &[f64],
    threshold: f64,
    sizes: Option<f64>,
) -> (Vec<Line>, f64) {
    let mut rng = Rng(state ^ (n + 1).wrapping_mul(0x2545_F491_4F6C_DD1D));
    let mut judge = Rng(state ^ 0x5123_0000_0000 ^ n);
    let mut max_rate: f64 = 0.0;
    let mut lines = Vec::new();
    for _ in 0..PROJECT_LINES {
        #[allow(clippy::cast_possible_truncation)]
        let p = (rng.next_u64() % scales.len() as u64) as usize;
        let scale = scales[p];
        #[allow(clippy::cast_possible_truncation)]
        let executors = 1 + (rng.next_u64() % 8) as usize;
        let mut kinds = vec![StepKind::Planner];
        kinds.extend(std::iter::repeat_n(StepKind::Executor, executors));
        kinds.extend([StepKind::Reviewer, StepKind::Fixer]);
        let steps = kinds
            .iter()
            .map(|&kind| {
                let rel = if kind == StepKind::Executor {
                    pareto(&mut rng, PARETO_ALPHA).min(0.4 * threshold / (kind_mean(kind) * scale))
                } else {
                    rng.lognormal(0.5)
                };
                let cost = kind_mean(kind) * scale * rel;
                let rate = 0.08 * rng.range(0.7, 1.3);
                max_rate = max_rate.max(rate);
                #[allow(clippy::cast_possible_truncation)]
                let minutes = ((cost / rate).round() as i64).max(2);
                let size = sizes.and_then(|sigma| {
                    (kind == StepKind::Executor).then(|| planned_size(rel, sigma, judge.normal()))
                });
                Step {
                    kind,
                    size,
                    cost,
                    minutes,
                }
            })
            .collect();
        lines.push(Line {
            project: format!("p{p}"),
            #[allow(clippy::cast_possible_truncation)]
            priority: (rng.next_u64() % 10) as u32,
            steps,
            next: 0,
            cap_misses: 0,
            abandoned: false,
            running: None,
            kept: 0.0,
        });
    }
    (lines, max_rate)
}

/// An earlier night's steps as the history the daemon keeps of them: every step finished,
/// one after another per line, the night starting `start_min` minutes from tonight's start.
pub(super) fn runs_of(lines: &[Line], start_min: i64) -> Vec<Run> {
    let mut runs = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        #[allow(clippy::cast_possible_wrap)]
        let mut at = start_min + i as i64;
        for (j, s) in l.steps.iter().enumerate() {
            runs.push(Run {
                kind: s.kind,
                project: l.project.clone(),
                step_id: format!("{}/{start_min}/{i}/{j}", l.project),
                size: s.size,
                cost_usd: s.cost,
                started_ms: at * MIN_MS,
                finished_ms: (at + s.minutes) * MIN_MS,
                outcome: Outcome::Done,
            });
            at += s.minutes;
        }
    }
    runs
}
