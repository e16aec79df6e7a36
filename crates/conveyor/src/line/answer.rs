//! Anton's side of a line's questions (DESIGN.md, "The judge and the morning list", "States
//! and holding"): what holds a line whose steps are done, his answers — given, changed, taken
//! back — and the question every stopped line asks him.

use conveyor_api::{LineState, QuestionStatus, ReasonCode, StepKind, StepState};

use crate::error::Result;
use crate::state::Shared;
use crate::store::questions;
use crate::store::{self, QuestionRow};

/// The line's journal entries by where they stand, for [`conveyor_core::line::next_action`].
///
/// # Errors
/// Database errors.
pub(crate) async fn questions(
    c: &mut sqlx::SqliteConnection,
    line_id: &str,
) -> Result<conveyor_core::line::Questions> {
    use QuestionStatus::{Rework, Unvalidated, Validated};
    Ok(conveyor_core::line::Questions {
        unvalidated: questions::count_of_line(c, line_id, &[Unvalidated])
            .await?
            .into(),
        waiting: questions::count_of_line(c, line_id, &[Validated])
            .await?
            .into(),
        judging: questions::count_of_line(c, line_id, &[Unvalidated, Rework])
            .await?
            .into(),
    })
}

/// Waits in `waiting_answer` (its slot freed, its project kept) with why.
pub(crate) async fn wait(
    sh: &Shared,
    line_id: &str,
    (code, why): (ReasonCode, String),
) -> Result<()> {
    sh.set_line_state(line_id, LineState::WaitingAnswer, Some((code, &why)), None)
        .await
}

/// Why an answer cannot be taken.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum AnswerRefused {
    #[error("the question's line is {}: nothing would read the answer", .0.as_str())]
    LineFinished(LineState),
    #[error("the question is still being judged ({0}): it is not on the morning page yet")]
    NotJudged(QuestionStatus),
    #[error("the question repeats {0}: answer that one")]
    Duplicate(String),
    #[error("the answer step carrying its answer has started: it can no longer change")]
    Started,
    #[error("the question has no answer to take back")]
    NotAnswered,
}

