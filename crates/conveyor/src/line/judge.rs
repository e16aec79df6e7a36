//! The judge in a line's flow (DESIGN.md, "The judge and the morning list"): the daemon's own
//! rules first ([`sort`]: by day, duplicates, "read the memory first"), then a step of kind
//! `judge` for what is left ([`run_judge`]): a run in a fresh session of its own, in the line's
//! worktree, with read-only tools, that writes `$CONVEYOR_VERDICT`. A verdict is applied in
//! one transaction with the step's end, so a kill at any moment leaves every entry either
//! unjudged (judged again by the next run) or judged once.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use conveyor_api::{DecisionSource, QuestionStatus, StepKind, StepState};
use tokio_util::sync::CancellationToken;

use crate::budget::Admitted;
use crate::judge::reads::Reads;
use crate::judge::rules::{self, Sorted};
use crate::judge::verdict::{self, Call};
use crate::judge::{self, prompt as jprompt};
use crate::state::Shared;
use crate::store::questions::{self, Verdict};
use crate::store::runs::{self, RunOutcome};
use crate::store::{self, LineRow, QuestionRow, StepRow};
use crate::{Result, git};

use super::fresh::{self, Ended};

/// Failed judge runs of one step before its entries are shown to Anton as asked.
pub(crate) const JUDGE_RUNS: i64 = 3;

/// How many of the project's latest decisions the judge's prompt carries.
const DECISIONS_IN_PROMPT: i64 = 15;

/// The most the prompt carries of the diff and of the memory, in bytes.
const DIFF_MAX: usize = 30_000;
const MEMORY_MAX: usize = 30_000;

/// What the memory rule and the judge's prompt need of the project.
#[derive(Default)]
struct Memory {
    /// Absolute paths: memory files in the worktree, and the vault folder.
    paths: Vec<PathBuf>,
    /// `(path as shown, text)`, cut to [`MEMORY_MAX`] in all.
    texts: Vec<(String, String)>,
}

async fn memory(sh: &Shared, line: &LineRow, worktree: &Path) -> Result<Memory> {
    let globs = match super::gate::checklist(sh, line).await? {
        Ok((c, ..)) => c.memory,
        // A broken `.conveyor.toml` is the gate's to report.
        Err(_) => Vec::new(),
    };
    let mut paths = Vec::new();
    let mut texts = Vec::new();
    // A line without its worktree yet has read nothing of it either.
    if !globs.is_empty() && worktree.join(".git").exists() {
        let mut b = globset::GlobSetBuilder::new();
        for g in &globs {
            if let Ok(g) = globset::Glob::new(g) {
                b.add(g);
            }
        }
        let set = b.build().unwrap_or_else(|_| globset::GlobSet::empty());
        let files = git::git(worktree, &["ls-files", "-z"], &sh.shutdown).await?;
        let mut budget = MEMORY_MAX;
        for rel in files
            .split('\0')
            .filter(|p| !p.is_empty() && set.is_match(p))
        {
            let abs = worktree.join(rel);
            if budget > 0
                && let Ok(text) = std::fs::read_to_string(&abs)
            {
                let cut = crate::exec::tail(&text, budget).to_string();
                budget = budget.saturating_sub(cut.len());
                texts.push((rel.to_string(), cut));
            }
            paths.push(abs);
        }
    }
    if let Some(v) = &sh.cfg.vault {
        paths.push(v.path.clone());
        texts.push((
            v.path.display().to_string(),
            "(Anton's vault: read what bears on the entries)".into(),
        ));
    }
    Ok(Memory { paths, texts })
}

/// What the runs of `step_id` read.
async fn reads_of(sh: &Shared, step_id: &str) -> Result<Reads> {
    let logs = runs::logs_of_step(&mut *sh.store.conn().await?, step_id).await?;
    let mut r = Reads::default();
    for log in logs {
        if let Ok(text) = std::fs::read_to_string(&log) {
            r.add_log(&text);
        }
    }
    Ok(r)
}

