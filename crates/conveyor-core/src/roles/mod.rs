//! The checking roles' rules: which roles a level runs ([`chain`]), what the diff says about
//! the level and the gate ([`forced_full`], [`first_match`]), the round still to run
//! ([`missing`]), a role's verdict file ([`verdict`]) and what a checking run was denied
//! ([`denials`]). Their runs are the daemon's (`roles`, `line::roles`).
//!
//! A line is a chain of roles, each its own run: the author (planner, executor, fixer) works in
//! the line's session; tester, reviewer and skeptic each run in a fresh session of their own,
//! because the one who wrote the code is a bad checker of it.

pub mod denials;
pub mod verdict;

use conveyor_api::{Level, RoleCall, RoleVerdict, StepKind, StepState};
use serde::Deserialize;

/// `[roles]`: which of the project's agents (`.claude/agents/<name>.md` on fresh main) plays
/// each checking role. A named agent the project does not have is replaced by the built-in
/// prompt, so the defaults (Anton's names) cost nothing where they are absent.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Roles {
    pub tester: String,
    pub reviewer: String,
    pub skeptic: String,
    /// More checking agents at the full level, each its own run after the skeptic.
    pub extra: Vec<String>,
}

impl Default for Roles {
    fn default() -> Self {
        Roles {
            tester: "qa-checker".into(),
            reviewer: "code-reviewer".into(),
            skeptic: "skeptic".into(),
            extra: Vec::new(),
        }
    }
}

/// The kinds whose steps change the line's code: a checking round counts from the last one.
pub const AUTHORS: [StepKind; 7] = [
    StepKind::Planner,
    StepKind::Executor,
    StepKind::Fixer,
    StepKind::Rework,
    StepKind::Answer,
    StepKind::Remarks,
    StepKind::Investigate,
];

/// The checking kinds.
pub const CHECKERS: [StepKind; 4] = [
    StepKind::Tester,
    StepKind::Reviewer,
    StepKind::Skeptic,
    StepKind::Extra,
];

/// One checking role of a round: its kind and the project agent it is asked to run as (a
/// name from `[roles]`; whether the project has it is looked up on fresh main when it runs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Role {
    pub kind: StepKind,
    pub agent: String,
}

/// Light = tester; medium = + reviewer; full = + skeptic and the `extra` agents, in that
/// order (the cheap, mechanical checks first: a reviewer reading code whose tests are red
/// would be wasted).
pub fn chain(level: Level, roles: &Roles) -> Vec<Role> {
    let role = |kind, agent: &str| Role {
        kind,
        agent: agent.to_string(),
    };
    let mut out = vec![role(StepKind::Tester, &roles.tester)];
    if rank(level) >= rank(Level::Medium) {
        out.push(role(StepKind::Reviewer, &roles.reviewer));
    }
    if level == Level::Full {
        out.push(role(StepKind::Skeptic, &roles.skeptic));
        out.extend(roles.extra.iter().map(|a| role(StepKind::Extra, a)));
    }
    out
}

/// A level's rank: light < medium < full.
pub fn rank(l: Level) -> u8 {
    match l {
        Level::Light => 1,
        Level::Medium => 2,
        Level::Full => 3,
    }
}

/// Whether `to` is above `from` (no level counts as light).
pub fn raises(from: Option<Level>, to: Level) -> bool {
    rank(to) > from.map_or(rank(Level::Light), rank)
}

/// What the daemon knows of one of the line's steps, for [`missing`].
#[derive(Debug, Clone)]
pub struct Seen<'a> {
    pub n: i64,
    pub kind: StepKind,
    pub state: StepState,
    /// The role name it was queued as (its title), for telling extras apart.
    pub title: &'a str,
    pub verdict: Option<RoleCall>,
}

/// The step title a role is queued under; extras are told apart by it.
pub fn title(r: &Role) -> String {
    format!("{}: {}", r.kind.as_str(), r.agent)
}

