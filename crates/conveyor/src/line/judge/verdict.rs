//! A judge run's end: a valid verdict applied with the step's end in one transaction, or a
//! run that gave none counted towards showing the entries to Anton as asked.

use std::collections::HashMap;
use std::path::PathBuf;

use conveyor_api::{DecisionSource, QuestionStatus, StepState};

use crate::error::Result;
use crate::judge::rules;
use crate::judge::verdict::{self, Call};
use crate::state::Shared;
use crate::store::questions::{self, Verdict};
use crate::store::runs::{self, RunOutcome};
use crate::store::{self, LineRow, QuestionRow, StepRow};

use super::sort::add_rework;

/// Failed judge runs of one step before its entries are shown to Anton as asked.
pub(crate) const JUDGE_RUNS: i64 = 3;

/// A valid verdict: every entry's new status, one rework step for what goes back, the level
/// raised, the run ok and the step done — one transaction.
pub(super) async fn apply(
    sh: &Shared,
    line: &LineRow,
    step: &StepRow,
    run_id: i64,
    entries: &[QuestionRow],
    v: &verdict::Verdict,
) -> Result<()> {
    let blocked = before_question(sh, line, entries, v).await?;
    let now = sh.clock.now_ms();
    let by_day = rules::by_day(sh.cfg.night().as_ref(), now);
    let mut tx = sh.store.begin().await?;
    let mut rework = Vec::new();
    let mut validated = 0;
    let mut told = false;
    for e in &v.entries {
        let Some(q) = entries.iter().find(|q| q.id == e.id) else {
            continue;
        };
        let (status, by, why) = match e.verdict {
            Call::Validated if let Some(why) = blocked.get(&q.id) => {
                rework.push((q, why.as_str()));
                continue;
            }
            Call::Rework if q.reworks >= rules::MAX_REWORKS => (
                QuestionStatus::Validated,
                DecisionSource::Daemon,
                format!(
                    "sent back {} times already; shown as asked (the judge: {})",
                    q.reworks, e.why
                ),
            ),
            Call::Rework => {
                rework.push((q, e.why.as_str()));
                continue;
            }
            Call::Validated => (
                QuestionStatus::Validated,
                DecisionSource::Judge,
                e.why.clone(),
            ),
            Call::Duplicate => (
                QuestionStatus::Duplicate,
                DecisionSource::Judge,
                e.why.clone(),
            ),
            Call::Decided => (
                QuestionStatus::Decided,
                DecisionSource::Judge,
                e.why.clone(),
            ),
        };
        validated += usize::from(status == QuestionStatus::Validated);
        let urgent = status == QuestionStatus::Validated
            && by_day
            && rules::grave(
                e.reversible.or(q.said.reversible),
                e.expensive.or(q.said.expensive),
            );
        questions::set_verdict(
            &mut tx,
            &q.id,
            &Verdict {
                status,
                by,
                why: &why,
                duplicate_of: e
                    .duplicate_of
                    .as_deref()
                    .filter(|_| status == QuestionStatus::Duplicate),
                urgent,
                now,
            },
        )
        .await?;
        if urgent {
            told |= crate::tell::on_urgent_question(&mut tx, &sh.cfg, &q.id, now).await?;
        }
    }
    if !rework.is_empty() {
        add_rework(&mut tx, &line.id, &rework, DecisionSource::Judge).await?;
    }
    if let Some(level) = v.level {
        store::lines::raise_level(
            &mut tx,
            &line.id,
            level,
            "the judge raised it on reading the line's entries",
            now,
        )
        .await?;
    }
    runs::set_outcome(&mut tx, run_id, RunOutcome::Ok).await?;
    store::steps::set_state(&mut tx, &step.id, StepState::Done, None).await?;
    tx.commit().await?;
    if told {
        sh.told();
    }
    sh.set_step_state(&line.id, &step.id, step.n, StepState::Done, None)
        .await?;
    sh.announce_questions(&line.id, validated);
    Ok(())
}

