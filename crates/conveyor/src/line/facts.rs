//! What the parts of a line's flow read about the line: its steps as the core's decisions see
//! them, whether it was cancelled, and the project's latest decisions.

use conveyor_api::LineState;

use crate::error::Result;
use crate::state::Shared;
use crate::store::{self, StepRow};

/// Runs of one step attempt that may switch between `--session-id` and `--resume`.
pub(crate) const SESSION_TRIES: usize = 3;

pub(crate) fn open(s: &StepRow) -> bool {
    conveyor_core::line::open(s.state)
}

/// The step to run next ([`conveyor_core::line::next_step`]).
pub(super) fn next_step(steps: &[StepRow]) -> Option<&StepRow> {
    let seen = decision_steps(steps);
    let id = conveyor_core::line::next_step(&seen)?.id;
    steps.iter().find(|s| s.id == id)
}

pub(super) fn decision_steps(steps: &[StepRow]) -> Vec<conveyor_core::line::Step<'_>> {
    steps
        .iter()
        .map(|s| conveyor_core::line::Step {
            id: &s.id,
            kind: s.kind,
            size: s.size,
            state: s.state,
        })
        .collect()
}

/// The project's latest `limit` decisions taken without Anton, as prompt lines (`text (why:
/// …)`): the catalogue fed back to the agents and the judge.
pub(super) async fn latest_decisions(
    sh: &Shared,
    project_id: &str,
    limit: i64,
) -> Result<Vec<String>> {
    Ok(
        store::questions::decisions(&mut *sh.store.conn().await?, Some(project_id), false, limit)
            .await?
            .into_iter()
            .map(|d| match d.why {
                Some(w) => format!("{} (why: {w})", d.text),
                None => d.text,
            })
            .collect(),
    )
}

pub(super) async fn is_cancelled(sh: &Shared, line_id: &str) -> Result<bool> {
    Ok(
        store::lines::state_of(&mut *sh.store.conn().await?, line_id).await?
            == Some(LineState::Cancelled),
    )
}
