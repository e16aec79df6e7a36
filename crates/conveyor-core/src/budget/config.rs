//! `[budget]` of `conveyor.toml`: the pools, the estimates and caps, the threshold (a number or
//! `"auto"`) and the prices of the models.

use std::collections::BTreeMap;

use serde::Deserialize;

/// A `[budget]` that parses but cannot be used: the field (under `budget.`) and the rule it
/// breaks. The daemon's config error names it as `budget.<field> <rule>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("budget.{field} {rule}")]
pub struct InvalidBudget {
    pub field: String,
    pub rule: &'static str,
}

/// Budget pools, estimates and caps (`[budget]`). Every pool is optional: the rolling window
/// (off with `window_secs = 0`), the weekly cap and the monthly credit (each on when its
/// threshold is set).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BudgetConfig {
    /// Length of the rolling window, in seconds (5 hours by default); 0 turns the window off.
    pub window_secs: u32,
    /// The window's threshold: spent in the window + estimates of running steps + the new
    /// step's estimate must stay at or below this, in the CLI's USD; or `"auto"`: the size
    /// the server's utilisation shows (`budget::calibration`), kept between
    /// `threshold_floor_usd` and `threshold_ceiling_usd` (the floor until there is one).
    pub threshold_usd: Threshold,
    /// With `threshold_usd = "auto"`: never below this (and this until the server has said).
    pub threshold_floor_usd: f64,
    /// With `threshold_usd = "auto"`: never above this.
    pub threshold_ceiling_usd: f64,
    /// A weekly cap over the last 7 days, when set.
    pub weekly_threshold_usd: Option<f64>,
    /// The monthly credit (calendar month, UTC), when set: `claude -p` on subscription plans
    /// draws from a monthly Agent-SDK credit in dollars.
    pub monthly_threshold_usd: Option<f64>,
    /// The day of the month (1–28) at 00:00 UTC on which the monthly credit renews.
    pub monthly_reset_day: u32,
    /// The cold-start estimate of a step kind with no history (scaled per kind, see
    /// `cold_start_usd`).
    pub default_estimate_usd: f64,
    /// Cold-start estimates per step kind (`planner = 0.5`, …), overriding the built-in
    /// multiples of `default_estimate_usd`.
    pub cold_start_usd: BTreeMap<String, f64>,
    /// The quantile of a kind's recent costs the estimate starts from (0.5–1.0).
    pub estimate_quantile: f64,
    /// Added on top of the quantile: estimate = quantile × (1 + margin).
    pub margin: f64,
    /// Finished runs of a kind the estimate looks at (the most recent).
    pub history_runs: u32,
    /// A project with at least this many finished runs of a kind gets its own estimate.
    pub project_min_runs: u32,
    /// Factor applied to a kind's estimate per miss (a usage limit or the `--max-budget-usd`
    /// cap cut one of its recent steps), up to three misses.
    pub miss_factor: f64,
    /// `--max-budget-usd` of a step = its estimate × this (generous: the cap is a safety net
    /// for runaway steps, not the budget itself); 0 passes no cap.
    pub max_budget_factor: f64,
    /// Near the threshold, also weigh the chance that the steps in flight overrun it together
    /// against what waiting costs (`Policy::risk`); false keeps the claims rule alone.
    pub weigh_tail: bool,
    /// Misses in the last 24 hours at which the API says "steps too large: cut them finer".
    pub miss_advice_count: u32,
    /// Prices per model in USD per million tokens, for the live cost of a running step
    /// (`[budget.prices."claude-opus-5-5"] input = 4 …`); added to the built-in table
    /// (the daemon's `budget::Prices`).
    pub prices: BTreeMap<String, Price>,
}

/// A model's prices, USD per million tokens (`[budget.prices."<model>"]`; the built-in table is
/// the daemon's `budget::Prices`).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
}

/// `threshold_usd`: a number of USD, or `"auto"`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Threshold {
    Usd(f64),
    /// From the server's utilisation, between the floor and the ceiling.
    Auto,
}

impl Threshold {
    /// The fixed value; `None` for `"auto"`.
    pub fn fixed(self) -> Option<f64> {
        match self {
            Threshold::Usd(v) => Some(v),
            Threshold::Auto => None,
        }
    }
}

impl<'de> Deserialize<'de> for Threshold {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Threshold, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Threshold;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("budget.threshold_usd to be a number of USD or \"auto\"")
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Threshold, E> {
                Ok(Threshold::Usd(v))
            }
            #[allow(clippy::cast_precision_loss)]
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Threshold, E> {
                Ok(Threshold::Usd(v as f64))
            }
            #[allow(clippy::cast_precision_loss)]
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Threshold, E> {
                Ok(Threshold::Usd(v as f64))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Threshold, E> {
                if v == "auto" {
                    Ok(Threshold::Auto)
                } else {
                    Err(E::invalid_value(serde::de::Unexpected::Str(v), &self))
                }
            }
        }
        d.deserialize_any(V)
    }
}

