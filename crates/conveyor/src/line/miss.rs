//! Misses: a run cut by the account's usage limit or by its own `--max-budget-usd` cap. A miss
//! is data, not a failure: the worktree goes back to the checkpoint, the step waits pending
//! (the run stays in the runs table, raising its kind's estimate), and the line waits for the
//! budget, which resumes the same session when the step fits.

use std::path::Path;

use conveyor_api::{EventKind, LineState, ReasonCode, StepState};

use crate::error::Result;
use crate::events::EventBody;
use crate::git;
use crate::state::Shared;
use crate::store::runs::{self, RunOutcome};
use crate::store::{self, LineRow, StepRow, now_ms, rfc3339};

use super::finish::stop_line;

/// A usage limit cut the run: the account is parked until the reset the CLI reported (or
/// `limit_retry_secs` when it said none), so no line's next step starts before then; the step
/// itself is a miss.
pub(super) async fn usage_limit_hit(
    sh: &Shared,
    line: &LineRow,
    step: &StepRow,
    at: (&Path, &str),
    resets_at: Option<i64>,
    message: &str,
) -> Result<()> {
    let until = resets_at.map_or_else(
        || now_ms() + i64::try_from(sh.cfg.limit_retry_secs).unwrap_or(900) * 1000,
        |s| s * 1000,
    );
    store::account::set_park_until(&mut *sh.store.conn().await?, until).await?;
    missed(
        sh,
        line,
        step,
        at,
        Miss {
            rolled_back: "a usage limit stopped the previous attempt",
            message,
            reason: &format!("usage limit: {message}"),
            park_until: Some(until),
            event: format!("parked until {}", rfc3339(until)),
        },
    )
    .await
}

/// Times a step may hit its `--max-budget-usd` cap before its line needs Anton: each miss
/// raises the estimate (and so the next cap), so a step that still does not fit is too large.
const CAP_MISSES: i64 = 3;

/// The run hit its `--max-budget-usd` cap: a miss. The worktree goes back to the checkpoint,
/// the step waits pending (the miss is in the runs table, so its kind's estimate and cap go
/// up), and the line goes back to the budget, which resumes the same session when the raised
/// estimate fits. After [`CAP_MISSES`] such misses of one step, Anton decides.
pub(super) async fn budget_cap_hit(
    sh: &Shared,
    line: &LineRow,
    step: &StepRow,
    (worktree, checkpoint): (&Path, &str),
    message: &str,
) -> Result<()> {
    let misses = runs::count_of_step(
        &mut *sh.store.conn().await?,
        &step.id,
        &[RunOutcome::MaxBudget],
    )
    .await?;
    if misses >= CAP_MISSES {
        let reason = format!(
            "the step hit its --max-budget-usd cap {misses} times ({message}): steps too large, cut it finer"
        );
        let why = (ReasonCode::BudgetCap, reason.as_str());
        return stop_line(sh, line, step, worktree, checkpoint, why).await;
    }
    missed(
        sh,
        line,
        step,
        (worktree, checkpoint),
        Miss {
            rolled_back: "its --max-budget-usd cap stopped the previous attempt",
            message,
            reason: &format!("budget cap: {message}; the estimate goes up"),
            park_until: None,
            event: format!("step {} hit its budget cap", step.n),
        },
    )
    .await
}

/// What a miss (a usage limit or the step's budget cap) says.
struct Miss<'a> {
    /// Told to the next attempt's prompt: why the worktree was rolled back.
    rolled_back: &'a str,
    /// The step's error.
    message: &'a str,
    /// The line's reason while it waits.
    reason: &'a str,
    park_until: Option<i64>,
    /// The budget event's detail.
    event: String,
}

/// The end of every miss: rollback, the step pending, the line waiting for the budget.
async fn missed(
    sh: &Shared,
    line: &LineRow,
    step: &StepRow,
    (worktree, checkpoint): (&Path, &str),
    miss: Miss<'_>,
) -> Result<()> {
    git::reset_to(worktree, checkpoint).await?;
    back_to_pending(sh, line, step, miss.rolled_back, miss.message).await?;
    sh.set_line_state(
        &line.id,
        LineState::WaitingBudget,
        Some((ReasonCode::BudgetMiss, miss.reason)),
        miss.park_until,
    )
    .await?;
    sh.events.emit(
        EventKind::Budget,
        EventBody {
            line_id: Some(line.id.clone()),
            detail: Some(miss.event),
            ..EventBody::default()
        },
    );
    Ok(())
}

/// The step waits pending to run again: `rolled_back` told to its next attempt, `message`
/// shown meanwhile.
///
/// # Errors
/// Database errors.
pub(super) async fn back_to_pending(
    sh: &Shared,
    line: &LineRow,
    step: &StepRow,
    rolled_back: &str,
    message: &str,
) -> Result<()> {
    store::steps::roll_back(
        &mut *sh.store.conn().await?,
        &step.id,
        StepState::Pending,
        rolled_back,
        None,
    )
    .await?;
    sh.set_step_state(
        &line.id,
        &step.id,
        step.n,
        StepState::Pending,
        Some(message),
    )
    .await
}
