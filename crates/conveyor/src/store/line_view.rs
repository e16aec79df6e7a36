//! A line as the API shows it: its row, its steps with what their runs cost, and what its
//! runs left beside them (the guard's denials, the sandbox's refusals, the deploys). It reads
//! five tables, so it stands above their files; none of them imports it.

use std::collections::HashMap;

use conveyor_api as api;
use sqlx::SqliteConnection;

use super::lines::{self, LineRow};
use super::steps::{self, StepWithCost};
use super::{deploys, refusals, runs};
use crate::error::Result;

/// One line as the API shows it; `None` when there is no such line.
///
/// # Errors
/// Database errors.
pub async fn get(c: &mut SqliteConnection, id: &str) -> Result<Option<api::Line>> {
    let Some(l) = lines::get(&mut *c, id).await? else {
        return Ok(None);
    };
    let steps = steps::with_cost(&mut *c, id).await?;
    let mut line = [l.to_api(steps.iter().map(StepWithCost::to_api).collect())];
    with_aftermath(&mut *c, &mut line).await?;
    let [line] = line;
    Ok(Some(line))
}

/// These lines as the API shows them, in their order, read for all of them at once.
///
/// # Errors
/// Database errors.
pub async fn of_rows(c: &mut SqliteConnection, rows: &[LineRow]) -> Result<Vec<api::Line>> {
    let ids: Vec<String> = rows.iter().map(|l| l.id.clone()).collect();
    let mut steps: HashMap<String, Vec<api::Step>> = HashMap::new();
    for s in steps::with_cost_for(&mut *c, &ids).await? {
        steps.entry(s.line_id.clone()).or_default().push(s.to_api());
    }
    let mut lines: Vec<api::Line> = rows
        .iter()
        .map(|l| l.to_api(steps.remove(&l.id).unwrap_or_default()))
        .collect();
    with_aftermath(&mut *c, &mut lines).await?;
    Ok(lines)
}

/// Fills in what the lines' runs left beside their steps: the guard's denials, the sandbox's
/// refusals and the deploys (one query each for all the lines).
///
/// # Errors
/// Database errors.
pub async fn with_aftermath(c: &mut SqliteConnection, lines: &mut [api::Line]) -> Result<()> {
    let ids: Vec<String> = lines.iter().map(|l| l.id.clone()).collect();
    let mut denials = runs::denials_of(&mut *c, &ids).await?;
    let mut refused = refusals::of_lines(&mut *c, &ids).await?;
    let mut deploys = deploys::of_lines(&mut *c, &ids).await?;
    for l in lines {
        l.denials = denials.remove(&l.id).unwrap_or_default();
        l.refusals = refused.remove(&l.id).unwrap_or_default();
        l.deploys = deploys.remove(&l.id).unwrap_or_default();
    }
    Ok(())
}