/// The project's `before_question` hook over the entries the judge validated (those sent
/// back twice already reach Anton whatever it says): the ids it blocks, with its reason.
///
/// # Errors
/// Database, file and git errors.
async fn before_question(
    sh: &Shared,
    line: &LineRow,
    entries: &[QuestionRow],
    v: &verdict::Verdict,
) -> Result<HashMap<String, String>> {
    let mut blocked = HashMap::new();
    let Ok((list, _, repo, main_branch)) = super::super::checklist::checklist(sh, line).await?
    else {
        // A checklist that does not parse stops the line at its gate, saying so.
        return Ok(blocked);
    };
    let Some(cmd) = list.hooks.before_question else {
        return Ok(blocked);
    };
    let worktree = PathBuf::from(line.worktree.clone().unwrap_or_default());
    let fork = super::super::checklist::fork_of(&repo, &main_branch, line, &sh.shutdown).await?;
    let diff_stat: String = fork
        .files
        .iter()
        .map(|f| format!("{} ({})\n", f.path, f.change.as_str()))
        .collect();
    for e in v.entries.iter().filter(|e| e.verdict == Call::Validated) {
        let Some(q) = entries
            .iter()
            .find(|q| q.id == e.id && q.reworks < rules::MAX_REWORKS)
        else {
            continue;
        };
        let entry = serde_json::json!({
            "id": q.id,
            "kind": q.kind.as_str(),
            "text": q.said.text,
            "options": q.said.options(),
            "default": q.said.default_opt,
            "why": q.said.why,
            "reversible": q.said.reversible,
            "expensive": q.said.expensive,
        });
        if let Some(why) = super::super::hooks::run(
            sh,
            line,
            (super::super::hooks::Boundary::Question, &cmd),
            Some(entry),
            &diff_stat,
            &worktree,
            &sh.shutdown,
        )
        .await?
        {
            blocked.insert(q.id.clone(), why);
        }
    }
    Ok(blocked)
}

/// A judge run that gave no usable verdict: again, or after [`JUDGE_RUNS`] failures its
/// entries are shown to Anton as asked — never a silent pass.
pub(super) async fn judge_failed(
    sh: &Shared,
    line: &LineRow,
    step: &StepRow,
    run_id: i64,
    entries: &[QuestionRow],
    reason: &str,
) -> Result<()> {
    runs::set_outcome(&mut *sh.store.conn().await?, run_id, RunOutcome::Failed).await?;
    let failed = runs::count_of_step(
        &mut *sh.store.conn().await?,
        &step.id,
        &[RunOutcome::Failed],
    )
    .await?;
    tracing::warn!(line = %line.id, step = step.n, failed, reason, "judge run failed");
    if failed < JUDGE_RUNS {
        store::steps::roll_back(
            &mut *sh.store.conn().await?,
            &step.id,
            StepState::Pending,
            &format!("the previous judge run failed: {reason}"),
            Some(reason),
        )
        .await?;
        return sh
            .set_step_state(&line.id, &step.id, step.n, StepState::Pending, Some(reason))
            .await;
    }
    let why = format!("the judge failed {failed} times (last: {reason}); shown as asked");
    let now = sh.clock.now_ms();
    let mut tx = sh.store.begin().await?;
    for q in entries {
        questions::set_verdict(
            &mut tx,
            &q.id,
            &Verdict {
                status: QuestionStatus::Validated,
                by: DecisionSource::Daemon,
                why: &why,
                duplicate_of: None,
                urgent: false,
                now,
            },
        )
        .await?;
    }
    store::steps::set_state(&mut tx, &step.id, StepState::Failed, Some(&why)).await?;
    tx.commit().await?;
    sh.set_step_state(&line.id, &step.id, step.n, StepState::Failed, Some(&why))
        .await?;
    sh.announce_questions(&line.id, entries.len());
    Ok(())
}
