//! The step prompts. Role instructions go into the `-p` prompt of each step (the first step's
//! system prompt is reused on resume). The first line,
//! `conveyor step <n> attempt <a> · <kind> · line <id> "<title>"`, names the step in the
//! conversation (and lets a scripted mock of the API tell steps, kinds and lines apart).

use conveyor_api::StepKind;

use crate::config::Check;

/// What a prompt is built from.
#[derive(Debug, Clone)]
pub struct StepPrompt<'a> {
    pub n: i64,
    pub attempt: i64,
    pub kind: StepKind,
    pub line_id: &'a str,
    pub line_title: &'a str,
    pub line_task: &'a str,
    pub step_title: &'a str,
    pub step_task: &'a str,
    pub checks: &'a [Check],
    /// Why the worktree was rolled back before this attempt, if it was.
    pub rolled_back: Option<&'a str>,
    pub checkpoint: Option<&'a str>,
    /// Anton's answers not yet delivered: (question, answer).
    pub answers: &'a [(String, String)],
    /// The project's latest decisions taken without Anton (the catalogue), newest first.
    pub decisions: &'a [String],
}

const JOURNAL: &str = "Journal: for every fork you meet, every decision you take by default, every open \
question for Anton and every area you leave without test coverage, append ONE JSON object on one line \
to the file named by $CONVEYOR_JOURNAL (outside the worktree, e.g. `echo '{…}' >> \"$CONVEYOR_JOURNAL\"`): \
{\"kind\": \"fork\" | \"question\" | \"decided\" | \"uncovered\", \"text\": …, \"options\": [..], \
\"default\": …, \"why\": …, \"reversible\": true|false, \"expensive\": true|false}. Do not stop to wait \
for answers: take the default and go on.";

/// Renders the prompt.
pub fn render(p: &StepPrompt<'_>) -> String {
    let mut s = format!(
        "conveyor step {} attempt {} · {} · line {} \"{}\"\n\n",
        p.n,
        p.attempt,
        p.kind.as_str(),
        p.line_id,
        p.line_title
    );
    if let Some(why) = p.rolled_back {
        s.push_str(&format!(
            "NOTE: the worktree was rolled back to the last checkpoint{} because {why}. \
             Whatever the previous attempt changed is gone: do this step's work again from there.\n\n",
            p.checkpoint.map(|c| format!(" ({c})")).unwrap_or_default()
        ));
    }
    if !p.answers.is_empty() {
        s.push_str("Anton answered questions from the journal:\n");
        for (q, a) in p.answers {
            s.push_str(&format!("- Q: {q}\n  A: {a}\n"));
        }
        s.push('\n');
    }
    if !p.decisions.is_empty() {
        s.push_str(
            "Decisions taken lately in this project without Anton (keep to them unless this \
             work says otherwise; do not ask them again):\n",
        );
        for d in p.decisions {
            s.push_str(&format!("- {d}\n"));
        }
        s.push('\n');
    }
    match p.kind {
        StepKind::Planner => {
            s.push_str(&format!(
                "You are the PLANNER of this line. The work of the line:\n\n{}\n\n\
                 Cut the work into small steps; each step is one later run of an executor in this same \
                 session. Give every step machine-checkable checks: shell commands run in the worktree \
                 with the exit code they must give when the step is done. Choose the level: light (text, \
                 config, small fix), medium (ordinary code work), full (new feature, live data, money, \
                 external integrations). The level decides who checks the work after you, each in a \
                 session of its own: a tester at every level, a reviewer from medium, a skeptic at full. \
                 Journal your choice of level as a `fork` (its options the three levels, its default your \
                 choice, its why). Size every step by the work it takes: xs (a line or two in one file), \
                 s (a small change in one file), m (a change across a few files), l (a feature: many \
                 files, new tests), xl (a large change: a module, a migration, a wide refactor); the \
                 budget plans the night by it.\n\n\
                 Write the plan as JSON to the file named by $CONVEYOR_PLAN (outside the worktree), in \
                 this shape:\n\
                 {{\"level\": \"light\" | \"medium\" | \"full\", \"steps\": [{{\"title\": …, \"task\": …, \
                 \"size\": \"xs\" | \"s\" | \"m\" | \"l\" | \"xl\", \"checks\": [{{\"cmd\": …, \"expect_exit\": 0}}]}}]}}\n\
                 Do not change the project's files in this step.\n\n",
                p.line_task
            ));
        }
        _ => {
            let role = match p.kind {
                StepKind::Fixer => "FIXER",
                StepKind::Remarks => "EXECUTOR (Anton's remarks after review)",
                StepKind::Rework => "EXECUTOR (entries the judge sent back)",
                StepKind::Answer => "EXECUTOR (Anton's answers)",
                StepKind::Investigate => "INVESTIGATOR",
                _ => "EXECUTOR",
            };
            s.push_str(&format!(
                "You are the {role} of this step of the line \"{}\".\n\nThis step: {}\n\n{}\n\n",
                p.line_title, p.step_title, p.step_task
            ));
            if !p.checks.is_empty() {
                s.push_str("The step is done when these checks pass in the worktree (a Stop hook enforces it):\n");
                for c in p.checks {
                    s.push_str(&format!("- `{}` exits {}\n", c.cmd, c.expect_exit));
                }
                s.push('\n');
            }
            s.push_str(
                "Keep your own context small: it is this line's whole session and must last every \
                 step. Delegate wide searches, reading many files and long test output to subagents \
                 (the Task tool) and keep only their conclusions. Others check your work after you, \
                 each in a session of its own: a tester, and by the line's level a reviewer and a \
                 skeptic.\n\n",
            );
            s.push_str("Do not commit: the daemon commits a checkpoint after the step.\n\n");
        }
    }
    s.push_str(JOURNAL);
    s.push_str("\nEnvironment: $CONVEYOR_LINE and $CONVEYOR_STEP name this line and step.\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_rollback_note() {
        let checks = vec![Check {
            cmd: "cargo test".into(),
            expect_exit: 0,
        }];
        let s = render(&StepPrompt {
            n: 3,
            attempt: 2,
            kind: StepKind::Executor,
            line_id: "L1",
            line_title: "t",
            line_task: "x",
            step_title: "add a flag",
            step_task: "do it",
            checks: &checks,
            rolled_back: Some("a usage limit stopped the previous attempt"),
            checkpoint: Some("abc123"),
            answers: &[],
            decisions: &["cache in memory (why: one server)".into()],
        });
        assert!(s.starts_with("conveyor step 3 attempt 2 · executor · line L1 \"t\"\n"));
        assert!(s.contains("rolled back to the last checkpoint (abc123)"));
        assert!(s.contains("`cargo test` exits 0"));
        assert!(s.contains("without Anton") && s.contains("- cache in memory (why: one server)"));
        // The author delegates to subagents and knows who checks after it.
        assert!(s.contains("subagents") && s.contains("a reviewer"), "{s}");
        let planner = render(&StepPrompt {
            n: 1,
            attempt: 1,
            kind: StepKind::Planner,
            line_id: "L1",
            line_title: "t",
            line_task: "x",
            step_title: "plan",
            step_task: "x",
            checks: &[],
            rolled_back: None,
            checkpoint: None,
            answers: &[],
            decisions: &[],
        });
        assert!(
            planner.contains("Journal your choice of level as a `fork`"),
            "{planner}"
        );
        assert!(
            planner.contains("Size every step") && planner.contains(r#""size": "xs" | "s""#),
            "{planner}"
        );
    }
}
