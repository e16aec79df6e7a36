//! What the evening's tools say in words: lines, projects and last night's report.

use std::collections::HashMap;
use std::fmt::Write as _;

use conveyor_api::{Line, LineState, Project, Review};

/// A project by id, or else by name (case aside).
pub(super) fn find_project<'a>(projects: &'a [Project], key: &str) -> Option<&'a Project> {
    let key = key.trim();
    projects
        .iter()
        .find(|p| p.id == key)
        .or_else(|| projects.iter().find(|p| p.name.eq_ignore_ascii_case(key)))
}

pub(super) fn unknown_project(key: &str, projects: &[Project]) -> String {
    if projects.is_empty() {
        return format!(
            "No project has the id or name {key:?}: the daemon has no projects yet (add_project \
             registers one)."
        );
    }
    let known: Vec<String> = projects
        .iter()
        .map(|p| format!("{} (id {})", p.name, p.id))
        .collect();
    format!(
        "No project has the id or name {key:?}. The projects are: {}. list_projects gives them \
         too.",
        known.join(", ")
    )
}

pub(super) fn names(projects: &[Project]) -> HashMap<&str, &str> {
    projects
        .iter()
        .map(|p| (p.id.as_str(), p.name.as_str()))
        .collect()
}

/// Neither accepted nor cancelled.
pub(super) fn is_open(s: LineState) -> bool {
    !matches!(s, LineState::Accepted | LineState::Cancelled)
}

/// One line of a list: id, project, state, priority, title; why it waits; its task's start.
pub(super) fn describe(l: &Line, names: &HashMap<&str, &str>, task: bool) -> String {
    let project = names
        .get(l.project_id.as_str())
        .copied()
        .unwrap_or(&l.project_id);
    let mut out = format!(
        "- {} · {} · {} · priority {} · \"{}\"",
        l.id,
        project,
        l.state.as_str(),
        l.priority,
        l.title
    );
    if let Some(t) = &l.planfix_task {
        let _ = write!(out, " · PlanFix {t}");
    }
    if l.cost_usd > 0.0 {
        let _ = write!(out, " · ${:.2}", l.cost_usd);
    }
    out.push('\n');
    if let Some(r) = &l.reason {
        let _ = writeln!(out, "  why: {}", clip(r, 300));
    }
    if task {
        let _ = writeln!(out, "  task: {}", clip(&l.task, 200));
    }
    out
}

/// At most `n` characters of `s`, on one line.
pub(super) fn clip(s: &str, n: usize) -> String {
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &flat[..i]),
        None => flat,
    }
}

/// `last_night`'s text: the night glance of `GET /api/review` and the lines by where they
/// stand.
pub(super) fn night_report(review: &Review, lines: &[Line], names: &HashMap<&str, &str>) -> String {
    let n = &review.night;
    let since = chrono::DateTime::parse_from_rfc3339(&n.since).ok();
    let after_since = |l: &Line| match (since, chrono::DateTime::parse_from_rfc3339(&l.updated_at))
    {
        (Some(s), Ok(u)) => u >= s,
        _ => false,
    };
    // Open questions on the morning page, per line (validated, not yet answered).
    let mut open: HashMap<&str, usize> = HashMap::new();
    for p in &review.projects {
        for q in p.questions.iter().chain(&p.later) {
            *open.entry(q.line_id.as_str()).or_default() += 1;
        }
    }
    let of = |s: LineState| lines.iter().filter(move |l| l.state == s);
    let mut out = format!("Since {} (the night's start):\n", n.since);
    let _ = write!(out, "- spent ${:.2}", n.cost_usd);
    if let Some(t) = n.window_threshold_usd {
        let _ = write!(out, " (the window's threshold is ${t:.2})");
    }
    out.push('\n');

    let done: Vec<&Line> = of(LineState::AwaitingAcceptance).collect();
    let accepted: Vec<&Line> = of(LineState::Accepted).filter(|l| after_since(l)).collect();
    section(
        &mut out,
        "Finished, awaiting Anton's acceptance (he accepts or writes remarks in pult)",
        &done,
        names,
        |_| None,
    );
    section(&mut out, "Accepted since", &accepted, names, |_| None);

    let mut waits: Vec<&Line> = of(LineState::NeedsHuman).collect();
    waits.extend(of(LineState::WaitingAnswer));
    section(
        &mut out,
        "Waiting for Anton (answers go through pult's Review page)",
        &waits,
        names,
        |l| {
            let q = open.get(l.id.as_str()).copied().unwrap_or(0);
            Some(match l.state {
                LineState::WaitingAnswer if q == 0 => {
                    "its questions are still being judged".to_string()
                }
                _ => format!("{q} open question(s) on the morning page"),
            })
        },
    );

    let mut failed: Vec<&Line> = of(LineState::RolledBack).collect();
    failed.extend(of(LineState::Blocked));
    section(
        &mut out,
        "Failed, rolled back or blocked",
        &failed,
        names,
        |l| {
            l.steps
                .iter()
                .rev()
                .find_map(|s| s.error.as_deref())
                .map(|e| format!("last step error: {}", clip(e, 200)))
        },
    );

    let running: Vec<&Line> = lines
        .iter()
        .filter(|l| {
            is_open(l.state)
                && !matches!(
                    l.state,
                    LineState::Queued
                        | LineState::AwaitingAcceptance
                        | LineState::NeedsHuman
                        | LineState::WaitingAnswer
                        | LineState::RolledBack
                        | LineState::Blocked
                )
        })
        .collect();
    section(&mut out, "Still going", &running, names, |_| None);
    let queued = of(LineState::Queued).count();
    let _ = writeln!(
        out,
        "Queued, not started: {queued} (list_lines shows them)."
    );
    let _ = writeln!(
        out,
        "The judge: {} question(s) sent back to their sessions and {} duplicate(s) since then; \
         {} waiting to be judged, {} in rework. Open questions on the morning page: {}.",
        n.sent_back,
        n.duplicates,
        review.pending_judgement,
        review.in_rework,
        open.values().sum::<usize>()
    );
    out
}

/// A titled list of lines, each with its reason and `extra`; "none" when empty.
pub(super) fn section(
    out: &mut String,
    title: &str,
    lines: &[&Line],
    names: &HashMap<&str, &str>,
    extra: impl Fn(&Line) -> Option<String>,
) {
    if lines.is_empty() {
        let _ = writeln!(out, "{title}: none.");
        return;
    }
    let _ = writeln!(out, "{title} ({}):", lines.len());
    for l in lines {
        out.push_str(&describe(l, names, false));
        if let Some(x) = extra(l) {
            let _ = writeln!(out, "  {x}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_cuts_on_characters_and_flattens() {
        assert_eq!(clip("a\n b  c", 10), "a b c");
        assert_eq!(clip("привет мир", 6), "привет…");
    }
}
