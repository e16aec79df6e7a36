//! A failed round of checks: a fixer step, or Anton after [`GATE_ROUNDS`] in a row.

use conveyor_api::{LineState, ReasonCode, StepKind};

use crate::error::Result;
use crate::state::Shared;
use crate::store::{self, LineRow};

use conveyor_core::line::GATE_ROUNDS;

/// A failed round (a red gate or merge, a role's `rework`, a hook that blocked): a fixer
/// step in the line's session with `task`, or, after [`GATE_ROUNDS`] in a row, Anton gets a
/// question saying what fails and what was tried.
pub(super) async fn round_failed(
    sh: &Shared,
    line: &LineRow,
    code: ReasonCode,
    what: &str,
    task: &str,
) -> Result<()> {
    let failures = line.gate_failures + 1;
    store::lines::set_gate_failures(&mut *sh.store.conn().await?, &line.id, failures).await?;
    if failures >= GATE_ROUNDS {
        let steps = store::steps::of_line(&mut *sh.store.conn().await?, &line.id).await?;
        let tried: Vec<String> = steps
            .iter()
            .filter(|s| s.kind == StepKind::Fixer && s.state == conveyor_api::StepState::Done)
            .rev()
            .take(GATE_ROUNDS as usize - 1)
            .map(|s| {
                // The task after its first line is what the round asked to fix.
                let asked = s.task.split_once('\n').map_or(s.task.as_str(), |(_, r)| r);
                let asked: String = asked.split_whitespace().collect::<Vec<_>>().join(" ");
                let short: String = asked.chars().take(160).collect();
                format!("step {}: {short}", s.n)
            })
            .collect();
        let tried = if tried.is_empty() {
            "nothing yet".to_string()
        } else {
            format!("{} fixer rounds: {}", tried.len(), tried.join("; "))
        };
        return super::answer::needs_anton(
            sh,
            &line.id,
            (
                ReasonCode::GateFailed,
                &format!("cannot pass the check: {what}; tried {tried}"),
            ),
        )
        .await;
    }
    store::steps::add(
        &mut *sh.store.conn().await?,
        &line.id,
        StepKind::Fixer,
        "fix what the check found",
        task,
        &[],
    )
    .await?;
    sh.set_line_state(&line.id, LineState::Fixing, Some((code, what)), None)
        .await
}
