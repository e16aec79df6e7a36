//! The judge's prompt: pure, from what the daemon gathered. The first line names the step
//! like every step prompt (`conveyor step <n> attempt <a> · judge · line <id> "<title>"`).

use std::fmt::Write as _;

/// One entry to judge.
#[derive(Debug, Clone)]
pub struct ToJudge {
    pub id: String,
    /// `fork` or `question`.
    pub kind: &'static str,
    pub text: String,
    pub options: Vec<String>,
    pub default: Option<String>,
    pub why: Option<String>,
    pub reversible: Option<bool>,
    pub expensive: Option<bool>,
    pub reworks: i64,
    /// What the step it comes from read.
    pub reads: Vec<String>,
}

/// What the judge is given.
#[derive(Debug, Clone)]
pub struct JudgePrompt<'a> {
    pub n: i64,
    pub attempt: i64,
    pub line_id: &'a str,
    pub line_title: &'a str,
    pub line_task: &'a str,
    pub entries: &'a [ToJudge],
    /// `git diff` of the line against its fork point (cut).
    pub diff: &'a str,
    /// `(path, text)` of the project's memory (cut).
    pub memory: &'a [(String, String)],
    /// `(id, text)` of the project's open validated questions.
    pub open: &'a [(String, String)],
    /// The project's latest decisions taken without Anton.
    pub decisions: &'a [String],
    /// What the sandbox refused the line's agents, oldest first.
    pub refused: &'a [conveyor_api::Refusal],
    /// Whether the list is frozen now (by day): only irreversible and expensive entries then
    /// may go to Anton at once.
    pub by_day: bool,
    /// `$CONVEYOR_VERDICT`, written out: the judge has no shell to read it.
    pub verdict_path: &'a str,
}

/// The most refusals the prompt lists (each kind and what once); the rest are counted.
pub const REFUSALS_IN_PROMPT: usize = 12;

/// The refusals as the prompt lists them: each kind and what once, with the first step that
/// met it and how many runs did, the first [`REFUSALS_IN_PROMPT`] of them and a count of the
/// rest.
pub fn refusal_lines(refused: &[conveyor_api::Refusal]) -> Vec<String> {
    let mut seen: Vec<(&conveyor_api::Refusal, usize)> = Vec::new();
    for r in refused {
        match seen
            .iter_mut()
            .find(|(s, _)| s.kind == r.kind && s.what == r.what)
        {
            Some((_, runs)) => *runs += 1,
            None => seen.push((r, 1)),
        }
    }
    let mut out: Vec<String> = seen
        .iter()
        .take(REFUSALS_IN_PROMPT)
        .map(|(r, runs)| {
            let what = last_chars(&r.what, 200);
            match runs {
                1 => format!("{} {what} (step {})", r.kind, r.step_n),
                n => format!("{} {what} (step {}; {n} runs)", r.kind, r.step_n),
            }
        })
        .collect();
    if seen.len() > REFUSALS_IN_PROMPT {
        out.push(format!("… and {} more", seen.len() - REFUSALS_IN_PROMPT));
    }
    out
}

/// The end of `s`, at most `n` characters, an ellipsis marking a cut (a path's end says more
/// than its start).
fn last_chars(s: &str, n: usize) -> String {
    let count = s.chars().count();
    if count <= n {
        s.to_string()
    } else {
        format!("…{}", s.chars().skip(count - n).collect::<String>())
    }
}

fn yes_no(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "not said",
    }
}