impl Default for BudgetConfig {
    fn default() -> Self {
        BudgetConfig {
            window_secs: 5 * 3600,
            threshold_usd: Threshold::Usd(50.0),
            threshold_floor_usd: 20.0,
            threshold_ceiling_usd: 500.0,
            weekly_threshold_usd: None,
            monthly_threshold_usd: None,
            monthly_reset_day: 1,
            default_estimate_usd: 1.0,
            cold_start_usd: BTreeMap::new(),
            weigh_tail: true,
            estimate_quantile: 0.9,
            margin: 0.15,
            history_runs: 30,
            project_min_runs: 8,
            miss_factor: 1.5,
            max_budget_factor: 4.0,
            miss_advice_count: 3,
            prices: BTreeMap::new(),
        }
    }
}

impl BudgetConfig {
    /// Checks the values serde cannot: signs, ranges, the step kinds named.
    ///
    /// # Errors
    /// The first field that breaks its rule.
    pub fn validate(&self) -> Result<(), InvalidBudget> {
        let positive = |field: &'static str, v: f64| {
            if v > 0.0 && v.is_finite() {
                Ok(())
            } else {
                Err(InvalidBudget {
                    field: field.into(),
                    rule: "must be positive",
                })
            }
        };
        match self.threshold_usd {
            Threshold::Usd(v) if self.window_secs > 0 => positive("threshold_usd", v)?,
            Threshold::Usd(_) => {}
            Threshold::Auto => {
                positive("threshold_floor_usd", self.threshold_floor_usd)?;
                if !(self.threshold_ceiling_usd >= self.threshold_floor_usd
                    && self.threshold_ceiling_usd.is_finite())
                {
                    return Err(InvalidBudget {
                        field: "threshold_ceiling_usd".into(),
                        rule: "must be at least threshold_floor_usd",
                    });
                }
            }
        }
        for (model, p) in &self.prices {
            for (name, v) in [
                ("input", p.input),
                ("output", p.output),
                ("cache_read", p.cache_read),
                ("cache_write", p.cache_write),
            ] {
                if !(v >= 0.0 && v.is_finite()) {
                    return Err(InvalidBudget {
                        field: format!("prices.{model}.{name}"),
                        rule: "must be zero or more (USD per million tokens)",
                    });
                }
            }
        }
        if let Some(w) = self.weekly_threshold_usd {
            positive("weekly_threshold_usd", w)?;
        }
        if let Some(m) = self.monthly_threshold_usd {
            positive("monthly_threshold_usd", m)?;
        }
        if !(1..=28).contains(&self.monthly_reset_day) {
            return Err(InvalidBudget {
                field: "monthly_reset_day".into(),
                rule: "must be between 1 and 28",
            });
        }
        positive("default_estimate_usd", self.default_estimate_usd)?;
        for (kind, v) in &self.cold_start_usd {
            if conveyor_api::StepKind::parse(kind).is_none() {
                return Err(InvalidBudget {
                    field: format!("cold_start_usd.{kind}"),
                    rule: "is not a step kind (planner, executor, reviewer, tester, skeptic, fixer, remarks)",
                });
            }
            if !(*v > 0.0 && v.is_finite()) {
                return Err(InvalidBudget {
                    field: format!("cold_start_usd.{kind}"),
                    rule: "must be positive",
                });
            }
        }
        if !(0.5..=1.0).contains(&self.estimate_quantile) {
            return Err(InvalidBudget {
                field: "estimate_quantile".into(),
                rule: "must be between 0.5 and 1.0",
            });
        }
        if !(self.margin >= 0.0 && self.margin.is_finite()) {
            return Err(InvalidBudget {
                field: "margin".into(),
                rule: "must be zero or more",
            });
        }
        if self.history_runs == 0 {
            return Err(InvalidBudget {
                field: "history_runs".into(),
                rule: "must be at least 1",
            });
        }
        if !(self.miss_factor >= 1.0 && self.miss_factor.is_finite()) {
            return Err(InvalidBudget {
                field: "miss_factor".into(),
                rule: "must be at least 1",
            });
        }
        if !(self.max_budget_factor == 0.0 || self.max_budget_factor >= 1.0)
            || !self.max_budget_factor.is_finite()
        {
            return Err(InvalidBudget {
                field: "max_budget_factor".into(),
                rule: "must be 0 (no cap) or at least 1",
            });
        }
        Ok(())
    }
}
