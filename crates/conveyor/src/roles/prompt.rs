//! A checking role's prompt. Its first line is every step's header (`conveyor step <n>
//! attempt <a> · <kind> · line <id> "<title>"`); then what the role is for (the project's own
//! agent brings its own system prompt, so the built-in text is the whole brief only without
//! one), the line's task, how to see its diff, the project's commands, and the verdict file.

use std::fmt::Write as _;

use conveyor_api::StepKind;

/// What a role's prompt is built from.
#[derive(Debug, Clone)]
pub struct RolePrompt<'a> {
    pub n: i64,
    pub attempt: i64,
    pub kind: StepKind,
    /// The project agent it runs as, if any.
    pub agent: Option<&'a str>,
    pub line_id: &'a str,
    pub line_title: &'a str,
    pub line_task: &'a str,
    /// The commit the line forked from main at: `git diff <base>` shows the line's work.
    pub base: &'a str,
    /// `git diff --stat` of the line against `base`.
    pub diff_stat: &'a str,
    /// The project's regression, checklist and click commands, for the tester.
    pub commands: &'a [String],
    /// Earlier rounds' findings that a fixer worked on, newest last.
    pub earlier: &'a [String],
    pub verdict_path: &'a str,
}

fn brief(kind: StepKind) -> &'static str {
    match kind {
        StepKind::Tester => {
            "You are the line's tester. Run the project's regression and checklist commands \
             below yourself, and its click scenarios when it has them (a `telegram-check` \
             command runs its Telegram scenarios: each failed step it prints is a finding of \
             yours, word for word); then check that what the task asked for is covered by a \
             test that would fail without the change. A test that only passes is not enough: \
             read it."
        }
        StepKind::Reviewer => {
            "You are the line's code reviewer. Read the diff and the code around it: is it \
             correct, does it do what the task asks and nothing it does not, are errors handled, \
             are names and structure in the project's style, is anything left half done?"
        }
        StepKind::Skeptic => {
            "You are the line's skeptic. Assume the work is wrong until you see otherwise: what \
             did the author assume without checking, what input or state breaks it, what would go \
             wrong in production, what does the task really ask that the diff does not do?"
        }
        _ => "You are a checker of the line's work. Check it as your instructions say.",
    }
}

/// Renders the prompt.
pub fn render(p: &RolePrompt<'_>) -> String {
    let mut s = format!(
        "conveyor step {} attempt {} · {} · line {} \"{}\"\n\n",
        p.n,
        p.attempt,
        p.kind.as_str(),
        p.line_id,
        p.line_title
    );
    match p.agent {
        Some(a) => {
            let _ = writeln!(
                s,
                "You run as the project's own agent `{a}`, checking the line's work as its {}.",
                p.kind.as_str()
            );
        }
        None => s.push_str(brief(p.kind)),
    }
    s.push_str(
        "\n\nYou did not write this code: another agent did, in its own session. You only \
         check it. Do not change the code; whatever you change in the worktree is reset after \
         you. Use subagents for wide searches to keep your own context small.\n\n",
    );
    let _ = write!(
        s,
        "The line's task:\n{}\n\nIts work so far is `git diff {}` in this worktree (the commit \
         it forked from main at); `git log {}..HEAD` lists its commits. Files changed:\n{}\n",
        p.line_task.trim(),
        p.base,
        p.base,
        if p.diff_stat.trim().is_empty() {
            "(none)"
        } else {
            p.diff_stat.trim_end()
        }
    );
    if !p.commands.is_empty() {
        s.push_str("\nThe project's own commands (its regression, checklist and clicks):\n");
        for c in p.commands {
            let _ = writeln!(s, "- `{c}`");
        }
    }
    if !p.earlier.is_empty() {
        s.push_str("\nEarlier rounds sent the line back for these; check they are fixed:\n");
        for e in p.earlier {
            let _ = writeln!(s, "- {}", e.trim());
        }
    }
    let _ = write!(
        s,
        "\nYour verdict is what the daemon acts on, and the only thing of yours it keeps: write \
         it as JSON to the file named by $CONVEYOR_VERDICT ({}) before you stop:\n\
         {{\"verdict\": \"pass\" | \"rework\", \"findings\": [{{\"path\": \"src/x.rs\", \"line\": 12, \
         \"text\": \"what is wrong and what right looks like\"}}]}}\n\
         `pass` lets the line go on towards the merge. `rework` sends your findings to the \
         author's session as a fixer step, and then every check runs again; give each finding \
         enough to act on without you. A verdict written without looking at the work (no file \
         read, no command run) is discarded and the check runs again.\n",
        p.verdict_path
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_names_the_step_the_diff_and_the_verdict() {
        let commands = ["cargo test".to_string()];
        let earlier = ["src/a.rs:3: unwrap on user input".to_string()];
        let p = RolePrompt {
            n: 4,
            attempt: 1,
            kind: StepKind::Reviewer,
            agent: Some("code-reviewer"),
            line_id: "l1",
            line_title: "Add login",
            line_task: "Add a login form",
            base: "abc123",
            diff_stat: " src/a.rs | 3 ++-\n",
            commands: &commands,
            earlier: &earlier,
            verdict_path: "/d/verdict.json",
        };
        let text = render(&p);
        assert!(
            text.starts_with("conveyor step 4 attempt 1 · reviewer · line l1 \"Add login\"\n"),
            "{text}"
        );
        for want in [
            "agent `code-reviewer`",
            "git diff abc123",
            "src/a.rs | 3",
            "`cargo test`",
            "unwrap on user input",
            "/d/verdict.json",
            "\"rework\"",
        ] {
            assert!(text.contains(want), "{want} missing:\n{text}");
        }
        let text = render(&RolePrompt {
            agent: None,
            kind: StepKind::Skeptic,
            ..p
        });
        assert!(text.contains("You are the line's skeptic"), "{text}");
    }
}