/// Renders the prompt.
pub fn render(p: &JudgePrompt<'_>) -> String {
    let mut s = format!(
        "conveyor step {} attempt {} · judge · line {} \"{}\"\n\n",
        p.n, p.attempt, p.line_id, p.line_title
    );
    s.push_str(
        "You are the JUDGE of the questions an agent working overnight wants to put to Anton, \
         the person who owns this project. His morning must hold only questions that really need \
         him. You never write code and you do not change the worktree: read (Read, Grep, Glob) \
         and decide.\n\nFor every entry below choose one verdict:\n\
         - \"validated\": only Anton can settle it (taste, money, an irreversible or expensive \
           choice, something the memory and the code do not answer). Give the reason.\n\
         - \"duplicate\": it asks what an open question already asks; set \"duplicate_of\" to that \
           question's id (one listed under open questions, or another entry you validate now).\n\
         - \"rework\": the agent cut corners (did not look at the code or the memory, asks what \
           they answer, gives no options or default); say what it must do. It goes back to the \
           agent's session.\n\
         - \"decided\": the default is sound and reversible enough; it stands. Say why.\n\n",
    );
    let _ = write!(
        s,
        "The line: \"{}\".\n{}\n\n## Entries to judge\n",
        p.line_title, p.line_task
    );
    for e in p.entries {
        let _ = writeln!(s, "- id: {}\n  kind: {}\n  text: {}", e.id, e.kind, e.text);
        if !e.options.is_empty() {
            let _ = writeln!(s, "  options: {}", e.options.join(" | "));
        }
        if let Some(d) = &e.default {
            let _ = writeln!(s, "  default: {d}");
        }
        if let Some(w) = &e.why {
            let _ = writeln!(s, "  why: {w}");
        }
        let _ = writeln!(
            s,
            "  reversible: {}; expensive: {}; sent back before: {} time(s)",
            yes_no(e.reversible),
            yes_no(e.expensive),
            e.reworks
        );
        if e.reads.is_empty() {
            s.push_str("  its step read: nothing\n");
        } else {
            let _ = writeln!(s, "  its step read: {}", e.reads.join(", "));
        }
    }
    s.push_str("\n## Open validated questions of the project\n");
    if p.open.is_empty() {
        s.push_str("(none)\n");
    }
    for (id, text) in p.open {
        let _ = writeln!(s, "- {id}: {text}");
    }
    if !p.refused.is_empty() {
        s.push_str(
            "\n## What the sandbox refused this line's agents\n\
             Facts: none of it had an effect outside its run. The daemon asks Anton itself \
             about a refused host (allow it for the project, or go on without it); a local \
             address, a write outside the run's places and a moved ref are nothing a project \
             allows. So an entry that asks Anton only because the sandbox refused something is \
             not a question for him: a duplicate of the daemon's open question when one is \
             listed above, else decided.\n",
        );
        for l in refusal_lines(p.refused) {
            let _ = writeln!(s, "- {l}");
        }
    }
    s.push_str("\n## The project's memory\n");
    if p.memory.is_empty() {
        s.push_str("(none configured)\n");
    }
    for (path, text) in p.memory {
        let _ = writeln!(s, "### {path}\n{text}\n");
    }
    if !p.decisions.is_empty() {
        s.push_str("\n## Decisions taken lately without Anton\n");
        for d in p.decisions {
            let _ = writeln!(s, "- {d}");
        }
    }
    s.push_str("\n## The line's diff against its fork point\n");
    if p.diff.trim().is_empty() {
        s.push_str("(no change yet)\n");
    } else {
        let _ = writeln!(s, "```diff\n{}\n```", p.diff.trim_end());
    }
    if p.by_day {
        s.push_str(
            "\nIt is day: Anton's list for today is frozen. Validate only what is irreversible \
             and expensive and cannot wait; set \"reversible\" and \"expensive\" on such an entry.\n",
        );
    }
    let ids: Vec<&str> = p.entries.iter().map(|e| e.id.as_str()).collect();
    let _ = write!(
        s,
        "\nWrite your verdict with the Write tool to {} (the file $CONVEYOR_VERDICT names, \
         outside the worktree), as JSON:\n\
         {{\"entries\": [{{\"id\": …, \"verdict\": \"validated\" | \"duplicate\" | \"rework\" | \
         \"decided\", \"duplicate_of\": … (duplicates only), \"why\": …}}], \"level\": \"light\" | \
         \"medium\" | \"full\" (optional: only to raise the line's level)}}\n\
         Name every one of these ids exactly once: {}.\n",
        p.verdict_path,
        ids.join(", ")
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_names_the_step_the_entries_and_every_id() {
        let entries = [ToJudge {
            id: "q-1".into(),
            kind: "question",
            text: "Keep the old API?".into(),
            options: vec!["yes".into(), "no".into()],
            default: Some("yes".into()),
            why: None,
            reversible: Some(false),
            expensive: None,
            reworks: 1,
            reads: vec!["/w/docs/memory.md".into()],
        }];
        let open = [("q-0".to_string(), "Which port?".to_string())];
        let s = render(&JudgePrompt {
            n: 4,
            attempt: 2,
            line_id: "L1",
            line_title: "api",
            line_task: "do it",
            entries: &entries,
            diff: "+x",
            memory: &[("docs/memory.md".into(), "we keep APIs".into())],
            open: &open,
            decisions: &[],
            refused: &[],
            by_day: false,
            verdict_path: "/d/verdict.json",
        });
        assert!(s.starts_with("conveyor step 4 attempt 2 · judge · line L1 \"api\"\n"));
        assert!(s.contains("id: q-1"));
        assert!(s.contains("options: yes | no"));
        assert!(s.contains("reversible: no; expensive: not said; sent back before: 1"));
        assert!(s.contains("- q-0: Which port?"));
        assert!(s.contains("### docs/memory.md\nwe keep APIs"));
        assert!(s.contains("Name every one of these ids exactly once: q-1."));
        assert!(!s.contains("It is day"));
        assert!(s.contains("with the Write tool to /d/verdict.json (the file"));
        assert!(!s.contains("sandbox refused"));
    }

    fn refusal(step_n: u32, kind: conveyor_api::RefusalKind, what: &str) -> conveyor_api::Refusal {
        conveyor_api::Refusal {
            step_n,
            kind,
            what: what.into(),
            at: "2026-01-01T00:00:00.000Z".into(),
        }
    }

    /// The line's refusals are a short list after the open questions: each kind and what
    /// once, with its first step and its runs, the rest counted.
    #[test]
    fn the_prompt_lists_the_refusals_once_each_and_counts_the_rest() {
        use conveyor_api::RefusalKind::{Host, Ref, Write};
        let mut refused = vec![
            refusal(2, Host, "pypi.org:443"),
            refusal(2, Write, "/home/agent/.cache/x"),
            refusal(3, Host, "pypi.org:443"),
            refusal(3, Ref, "refs/heads/main: aaa -> bbb"),
            refusal(4, Host, "pypi.org:443"),
        ];
        let s = render(&JudgePrompt {
            n: 5,
            attempt: 1,
            line_id: "L1",
            line_title: "api",
            line_task: "do it",
            entries: &[],
            diff: "",
            memory: &[],
            open: &[("q-0".into(), "Allow pypi.org:443?".into())],
            decisions: &[],
            refused: &refused,
            by_day: false,
            verdict_path: "/d/verdict.json",
        });
        let section = s
            .split("## What the sandbox refused this line's agents\n")
            .nth(1)
            .unwrap();
        assert!(s.find("- q-0: Allow").unwrap() < s.find("## What the sandbox refused").unwrap());
        assert!(section.contains("not a question for him"), "{section}");
        let listed: Vec<&str> = section
            .lines()
            .skip_while(|l| !l.starts_with("- "))
            .take_while(|l| l.starts_with("- "))
            .collect();
        assert_eq!(
            listed,
            [
                "- host pypi.org:443 (step 2; 3 runs)",
                "- write /home/agent/.cache/x (step 2)",
                "- ref refs/heads/main: aaa -> bbb (step 3)",
            ]
        );
        for i in 0..REFUSALS_IN_PROMPT + 2 {
            refused.push(refusal(6, Write, &format!("/etc/f{i}")));
        }
        let lines = refusal_lines(&refused);
        assert_eq!(lines.len(), REFUSALS_IN_PROMPT + 1);
        assert_eq!(lines.last().unwrap(), "… and 5 more");
    }
}
