//! The judge's step: one run in a fresh session of its own over what the rules left.

use std::path::Path;

use conveyor_api::{StepKind, StepState};
use tokio_util::sync::CancellationToken;

use crate::budget::Admitted;
use crate::judge::rules;
use crate::judge::verdict;
use crate::judge::{self, prompt as jprompt};
use crate::state::Shared;
use crate::store::{self, LineRow, StepRow};
use crate::{error::Result, git};

use super::super::fresh::{self, Ended};
use super::sort::{Left, sort};
use super::verdict::{apply, judge_failed};

/// How many of the project's latest decisions the judge's prompt carries.
const DECISIONS_IN_PROMPT: i64 = 15;

/// The most the prompt carries of the diff and of the memory, in bytes.
const DIFF_MAX: usize = 30_000;
/// The judge's step: the rules again (entries may have come since it was queued), then one run
/// over what is left, its verdict checked and applied with the step's end.
///
/// # Errors
/// Database, file and git errors.
pub(crate) async fn run_judge(
    sh: &Shared,
    line: &LineRow,
    step: &StepRow,
    admitted: Admitted,
    cancel: &CancellationToken,
) -> Result<()> {
    if super::super::facts::is_cancelled(sh, &line.id).await? || cancel.is_cancelled() {
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
    let decisions =
        super::super::facts::latest_decisions(sh, &line.project_id, DECISIONS_IN_PROMPT).await?;
    // What the sandbox refused the line's agents: facts for the judge to weigh its entries by.
    let refused =
        store::refusals::of_lines(&mut *sh.store.conn().await?, std::slice::from_ref(&line.id))
            .await?
            .remove(&line.id)
            .unwrap_or_default();
    let ids: Vec<String> = entries.iter().map(|q| q.id.clone()).collect();
    let open_ids: Vec<String> = open.iter().map(|(id, _)| id.clone()).collect();
    let now = sh.clock.now_ms();
    let by_day = rules::by_day(sh.cfg.night().as_ref(), now);

    let f = fresh::files(sh, line, step);
    std::fs::write(
        &f.given,
        serde_json::json!({"ids": ids, "open": open_ids}).to_string(),
    )
    .map_err(|e| crate::error::Error::io(&f.given, e))?;
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
        refused: &refused,
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
}
