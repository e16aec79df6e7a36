//! The daemon's own rules over a line's new journal entries ([`sort`]): by day, duplicates,
//! "read the memory first"; what they leave waits for a judge step.

use std::collections::HashMap;
use std::path::PathBuf;

use conveyor_api::{DecisionSource, QuestionStatus, StepKind, StepState};

use crate::error::Result;
use crate::judge::reads::Reads;
use crate::judge::rules::{self, Sorted};
use crate::state::Shared;
use crate::store::questions::{self, Verdict};
use crate::store::{self, LineRow, QuestionRow};

use super::memory::{Memory, memory, reads_of};

/// What the rules left for the judge, with what was gathered to sort them — the memory, what
/// each entry's step read, the project's open questions — so that the judge's prompt reads
/// none of it again.
#[derive(Default)]
pub(crate) struct Left {
    pub entries: Vec<QuestionRow>,
    pub(super) mem: Memory,
    /// By step id.
    pub(super) reads: HashMap<String, Reads>,
    /// The project's open validated questions.
    pub(super) open: Vec<QuestionRow>,
}

/// Puts the line's unvalidated entries where the daemon's rules say, in one transaction: by
/// day the reversible or cheap ones are decided, a repeat of an open question is its
/// duplicate, an entry whose step read none of the memory goes back to the line's session in
/// a `rework` step; what is left waits for a `judge` step (added unless one is open). Returns
/// the entries left for the judge.
///
/// # Errors
/// Database and git errors.
pub(crate) async fn sort(sh: &Shared, line: &LineRow) -> Result<Left> {
    let entries = questions::of_line(
        &mut *sh.store.conn().await?,
        &line.id,
        &[QuestionStatus::Unvalidated],
    )
    .await?;
    if entries.is_empty() {
        return Ok(Left::default());
    }
    let worktree = PathBuf::from(line.worktree.clone().unwrap_or_default());
    let mem = memory(sh, line, &worktree).await?;
    // Each step's logs read once, however many entries it wrote.
    let mut reads = HashMap::new();
    for step in entries.iter().filter_map(|q| q.from_step.as_deref()) {
        if !reads.contains_key(step) {
            reads.insert(step.to_string(), reads_of(sh, step).await?);
        }
    }
    let open_rows =
        questions::open_validated_of_project(&mut *sh.store.conn().await?, &line.project_id)
            .await?;
    let open: Vec<(String, String)> = open_rows
        .iter()
        .map(|q| (q.id.clone(), q.normalised()))
        .collect();
    let night = sh.cfg.night();
    let complete: Vec<(String, String)> = entries
        .iter()
        .filter(|q| {
            let has = |v: Option<&str>| v.is_some_and(|x| !x.trim().is_empty());
            has(q.said.default_opt.as_deref()) && has(q.said.why.as_deref())
        })
        .map(|q| (q.id.clone(), q.normalised()))
        .collect();
    // Every entry of the line a step wrote, but duplicates: what a step run again writes again.
    let all = questions::of_line(
        &mut *sh.store.conn().await?,
        &line.id,
        &[
            QuestionStatus::Unvalidated,
            QuestionStatus::Validated,
            QuestionStatus::Rework,
            QuestionStatus::Decided,
            QuestionStatus::Answered,
        ],
    )
    .await?;
    let written: Vec<(String, String, String, i64)> = all
        .iter()
        .filter_map(|q| {
            let step = q.from_step.clone()?;
            Some((step, q.id.clone(), q.normalised(), q.created_at))
        })
        .collect();
    let cx = rules::Context {
        has_memory: !mem.paths.is_empty(),
        open: &open,
        night: night.as_ref(),
        complete: &complete,
        written: &written,
    };
    let mut sorted = Vec::new();
    for q in entries {
        let read_memory = q
            .from_step
            .as_ref()
            .and_then(|s| reads.get(s))
            .is_some_and(|r| r.touch(&mem.paths, &worktree));
        let text = q.normalised();
        let e = rules::Entry {
            text: &text,
            created_at: q.created_at,
            reversible: q.said.reversible,
            expensive: q.said.expensive,
            reworks: q.reworks,
            read_memory,
            has_default: q
                .said
                .default_opt
                .as_deref()
                .is_some_and(|d| !d.trim().is_empty()),
            has_why: q.said.why.as_deref().is_some_and(|w| !w.trim().is_empty()),
            step: q.from_step.as_deref(),
        };
        let s = rules::sort(&e, &cx);
        sorted.push((q, s));
    }
    let now = sh.clock.now_ms();
    let mut tx = sh.store.begin().await?;
    let mut left = Vec::new();
    let mut rework = Vec::new();
    let mut incomplete = Vec::new();
    for (q, s) in sorted {
        match s {
            Sorted::DecidedByDay => {
                let v = Verdict {
                    status: QuestionStatus::Decided,
                    by: DecisionSource::Daemon,
                    why: "written by day and reversible or cheap: the default stands (by day only \
                          irreversible and expensive forks may reach Anton)",
                    duplicate_of: None,
                    urgent: false,
                    now,
                };
                questions::set_verdict(&mut tx, &q.id, &v).await?;
            }
            Sorted::Duplicate { of } => {
                let v = Verdict {
                    status: QuestionStatus::Duplicate,
                    by: DecisionSource::Daemon,
                    why: "the same text as an open question of the project, or as an entry its step wrote before",
                    duplicate_of: Some(&of),
                    urgent: false,
                    now,
                };
                questions::set_verdict(&mut tx, &q.id, &v).await?;
            }
            Sorted::Incomplete { lacks } => {
                let why = format!(
                    "a question for Anton needs a default and a why (and options, or it is answered in words); this one lacks {}: append it to $CONVEYOR_JOURNAL again, the same text, with them",
                    lacks.join(" and ")
                );
                incomplete.push((q, why));
            }
            Sorted::ReadMemoryFirst => rework.push(q),
            Sorted::Judge => left.push(q),
        }
    }
    if !incomplete.is_empty() {
        let items: Vec<(&QuestionRow, &str)> =
            incomplete.iter().map(|(q, w)| (q, w.as_str())).collect();
        add_rework(&mut tx, &line.id, &items, DecisionSource::Daemon).await?;
    }
    if !rework.is_empty() {
        let why = format!(
            "read the memory first: the step that wrote this read none of the project's memory ({})",
            mem.texts
                .iter()
                .map(|(p, _)| p.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        let items: Vec<(&QuestionRow, &str)> = rework.iter().map(|q| (q, why.as_str())).collect();
        add_rework(&mut tx, &line.id, &items, DecisionSource::Daemon).await?;
    }
    if !left.is_empty() {
        let steps = store::steps::of_line(&mut tx, &line.id).await?;
        let open_judge = steps.iter().any(|s| {
            s.kind == StepKind::Judge
                && matches!(
                    s.state,
                    StepState::Pending | StepState::Interrupted | StepState::Running
                )
        });
        if !open_judge {
            store::steps::add_in(
                &mut tx,
                &line.id,
                StepKind::Judge,
                &format!("judge {} journal entries", left.len()),
                "Judge the line's new forks and questions: which need Anton.",
            )
            .await?;
        }
    }
    tx.commit().await?;
    Ok(Left {
        entries: left,
        mem,
        reads,
        open: open_rows,
    })
}

/// Sends entries back to the line's session: one `rework` step carrying each entry's reason.
pub(super) async fn add_rework(
    tx: &mut sqlx::SqliteConnection,
    line_id: &str,
    items: &[(&QuestionRow, &str)],
    by: DecisionSource,
) -> Result<()> {
    let mut task =
        String::from("The judge of Anton's questions sent these journal entries back to you:\n");
    for (q, why) in items {
        task.push_str(&format!(
            "- \"{}\"\n  because: {why}\n",
            q.said.text.as_deref().unwrap_or_default()
        ));
    }
    task.push_str(
        "\nDo what each reason asks (read the project's memory and the code it names). Then, for \
         each entry: if what you read settles it, append a `decided` entry to $CONVEYOR_JOURNAL \
         saying what you decided and why, and change the work accordingly; if it still needs \
         Anton, there is nothing to append: it is judged again as it stands, with what you read \
         now.",
    );
    let step = store::steps::add_in(
        tx,
        line_id,
        StepKind::Rework,
        "rework the journal entries the judge sent back",
        &task,
    )
    .await?;
    for (q, why) in items {
        questions::send_to_rework(tx, &q.id, by, why, &step).await?;
    }
    Ok(())
}
