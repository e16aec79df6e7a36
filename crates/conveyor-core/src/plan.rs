//! The planner's plan, written to `$CONVEYOR_PLAN`:
//! `{"level", "steps": [{"title", "task", "size", "checks": [{"cmd", "expect_exit"}]}]}`
//! (`size`, optional: xs, s, m, l, xl).
//! The daemon validates it with [`parse`] and turns its steps into executor steps.

use conveyor_api::{Level, StepSize};
use serde::Deserialize;

/// One machine-checkable criterion: a command and the exit code it must give.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    pub cmd: String,
    #[serde(default)]
    pub expect_exit: i32,
}

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
    /// The planner's guess of the step's size: the budget's estimate of it learns from the
    /// runs of its kind and size.
    #[serde(default)]
    pub size: Option<StepSize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlan {
    #[serde(default)]
    level: Option<String>,
    steps: Vec<PlannedStep>,
}

/// The planner's Stop-hook check as a Node script (`node <script> <plan file>`; the CLI needs
/// Node, so it is there): the same rules as [`parse`] — the plan parses and has at least one
/// step — so the agent hears what is wrong before it stops. Exit 0 when the plan is good, else
/// 1 with the problem on stdout. The daemon still runs [`parse`] after the run and trusts only
/// that.
pub const NODE_CHECK: &str = r#"'use strict';
const fs = require('fs');
const MAX_STEPS = __MAX_STEPS__;
const SIZES = ['xs', 's', 'm', 'l', 'xl'];
const file = process.argv[2];
const fail = (m) => { console.log(m); process.exit(1); };
const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
let text;
try { text = fs.readFileSync(file, 'utf8'); } catch (e) { fail(`no plan was written to $CONVEYOR_PLAN (${file}): ${e.code || e.message}`); }
let p;
try { p = JSON.parse(text); } catch (e) { fail(`the plan is not valid JSON: ${e.message}`); }
if (!isObj(p)) fail('the plan must be a JSON object {"level", "steps": [...]}');
for (const k of Object.keys(p)) if (k !== 'level' && k !== 'steps') fail(`the plan has an unknown field ${JSON.stringify(k)} (level, steps)`);
if (p.level !== undefined && p.level !== null && !['light', 'medium', 'full'].includes(p.level)) fail(`unknown level ${JSON.stringify(p.level)} (light, medium, full)`);
if (!Array.isArray(p.steps)) fail('the plan needs "steps": a list of {"title", "task", "size", "checks"}');
if (p.steps.length === 0) fail('the plan has no steps');
if (p.steps.length > MAX_STEPS) fail(`the plan has ${p.steps.length} steps, at most ${MAX_STEPS}`);
p.steps.forEach((s, i) => {
  const n = i + 1;
  if (!isObj(s)) fail(`step ${n} must be an object {"title", "task", "size", "checks"}`);
  for (const k of Object.keys(s)) if (!['title', 'task', 'size', 'checks'].includes(k)) fail(`step ${n} has an unknown field ${JSON.stringify(k)} (title, task, size, checks)`);
  if (typeof s.title !== 'string' || typeof s.task !== 'string' || !s.title.trim() || !s.task.trim()) fail(`step ${n} needs a title and a task`);
  if (s.size !== undefined && s.size !== null && !SIZES.includes(s.size)) fail(`step ${n}: unknown size ${JSON.stringify(s.size)} (${SIZES.join(', ')})`);
  if (s.checks === undefined) return;
  if (!Array.isArray(s.checks)) fail(`step ${n}: "checks" must be a list of {"cmd", "expect_exit"}`);
  for (const c of s.checks) {
    if (!isObj(c)) fail(`step ${n}: a check must be an object {"cmd", "expect_exit"}`);
    for (const k of Object.keys(c)) if (k !== 'cmd' && k !== 'expect_exit') fail(`step ${n}: a check has an unknown field ${JSON.stringify(k)} (cmd, expect_exit)`);
    if (typeof c.cmd !== 'string' || !c.cmd.trim()) fail(`step ${n} has a check with an empty cmd`);
    if (c.expect_exit !== undefined && !(Number.isInteger(c.expect_exit) && Math.abs(c.expect_exit) < 2 ** 31)) fail(`step ${n}: expect_exit must be an integer`);
  }
});
"#;

/// What is wrong with a plan, in words the agent can act on.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("the plan is not valid JSON of the expected shape: {0}")]
    Shape(#[from] serde_json::Error),
    #[error("unknown level {0:?} (light, medium, full)")]
    UnknownLevel(String),
    #[error("the plan has no steps")]
    NoSteps,
    #[error("the plan has {0} steps, at most {MAX_STEPS}")]
    TooManySteps(usize),
    /// Step `n` (from 1) has an empty title or task.
    #[error("step {0} needs a title and a task")]
    Untitled(usize),
    /// Step `n` (from 1) has a check with an empty command.
    #[error("step {0} has a check with an empty cmd")]
    EmptyCheck(usize),
}

/// Parses and validates plan text.
///
/// # Errors
/// [`PlanError`]: what is wrong.
pub fn parse(text: &str) -> Result<Plan, PlanError> {
    let raw: RawPlan = serde_json::from_str(text)?;
    let level = match raw.level.as_deref() {
        None => Level::Medium,
        Some(l) => Level::parse(l).ok_or_else(|| PlanError::UnknownLevel(l.into()))?,
    };
    if raw.steps.is_empty() {
        return Err(PlanError::NoSteps);
    }
    if raw.steps.len() > MAX_STEPS {
        return Err(PlanError::TooManySteps(raw.steps.len()));
    }
    for (i, s) in raw.steps.iter().enumerate() {
        if s.title.trim().is_empty() || s.task.trim().is_empty() {
            return Err(PlanError::Untitled(i + 1));
        }
        if s.checks.iter().any(|c| c.cmd.trim().is_empty()) {
            return Err(PlanError::EmptyCheck(i + 1));
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
        assert_eq!(p.steps[0].size, None);
    }

    #[test]
    fn a_step_may_carry_the_planners_size() {
        let p = parse(
            r#"{"steps":[{"title":"a","task":"x","size":"xs"},{"title":"b","task":"y","size":"xl"},{"title":"c","task":"z","size":null}]}"#,
        )
        .unwrap();
        let sizes: Vec<_> = p.steps.iter().map(|s| s.size).collect();
        assert_eq!(sizes, [Some(StepSize::Xs), Some(StepSize::Xl), None]);
        let e = parse(r#"{"steps":[{"title":"a","task":"x","size":"huge"}]}"#).unwrap_err();
        assert!(e.to_string().contains("unknown variant `huge`"), "{e}");
    }

    #[test]
    fn refuses_empty_and_broken_plans() {
        assert!(matches!(parse(r#"{"steps":[]}"#), Err(PlanError::NoSteps)));
        assert!(matches!(parse("{"), Err(PlanError::Shape(_))));
        assert!(matches!(
            parse(r#"{"level":"huge","steps":[{"title":"t","task":"x"}]}"#),
            Err(PlanError::UnknownLevel(l)) if l == "huge"
        ));
        assert!(matches!(
            parse(r#"{"steps":[{"title":"","task":"x"}]}"#),
            Err(PlanError::Untitled(1))
        ));
        assert_eq!(
            parse(r#"{"steps":[]}"#).unwrap_err().to_string(),
            "the plan has no steps"
        );
    }
}