/// The roles of `chain` that have not passed since the code last changed: the round still to
/// run. A role passed when a step of it, after the last author step that is done, ended with
/// `pass`. Empty: the round is complete.
pub fn missing(steps: &[Seen<'_>], chain: &[Role]) -> Vec<Role> {
    let last_author = steps
        .iter()
        .filter(|s| AUTHORS.contains(&s.kind) && s.state == StepState::Done)
        .map(|s| s.n)
        .max()
        .unwrap_or(0);
    chain
        .iter()
        .filter(|r| {
            let t = title(r);
            !steps.iter().any(|s| {
                s.n > last_author
                    && s.kind == r.kind
                    && s.title == t
                    && s.verdict == Some(RoleCall::Pass)
            })
        })
        .cloned()
        .collect()
}

/// The findings of a `rework` verdict as the fixer's task.
pub fn rework_task(kind: StepKind, agent: Option<&str>, v: &RoleVerdict) -> String {
    let who = match agent {
        Some(a) => format!("The {} ({a})", kind.as_str()),
        None => format!("The {}", kind.as_str()),
    };
    let mut s = format!("{who} checked the line's work and sent it back. Fix what it found:\n");
    for f in &v.findings {
        let at = match (&f.path, f.line) {
            (Some(p), Some(l)) => format!("{p}:{l}: "),
            (Some(p), None) => format!("{p}: "),
            _ => String::new(),
        };
        s.push_str(&format!("- {at}{}\n", f.text));
    }
    s
}

/// The paths a diff touches that force the full level, and why: `.conveyor.toml` (the gate
/// itself), `.claude/**` (the project's agents and settings: the checkers themselves), any
/// `migrations` folder, and the project's `full_level_paths`.
pub fn forced_full(touched: &[String], full_level_paths: &[String]) -> Option<String> {
    const BUILT_IN: [(&str, &str); 3] = [
        (".conveyor.toml", "the project's checklist"),
        (".claude/**", "the project's agents and settings"),
        ("**/migrations/**", "a migration"),
    ];
    for (glob, what) in BUILT_IN {
        if let Some(p) = first_match(touched, &[glob.to_string()]) {
            return Some(format!("the diff touches {p} ({what})"));
        }
    }
    first_match(touched, full_level_paths)
        .map(|p| format!("the diff touches {p} (full_level_paths in .conveyor.toml)"))
}

/// The first of `paths` that matches one of `globs` (globs that do not parse match nothing;
/// `.conveyor.toml` is checked when it is read).
pub fn first_match<'a>(paths: &'a [String], globs: &[String]) -> Option<&'a String> {
    let mut b = globset::GlobSetBuilder::new();
    for g in globs {
        if let Ok(g) = globset::GlobBuilder::new(g).literal_separator(true).build() {
            b.add(g);
        }
    }
    let set = b.build().ok()?;
    paths.iter().find(|p| set.is_match(p.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_string()).collect()
    }

    #[test]
    fn each_level_adds_its_roles_in_order() {
        let roles = Roles {
            extra: s(&["test-reviewer", "reality-checker"]),
            ..Roles::default()
        };
        let kinds = |l| chain(l, &roles).iter().map(title).collect::<Vec<_>>();
        assert_eq!(kinds(Level::Light), ["tester: qa-checker"]);
        assert_eq!(
            kinds(Level::Medium),
            ["tester: qa-checker", "reviewer: code-reviewer"]
        );
        assert_eq!(
            kinds(Level::Full),
            [
                "tester: qa-checker",
                "reviewer: code-reviewer",
                "skeptic: skeptic",
                "extra: test-reviewer",
                "extra: reality-checker"
            ]
        );
        assert!(raises(None, Level::Medium));
        assert!(!raises(None, Level::Light));
        assert!(!raises(Some(Level::Full), Level::Medium));
    }

    /// A round is what has not passed since the last author step: a fixer after a rework
    /// makes every role run again; a pass before it counts for nothing.
    #[test]
    fn a_round_counts_from_the_last_author_step() {
        fn seen(n: i64, kind: StepKind, title: &str, verdict: Option<RoleCall>) -> Seen<'_> {
            Seen {
                n,
                kind,
                state: StepState::Done,
                title,
                verdict,
            }
        }
        let roles = chain(Level::Medium, &Roles::default());
        let (t, r) = (title(&roles[0]), title(&roles[1]));
        let (t, r) = (t.as_str(), r.as_str());
        let mut steps = vec![seen(1, StepKind::Planner, "plan", None)];
        assert_eq!(missing(&steps, &roles).len(), 2);
        steps.push(seen(2, StepKind::Executor, "do", None));
        steps.push(seen(3, StepKind::Tester, t, Some(RoleCall::Pass)));
        steps.push(seen(4, StepKind::Reviewer, r, Some(RoleCall::Rework)));
        assert_eq!(missing(&steps, &roles), vec![roles[1].clone()]);
        steps.push(seen(5, StepKind::Fixer, "fix", None));
        assert_eq!(
            missing(&steps, &roles).len(),
            2,
            "the fixer changed the code"
        );
        steps.push(seen(6, StepKind::Tester, t, Some(RoleCall::Pass)));
        steps.push(seen(7, StepKind::Reviewer, r, Some(RoleCall::Pass)));
        assert!(missing(&steps, &roles).is_empty());
    }

    #[test]
    fn the_diff_forces_full_with_its_reason() {
        let why = |t: &[&str], f: &[&str]| forced_full(&s(t), &s(f));
        assert!(why(&["src/a.rs", "README.md"], &[]).is_none());
        assert!(
            why(&["db/migrations/0001.sql"], &[])
                .unwrap()
                .contains("db/migrations/0001.sql (a migration)")
        );
        assert!(why(&["migrations/0001.sql"], &[]).is_some());
        assert!(why(&[".conveyor.toml"], &[]).unwrap().contains("checklist"));
        assert!(
            why(&[".claude/agents/code-reviewer.md"], &[])
                .unwrap()
                .contains("agents")
        );
        assert!(
            why(&["billing/pay.rs"], &["billing/**"])
                .unwrap()
                .contains("full_level_paths")
        );
        // `*` stays within a folder, as in .gitignore.
        assert!(first_match(&s(&["web/a/b.svelte"]), &s(&["web/*.svelte"])).is_none());
        assert!(first_match(&s(&["web/a/b.svelte"]), &s(&["web/**"])).is_some());
    }
}