/// What the rules left for the judge, with what was gathered to sort them — the memory, what
/// each entry's step read, the project's open questions — so that the judge's prompt reads
/// none of it again.
#[derive(Default)]
pub(crate) struct Left {
    pub entries: Vec<QuestionRow>,
    mem: Memory,
    /// By step id.
    reads: HashMap<String, Reads>,
    /// The project's open validated questions.
    open: Vec<QuestionRow>,
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
async fn add_rework(
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

/// The judge's step: the rules again (entries may have come since it was queued), then one run
/// over what is left, its verdict checked and applied with the step's end.
///
/// # Errors
/// Database, file and git errors.
pub(super) async fn run_judge(
    sh: &Shared,
    line: &LineRow,
    step: &StepRow,
    admitted: Admitted,
    cancel: &CancellationToken,
) -> Result<()> {
    if super::is_cancelled(sh, &line.id).await? || cancel.is_cancelled() {
        // Cancelled (by Anton, or the daemon stops) before the run started: start none.
        return Ok(());
    }
    let Left {
        entries,
        mem,
        reads,
        open: open_rows,
    } = sort(sh, line).await?;
    sh.announce_questions(&line.id, 0);
    if entries.is_empty() {
        // The rules settled everything: no run.
        store::steps::set_state(
            &mut *sh.store.conn().await?,
            &step.id,
            StepState::Done,
            None,
        )
        .await?;
        sh.set_step_state(&line.id, &step.id, step.n, StepState::Done, None)
            .await?;
        return Ok(());
    }
    let open: Vec<(String, String)> = open_rows
        .iter()
        .map(|q| (q.id.clone(), q.said.text.clone().unwrap_or_default()))
        .collect();
    let mut to_judge = Vec::new();
    for q in &entries {
        let reads = q
            .from_step
            .as_ref()
            .and_then(|s| reads.get(s))
            .map(|r| r.listing(40))
            .unwrap_or_default();
        to_judge.push(jprompt::ToJudge {
            id: q.id.clone(),
            kind: q.kind.as_str(),
            text: q.said.text.clone().unwrap_or_default(),
            options: q.said.options(),
            default: q.said.default_opt.clone(),
            why: q.said.why.clone(),
            reversible: q.said.reversible,
            expensive: q.said.expensive,
            reworks: q.reworks,
            reads,
        });
    }
    let diff = line_diff_text(sh, line).await?;
    let decisions = super::latest_decisions(sh, &line.project_id, DECISIONS_IN_PROMPT).await?;
    let ids: Vec<String> = entries.iter().map(|q| q.id.clone()).collect();
    let open_ids: Vec<String> = open.iter().map(|(id, _)| id.clone()).collect();
    let now = sh.clock.now_ms();
    let by_day = rules::by_day(sh.cfg.night().as_ref(), now);

    let f = fresh::files(sh, line, step);
    std::fs::write(
        &f.given,
        serde_json::json!({"ids": ids, "open": open_ids}).to_string(),
    )
    .map_err(|e| crate::Error::io(&f.given, e))?;
    let hooks = judge::hook_commands(
        judge::hook_bin(&sh.cfg).as_deref(),
        &f.verdict,
        &f.given,
        &f.state,
        sh.cfg.hook_rounds,
    );
    let text = jprompt::render(&jprompt::JudgePrompt {
        n: step.n,
        attempt: f.attempt,
        line_id: &line.id,
        line_title: &line.title,
        line_task: &line.task,
        entries: &to_judge,
        diff: &diff,
        memory: &mem.texts,
        open: &open,
        decisions: &decisions,
        by_day,
        verdict_path: &f.verdict.to_string_lossy(),
    });
    tracing::info!(line = %line.id, step = step.n, entries = ids.len(), "judge starts");
    // Read-only tools: the judge reads, and writes its verdict.
    let run = fresh::Fresh {
        kind: StepKind::Judge,
        prompt: text,
        tools: Some(judge::TOOLS),
        hooks,
        guarded: judge::GUARDED_TOOLS,
        agent: None,
    };
    match fresh::run(sh, (line, step), &f, run, admitted, cancel).await? {
        Ended::Finished { run_id, .. } => {
            let text = std::fs::read_to_string(&f.verdict).unwrap_or_default();
            match verdict::check(&text, &ids, &open_ids) {
                Ok(v) => apply(sh, line, step, run_id, &entries, &v).await,
                Err(e) => judge_failed(sh, line, step, run_id, &entries, &e.to_string()).await,
            }
        }
        Ended::Failed { run_id, reason } => {
            judge_failed(sh, line, step, run_id, &entries, &reason).await
        }
        Ended::Settled => Ok(()),
    }
}

/// `git diff` of the line against its fork point, as text for the prompt (cut).
///
/// # Errors
/// Database errors; a diff git cannot make is no diff (the judge is told there is no change).
async fn line_diff_text(sh: &Shared, line: &LineRow) -> Result<String> {
    let Some(project) =
        store::projects::get(&mut *sh.store.conn().await?, &line.project_id).await?
    else {
        return Ok(String::new());
    };
    Ok(
        match git::line_diff(
            Path::new(&project.repo_path),
            &project.main_branch,
            &line.branch,
            &sh.shutdown,
        )
        .await
        {
            Ok(Some((_, _, files))) => diff_text(&files),
            _ => String::new(),
        },
    )
}

/// The diff's files as the prompt shows them, cut after [`DIFF_MAX`] bytes (at a character's
/// edge).
fn diff_text(files: &[conveyor_api::FileDiff]) -> String {
    let mut out = String::new();
    for f in files {
        out.push_str(&format!("--- {} ({:?})\n{}\n", f.path, f.change, f.patch));
        if out.len() > DIFF_MAX {
            let mut cut = DIFF_MAX;
            while !out.is_char_boundary(cut) {
                cut -= 1;
            }
            out.truncate(cut);
            out.push_str("\n… (cut)\n");
            break;
        }
    }
    out
}

/// A valid verdict: every entry's new status, one rework step for what goes back, the level
/// raised, the run ok and the step done — one transaction.
async fn apply(
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
    let Ok((list, _, repo, main_branch)) = super::gate::checklist(sh, line).await? else {
        // A checklist that does not parse stops the line at its gate, saying so.
        return Ok(blocked);
    };
    let Some(cmd) = list.hooks.before_question else {
        return Ok(blocked);
    };
    let worktree = PathBuf::from(line.worktree.clone().unwrap_or_default());
    let fork = super::gate::fork_of(&repo, &main_branch, line, &sh.shutdown).await?;
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
        if let Some(why) = super::hooks::run(
            sh,
            line,
            (super::hooks::Boundary::Question, &cmd),
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
async fn judge_failed(
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A long diff is cut at a character's edge, never inside one (Cyrillic is two bytes).
    #[test]
    fn a_long_diff_is_cut_at_a_character_edge() {
        let file = |path: &str| conveyor_api::FileDiff {
            path: path.into(),
            change: conveyor_api::FileChange::Modified,
            patch: "+привет\n".repeat(DIFF_MAX / 8),
            binary: false,
        };
        for odd in ["a", "ab"] {
            let text = diff_text(&[file(odd), file("second")]);
            assert!(
                text.ends_with("\n… (cut)\n"),
                "{}",
                &text[text.len() - 40..]
            );
            assert!(text.len() <= DIFF_MAX + "\n… (cut)\n".len());
            assert!(!text.contains("--- second"));
        }
        assert_eq!(diff_text(&[]), "");
    }
    use crate::git::testing::{repo_with_main, run as git};

    /// The memory is the files the project's `memory` globs match on fresh main, plus the
    /// vault; a read of either counts, a read of anything else does not.
    #[tokio::test]
    async fn the_memory_is_the_globbed_files_and_the_vault() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        std::fs::create_dir_all(repo.join("docs")).unwrap();
        repo_with_main(&repo).await;
        std::fs::write(repo.join("docs/adr.md"), "decided: sqlite\n").unwrap();
        std::fs::write(repo.join(".conveyor.toml"), "memory = [\"docs/*.md\"]\n").unwrap();
        git(&repo, &["add", "-A"]).await;
        git(&repo, &["commit", "-qm", "memory"]).await;
        let vault = tmp.path().join("vault");
        std::fs::create_dir_all(&vault).unwrap();
        let d = crate::daemon::testing::start(
            &tmp.path().join("data"),
            &format!("vault = {:?}", vault.display().to_string()),
        )
        .await;
        let sh = d.shared().clone();
        let id = crate::store::testing::line(&sh.store, "p", "l", 0, "running").await;
        crate::store::testing::exec(
            &sh.store,
            &format!(
                "UPDATE projects SET repo_path = '{}' WHERE id = 'p'",
                repo.display()
            ),
        )
        .await;
        store::lines::set_worktree(&mut sh.store.conn().await.unwrap(), &id, &repo, None)
            .await
            .unwrap();
        let line = store::lines::get(&mut sh.store.conn().await.unwrap(), &id)
            .await
            .unwrap()
            .unwrap();
        let mem = memory(&sh, &line, &repo).await.unwrap();
        assert_eq!(mem.paths, [repo.join("docs/adr.md"), vault.clone()]);
        assert_eq!(
            mem.texts[0],
            ("docs/adr.md".into(), "decided: sqlite\n".into())
        );
        let read = |p: &Path| {
            let mut r = Reads::default();
            r.paths.insert(p.display().to_string());
            r.touch(&mem.paths, &repo)
        };
        assert!(read(&repo.join("docs/adr.md")));
        assert!(read(&vault.join("2026/notes.md")));
        assert!(!read(&repo.join("a.txt")));
        drop(sh);
        d.stop().await;
    }
}