/// Anton's answer: recorded on the question and on the questions judged its duplicates, an
/// `answer` step queued in each of their lines' sessions (one per line, carrying all its
/// undelivered answers), and a line that waited for it back to work — `running` from
/// `waiting_answer`, `queued` from `awaiting_acceptance` or `needs_human` — all in one
/// transaction.
///
/// # Errors
/// [`AnswerRefused`] inside `Ok(Err(..))`; database errors.
pub(crate) async fn answer(
    sh: &Shared,
    q: &QuestionRow,
    text: &str,
) -> Result<std::result::Result<(), AnswerRefused>> {
    if let Some(state @ (LineState::Accepted | LineState::Cancelled)) =
        store::lines::state_of(&mut *sh.store.conn().await?, &q.line_id).await?
    {
        return Ok(Err(AnswerRefused::LineFinished(state)));
    }
    match q.status {
        QuestionStatus::Unvalidated | QuestionStatus::Rework => {
            return Ok(Err(AnswerRefused::NotJudged(q.status)));
        }
        QuestionStatus::Duplicate => {
            return Ok(Err(AnswerRefused::Duplicate(
                q.duplicate_of.clone().unwrap_or_default(),
            )));
        }
        QuestionStatus::Validated | QuestionStatus::Decided | QuestionStatus::Answered => {}
    }
    let now = sh.clock.now_ms();
    let mut tx = sh.store.begin().await?;
    // Whether the answer may (still) be given is decided by the write itself, so an answer
    // step starting meanwhile cannot slip between a check and the write.
    if !questions::answer(&mut tx, &q.id, text, now).await? {
        // Rolled back now, not when the pool next uses the connection: the write lock the
        // statement took must not outlive this call.
        tx.rollback().await?;
        return Ok(Err(AnswerRefused::Started));
    }
    let mut all = vec![q.clone()];
    // Its duplicates get it too (again, when it changes).
    all.extend(questions::duplicates_of(&mut tx, &q.id).await?);
    all.extend(questions::answered_with(&mut tx, &q.id).await?);
    let mut moved = Vec::new();
    let mut lines_done = std::collections::BTreeSet::new();
    let mut told = false;
    for (i, one) in all.iter().enumerate() {
        if i > 0 {
            questions::answer(&mut tx, &one.id, text, now).await?;
        }
        // A Catcher message that asked it shows the answer, wherever it was given.
        told |= crate::tell::resolve(
            &mut tx,
            &sh.cfg,
            crate::store::outbox::About::Question(&one.id),
            &crate::tell::words(&sh.cfg).answered(text),
            now,
        )
        .await?;
        if !lines_done.insert(one.line_id.clone()) {
            continue;
        }
        let steps = store::steps::of_line(&mut tx, &one.line_id).await?;
        if !steps
            .iter()
            .any(|s| s.kind == StepKind::Answer && super::facts::open(s))
        {
            store::steps::add_in(
                &mut tx,
                &one.line_id,
                StepKind::Answer,
                "carry Anton's answers",
                "Anton answered questions from the journal (they are above). Where an answer \
                 differs from the default you took, change the work to follow it; where it \
                 confirms the default, change nothing. Journal what you changed as `decided`.",
            )
            .await?;
        }
        let Some(l) = store::lines::get(&mut tx, &one.line_id).await? else {
            continue;
        };
        if l.state == LineState::NeedsHuman {
            // Anton's answer is what the dead end waited for: its failed steps go again.
            for s in steps.iter().filter(|s| s.state == StepState::Failed) {
                store::steps::set_state(&mut tx, &s.id, StepState::Pending, None).await?;
            }
            store::lines::set_gate_failures(&mut tx, &l.id, 0).await?;
        }
        // A line waiting for the answer holds its project and goes on at once; one that had
        // let it go (merged, or stopped) queues for it again like remarks do, so two lines of
        // a project are never active together.
        let next = match l.state {
            LineState::WaitingAnswer => Some(LineState::Running),
            LineState::AwaitingAcceptance | LineState::NeedsHuman => Some(LineState::Queued),
            _ => None,
        };
        if let Some(next) = next {
            moved.push(crate::state::line_state_in(sh, &mut tx, &l.id, next, None, None).await?);
        }
    }
    tx.commit().await?;
    if told {
        sh.told();
    }
    for t in moved {
        sh.announce(t);
    }
    for one in &all {
        sh.announce_questions(&one.line_id, 0);
    }
    sh.wake.notify_one();
    Ok(Ok(()))
}

/// Takes Anton's answer back while no `answer` step carrying it has started: the question (and
/// the duplicates that got it) as before the answer, and an `answer` step left with nothing
/// to carry removed — the line then waits again as it did. One transaction.
///
/// # Errors
/// [`AnswerRefused`] inside `Ok(Err(..))`; database errors.
pub(crate) async fn take_back(
    sh: &Shared,
    q: &QuestionRow,
) -> Result<std::result::Result<(), AnswerRefused>> {
    if q.status != QuestionStatus::Answered {
        return Ok(Err(AnswerRefused::NotAnswered));
    }
    let mut tx = sh.store.begin().await?;
    // The write first: a transaction that reads before it writes can be refused the write
    // lock outright (SQLite's busy error, no waiting) when another writer came in between.
    if !questions::take_back(&mut tx, &q.id).await? {
        tx.rollback().await?;
        return Ok(Err(AnswerRefused::Started));
    }
    let with = questions::answered_with(&mut tx, &q.id).await?;
    let mut lines = std::collections::BTreeSet::from([q.line_id.clone()]);
    for d in &with {
        questions::take_back(&mut tx, &d.id).await?;
        lines.insert(d.line_id.clone());
    }
    for line in &lines {
        if questions::undelivered_answers(&mut tx, line)
            .await?
            .is_empty()
        {
            store::steps::drop_unstarted_answer(&mut tx, line).await?;
        }
    }
    tx.commit().await?;
    for line in &lines {
        sh.announce_questions(line, 0);
    }
    sh.wake.notify_one();
    Ok(Ok(()))
}

