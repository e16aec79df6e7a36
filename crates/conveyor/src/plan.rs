//! The planner's plan, written to `$CONVEYOR_PLAN`:
//! `{"level", "steps": [{"title", "task", "checks": [{"cmd", "expect_exit"}]}]}`.
//! The daemon validates it and turns its steps into executor steps.

use conveyor_api::Level;
use serde::Deserialize;

use crate::config::Check;

/// The most steps a plan may have.
pub const MAX_STEPS: usize = 30;

/// A validated plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub level: Level,
    pub steps: Vec<PlannedStep>,
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlannedStep {
    pub title: String,
    pub task: String,
    #[serde(default)]
    pub checks: Vec<Check>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlan {
    #[serde(default)]
    level: Option<String>,
    steps: Vec<PlannedStep>,
}

/// Parses and validates plan text.
///
/// # Errors
/// What is wrong, in words the agent can act on.
pub fn parse(text: &str) -> Result<Plan, String> {
    let raw: RawPlan = serde_json::from_str(text)
        .map_err(|e| format!("the plan is not valid JSON of the expected shape: {e}"))?;
    let level = match raw.level.as_deref() {
        None => Level::Medium,
        Some(l) => {
            Level::parse(l).ok_or_else(|| format!("unknown level {l:?} (light, medium, full)"))?
        }
    };
    if raw.steps.is_empty() {
        return Err("the plan has no steps".into());
    }
    if raw.steps.len() > MAX_STEPS {
        return Err(format!(
            "the plan has {} steps, at most {MAX_STEPS}",
            raw.steps.len()
        ));
    }
    for (i, s) in raw.steps.iter().enumerate() {
        if s.title.trim().is_empty() || s.task.trim().is_empty() {
            return Err(format!("step {} needs a title and a task", i + 1));
        }
        if s.checks.iter().any(|c| c.cmd.trim().is_empty()) {
            return Err(format!("step {} has a check with an empty cmd", i + 1));
        }
    }
    Ok(Plan {
        level,
        steps: raw.steps,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_design_shape() {
        let p = parse(
            r#"{"level":"light","steps":[{"title":"t","task":"do","checks":[{"cmd":"true","expect_exit":0}]}]}"#,
        )
        .unwrap();
        assert_eq!(p.level, Level::Light);
        assert_eq!(p.steps[0].checks[0].cmd, "true");
    }

    #[test]
    fn refuses_empty_and_broken_plans() {
        assert!(parse(r#"{"steps":[]}"#).unwrap_err().contains("no steps"));
        assert!(parse("{").is_err());
        assert!(parse(r#"{"level":"huge","steps":[{"title":"t","task":"x"}]}"#).is_err());
        assert!(parse(r#"{"steps":[{"title":"","task":"x"}]}"#).is_err());
    }
}