/// The line needs Anton: `needs_human` with the reason, and — in the same transaction — a
/// validated question on the morning page saying why, so no stopped line goes unseen. Its
/// journal entry is the daemon's own (a negative offset: not in the agent's file, which an
/// agent could write a look-alike into). Answering it sends the line on: an `answer` step,
/// its failed steps again.
///
/// # Errors
/// Database errors.
pub(crate) async fn needs_anton(
    sh: &Shared,
    line_id: &str,
    (code, reason): (ReasonCode, &str),
) -> Result<()> {
    let text = format!(
        "The line stopped ({}): {}",
        code.as_str(),
        crate::exec::tail(reason, 1500)
    );
    let options = vec![AGAIN.to_string()];
    let now = sh.clock.now_ms();
    let mut tx = sh.store.begin().await?;
    let t = crate::state::line_state_in(
        sh,
        &mut tx,
        line_id,
        LineState::NeedsHuman,
        Some((code, reason)),
        None,
    )
    .await?;
    if t.written() {
        questions::ask_as_daemon(
            &mut tx,
            line_id,
            &questions::DaemonQuestion {
                text: &text,
                options: &options,
                default: Some(AGAIN),
                why: "only Anton can move a stopped line on",
                reversible: true,
                expensive: false,
                urgent: false,
                validated: "the line stopped: only Anton can move it on",
            },
            now,
        )
        .await?;
    }
    tx.commit().await?;
    sh.announce(t);
    // The line's `needs_human` already tells Anton; its question is not news of its own.
    sh.announce_questions(line_id, 0);
    Ok(())
}

/// The one option of the question a stopped line asks.
pub(crate) const AGAIN: &str = "try again";

/// What the CLI denied a run (the never-autonomous guard, a permission mode) did not run:
/// Anton decides whether it should, each as a validated question, irreversible and expensive,
/// written in the caller's transaction with the run's end.
///
/// # Errors
/// Database errors.
pub(super) async fn ask_about_denials(
    sh: &Shared,
    tx: &mut sqlx::SqliteConnection,
    line_id: &str,
    denied: &[serde_json::Value],
    now: i64,
) -> Result<bool> {
    // Irreversible and expensive: by day each goes to the Catcher at once.
    let urgent = crate::judge::rules::by_day(sh.cfg.night().as_ref(), now);
    let mut told = false;
    for d in denied {
        let text = denied_text(d);
        let id = questions::ask_as_daemon(
            tx,
            line_id,
            &questions::DaemonQuestion {
                text: &text,
                options: &[DO_IT_MYSELF.to_string(), NOT_NEEDED.to_string()],
                default: Some(NOT_NEEDED),
                why: "it is never done without Anton; the guard stopped it before it ran",
                reversible: false,
                expensive: true,
                validated: "never done autonomously: only Anton decides",
                urgent,
            },
            now,
        )
        .await?;
        if urgent && let Some(id) = id {
            told |= crate::tell::on_urgent_question(tx, &sh.cfg, &id, now).await?;
        }
    }
    Ok(told)
}

const DO_IT_MYSELF: &str = "I will do it myself";
const NOT_NEEDED: &str = "not needed: go on without it";

/// A denied call in words: the Bash command, or the tool and its file.
fn denied_text(d: &serde_json::Value) -> String {
    let tool = d["tool_name"].as_str().unwrap_or("a tool");
    let input = &d["tool_input"];
    let what = match (input["command"].as_str(), input["file_path"].as_str()) {
        (Some(c), _) => format!("`{}`", crate::exec::tail(c, 300)),
        (None, Some(p)) => format!("{tool} on {p}"),
        _ => format!("{tool} {}", crate::exec::tail(&input.to_string(), 300)),
    };
    format!(
        "The agent was stopped before it ran {what}: that is never done without you. Should it be done?"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::questions::Verdict;
    use conveyor_api::DecisionSource;

    /// A line waiting for Anton with one validated question; its id.
    async fn waiting_with_question(sh: &Shared, line: &str) -> String {
        let id = crate::store::testing::line(&sh.store, "p", line, 0, "waiting_answer").await;
        // Its work is done.
        let planned = crate::store::testing::step(&sh.store, &id, StepKind::Planner).await;
        store::steps::set_state(
            &mut sh.store.conn().await.unwrap(),
            &planned.id,
            StepState::Done,
            None,
        )
        .await
        .unwrap();
        validated_question(sh, &id, 0).await
    }

    /// Another validated question `a or b?` of `line`, at journal offset `offset`; its id.
    async fn validated_question(sh: &Shared, id: &str, offset: i64) -> String {
        let mut tx = sh.store.begin().await.unwrap();
        let at = store::journal::At {
            line_id: id,
            step_id: None,
            offset,
            now: 1,
        };
        let options = ["a".to_string(), "b".to_string()];
        let entry = store::journal::NewEntry {
            kind: conveyor_api::JournalKind::Question,
            text: "a or b?",
            options: &options,
            default: Some("a"),
            why: None,
            reversible: None,
            expensive: None,
            raw: "{}",
        };
        let j = store::journal::insert(&mut tx, at, entry)
            .await
            .unwrap()
            .unwrap();
        let q = questions::insert(
            &mut tx,
            id,
            j,
            conveyor_api::QuestionKind::Question,
            None,
            1,
        )
        .await
        .unwrap();
        let v = Verdict {
            status: QuestionStatus::Validated,
            by: DecisionSource::Judge,
            why: "only Anton knows",
            duplicate_of: None,
            urgent: false,
            now: 2,
        };
        assert!(questions::set_verdict(&mut tx, &q, &v).await.unwrap());
        tx.commit().await.unwrap();
        q
    }

    async fn question(sh: &Shared, id: &str) -> QuestionRow {
        questions::get(&mut sh.store.conn().await.unwrap(), id)
            .await
            .unwrap()
            .unwrap()
    }

    /// An answer changes, or is taken back, until an attempt of a step that would carry it
    /// starts; after that both are refused and the answer stays as sent.
    #[tokio::test]
    async fn an_answer_changes_until_its_step_starts() {
        let tmp = tempfile::tempdir().unwrap();
        let d = crate::daemon::testing::start(&tmp.path().join("data"), "").await;
        let sh = d.shared().clone();
        let q = waiting_with_question(&sh, "l").await;
        let steps = || async {
            store::steps::of_line(&mut sh.store.conn().await.unwrap(), "l")
                .await
                .unwrap()
                .into_iter()
                .filter(|s| s.kind == StepKind::Answer)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            answer(&sh, &question(&sh, &q).await, "a").await.unwrap(),
            Ok(())
        );
        let got = question(&sh, &q).await;
        assert_eq!(
            (got.status, got.changeable),
            (QuestionStatus::Answered, true)
        );
        assert_eq!(steps().await.len(), 1);
        assert_eq!(
            store::lines::state_of(&mut sh.store.conn().await.unwrap(), "l")
                .await
                .unwrap(),
            Some(LineState::Running)
        );
        // Changed: still one answer step, carrying the new answer.
        assert_eq!(answer(&sh, &got, "b").await.unwrap(), Ok(()));
        assert_eq!(steps().await.len(), 1);
        let carried = questions::undelivered_answers(&mut sh.store.conn().await.unwrap(), "l")
            .await
            .unwrap();
        assert_eq!(
            carried
                .iter()
                .map(|u| (u.question.as_str(), u.answer.as_str()))
                .collect::<Vec<_>>(),
            [("a or b?", "b")]
        );
        // Taken back: validated again, the answer step gone, the line waits again.
        assert_eq!(
            take_back(&sh, &question(&sh, &q).await).await.unwrap(),
            Ok(())
        );
        let back = question(&sh, &q).await;
        assert_eq!(
            (back.status, back.answer.clone()),
            (QuestionStatus::Validated, None)
        );
        assert!(steps().await.is_empty());
        let line = store::lines::get(&mut sh.store.conn().await.unwrap(), "l")
            .await
            .unwrap()
            .unwrap();
        assert!(matches!(
            super::super::next_action(&sh, &line).await.unwrap(),
            super::super::Action::Wait(ReasonCode::WaitingAnswer, _)
        ));
        // Answered again, and its step's attempt starts: no change, no taking back.
        assert_eq!(answer(&sh, &back, "a").await.unwrap(), Ok(()));
        let step = steps().await.remove(0);
        store::steps::start_attempt(&mut sh.store.conn().await.unwrap(), &step.id, 1)
            .await
            .unwrap();
        let sent = question(&sh, &q).await;
        assert!(!sent.changeable);
        assert_eq!(
            answer(&sh, &sent, "b").await.unwrap(),
            Err(AnswerRefused::Started)
        );
        assert_eq!(
            take_back(&sh, &sent).await.unwrap(),
            Err(AnswerRefused::Started)
        );
        assert_eq!(question(&sh, &q).await.answer.as_deref(), Some("a"));
        drop(sh);
        d.stop().await;
    }

    /// An answer given while the step carrying the first ran was not in its prompt: that step's
    /// success delivers only what it carried, and a new answer step carries the late one.
    #[tokio::test]
    async fn an_answer_given_while_its_step_runs_waits_for_the_next() {
        let tmp = tempfile::tempdir().unwrap();
        let d = crate::daemon::testing::start(&tmp.path().join("data"), "").await;
        let sh = d.shared().clone();
        let first = waiting_with_question(&sh, "l").await;
        let second = validated_question(&sh, "l", 100).await;
        assert_eq!(
            answer(&sh, &question(&sh, &first).await, "a")
                .await
                .unwrap(),
            Ok(())
        );
        let carrier = store::steps::of_line(&mut sh.store.conn().await.unwrap(), "l")
            .await
            .unwrap()
            .into_iter()
            .find(|s| s.kind == StepKind::Answer)
            .unwrap();
        store::steps::start_attempt(&mut sh.store.conn().await.unwrap(), &carrier.id, 1)
            .await
            .unwrap();
        let carried: Vec<String> =
            questions::undelivered_answers(&mut sh.store.conn().await.unwrap(), "l")
                .await
                .unwrap()
                .into_iter()
                .map(|u| u.id)
                .collect();
        assert_eq!(carried, std::slice::from_ref(&first));
        // While it runs, the second question is answered: a new answer step is queued.
        assert_eq!(
            answer(&sh, &question(&sh, &second).await, "b")
                .await
                .unwrap(),
            Ok(())
        );
        let run = crate::store::testing::run(&sh.store, &carrier.id, "l").await;
        store::steps::record_done(
            &mut sh.store.conn().await.unwrap(),
            store::steps::Done {
                line_id: "l",
                step_id: &carrier.id,
                run_id: run,
                sha: "abc",
                plan: None,
                carried: &carried,
            },
        )
        .await
        .unwrap();
        let left = questions::undelivered_answers(&mut sh.store.conn().await.unwrap(), "l")
            .await
            .unwrap();
        assert_eq!(
            left.iter().map(|u| u.id.as_str()).collect::<Vec<_>>(),
            [second.as_str()]
        );
        // (Whether it shows as changeable meanwhile depends on the milliseconds: an answer given
        // in the very millisecond a step started counts as carried, the safe side.)
        let answer_steps: Vec<StepState> =
            store::steps::of_line(&mut sh.store.conn().await.unwrap(), "l")
                .await
                .unwrap()
                .into_iter()
                .filter(|s| s.kind == StepKind::Answer)
                .map(|s| s.state)
                .collect();
        assert_eq!(answer_steps, [StepState::Done, StepState::Pending]);
        drop(sh);
        d.stop().await;
    }
}
