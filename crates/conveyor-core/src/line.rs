//! What a line needs next, from its state, its steps and its questions (DESIGN.md, "States and
//! holding"). The daemon reads those from SQLite and does what [`next_action`] says; the
//! scheduler asks it for every line it considers.

use conveyor_api::{LineState, ReasonCode, StepKind, StepSize, StepState};

/// Gate failures in a row before a line needs Anton (`Line.rounds` counts towards it; pult
/// says "round 2 of 3" from this number, generated into its TypeScript).
pub const GATE_ROUNDS: i64 = 3;

/// States in which the daemon (not Anton) moves the line on.
pub const ACTIVE: [LineState; 9] = [
    LineState::Queued,
    LineState::Planning,
    LineState::Running,
    LineState::Fixing,
    LineState::Gate,
    LineState::Merging,
    LineState::Deploying,
    LineState::RolledBack,
    LineState::WaitingBudget,
];

/// States in which a line holds its project (one line per project at a time).
pub const HOLDING: [LineState; 9] = [
    LineState::Planning,
    LineState::Running,
    LineState::WaitingBudget,
    LineState::WaitingAnswer,
    LineState::Gate,
    LineState::Fixing,
    LineState::Merging,
    LineState::Deploying,
    LineState::RolledBack,
];

/// What a line needs next.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Run this step (the budget is asked first).
    Step {
        kind: StepKind,
        /// The planner's size of the step, when its plan gave one.
        size: Option<StepSize>,
        /// The step's id, once it exists (the planner of a new line has none yet).
        step: Option<String>,
    },
    /// Sort the journal's new entries by the daemon's rules; a judge step for the rest.
    Sort,
    /// Its steps are done and its entries hold it: wait in `waiting_answer` saying why.
    Wait(ReasonCode, String),
    Gate,
    Merge,
    /// Deploy the merge and check its health (or settle a deploy a dead daemon left).
    Deploy,
    Nothing,
}

/// One of the line's steps, as the decision sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step<'a> {
    pub id: &'a str,
    pub kind: StepKind,
    pub size: Option<StepSize>,
    pub state: StepState,
}

/// The line's journal entries by where they stand.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Questions {
    /// Not yet sorted by the daemon's rules.
    pub unvalidated: i64,
    /// Validated and open: each waits for Anton's answer.
    pub waiting: i64,
    /// Still with the judge: unvalidated or sent back for rework.
    pub judging: i64,
}

/// Whether a step is still to run (never run, or stopped part-way).
pub fn open(state: StepState) -> bool {
    matches!(state, StepState::Pending | StepState::Interrupted)
}

/// The step to run next: a judge first (the line's next step waits for it), then what carries
/// something back to the session (a rework, Anton's answers), then the rest in order.
pub fn next_step<'s, 'a>(steps: &'s [Step<'a>]) -> Option<&'s Step<'a>> {
    let first = |kinds: &[StepKind]| {
        steps
            .iter()
            .find(|s| open(s.state) && kinds.contains(&s.kind))
    };
    first(&[StepKind::Judge])
        .or_else(|| first(&[StepKind::Rework, StepKind::Answer]))
        .or_else(|| steps.iter().find(|s| open(s.state)))
}

/// What holds a line whose steps are done, before the gate: an open validated question (it
/// waits for Anton's answer) or an entry still being judged.
pub fn holding(q: &Questions) -> Option<(ReasonCode, String)> {
    if q.waiting > 0 {
        Some((
            ReasonCode::WaitingAnswer,
            format!("waiting for Anton's answer to {} question(s)", q.waiting),
        ))
    } else if q.judging > 0 {
        Some((
            ReasonCode::PendingJudgement,
            format!("{} journal entries are still being judged", q.judging),
        ))
    } else {
        None
    }
}

/// What the line needs next.
pub fn next_action(state: LineState, steps: &[Step<'_>], q: &Questions) -> Action {
    match state {
        // A line at the gate goes through the same checks as one whose last step just ended:
        // new entries are judged and an open question holds it before the gate runs.
        LineState::Merging => Action::Merge,
        LineState::Deploying => Action::Deploy,
        s if ACTIVE.contains(&s) => {
            let judging = steps.iter().any(|s| {
                s.kind == StepKind::Judge && (open(s.state) || s.state == StepState::Running)
            });
            if steps.is_empty() {
                Action::Step {
                    kind: StepKind::Planner,
                    size: None,
                    step: None,
                }
            } else if !judging && q.unvalidated > 0 {
                Action::Sort
            } else if let Some(s) = next_step(steps) {
                Action::Step {
                    kind: s.kind,
                    size: s.size,
                    step: Some(s.id.to_string()),
                }
            } else if steps
                .iter()
                // A judge that failed every run showed its entries as asked: it holds nothing.
                .any(|s| s.state == StepState::Failed && s.kind != StepKind::Judge)
            {
                Action::Nothing
            } else if let Some((code, why)) = holding(q) {
                Action::Wait(code, why)
            } else {
                Action::Gate
            }
        }
        _ => Action::Nothing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(id: &str, kind: StepKind, state: StepState) -> Step<'_> {
        Step {
            id,
            kind,
            size: None,
            state,
        }
    }

    fn next(state: LineState, steps: &[Step<'_>], q: Questions) -> Action {
        next_action(state, steps, &q)
    }

    fn runs(id: &str) -> Action {
        let kind = match id {
            "j" => StepKind::Judge,
            "r" => StepKind::Rework,
            _ => StepKind::Executor,
        };
        Action::Step {
            kind,
            size: None,
            step: Some(id.into()),
        }
    }

    #[test]
    fn a_new_line_plans_first() {
        let a = next(LineState::Queued, &[], Questions::default());
        assert_eq!(
            a,
            Action::Step {
                kind: StepKind::Planner,
                size: None,
                step: None
            }
        );
    }

    #[test]
    fn a_judge_goes_first_then_what_goes_back_to_the_session() {
        let done = step("p", StepKind::Planner, StepState::Done);
        let e = step("e", StepKind::Executor, StepState::Pending);
        let r = step("r", StepKind::Rework, StepState::Pending);
        let j = step("j", StepKind::Judge, StepState::Interrupted);
        let q = Questions::default();
        assert_eq!(next(LineState::Running, &[done, e, r, j], q), runs("j"));
        assert_eq!(next(LineState::Running, &[done, e, r], q), runs("r"));
        assert_eq!(next(LineState::Running, &[done, e], q), runs("e"));
    }

    #[test]
    fn new_entries_are_sorted_unless_a_judge_has_them() {
        let done = step("p", StepKind::Planner, StepState::Done);
        let e = step("e", StepKind::Executor, StepState::Pending);
        let q = Questions {
            unvalidated: 1,
            ..Questions::default()
        };
        assert_eq!(next(LineState::Running, &[done, e], q), Action::Sort);
        let j = step("j", StepKind::Judge, StepState::Running);
        assert_eq!(next(LineState::Running, &[done, e, j], q), runs("e"));
    }

    #[test]
    fn done_steps_wait_for_anton_or_the_judge_then_go_to_the_gate() {
        let done = [step("p", StepKind::Planner, StepState::Done)];
        let waiting = Questions {
            waiting: 2,
            ..Questions::default()
        };
        assert_eq!(
            next(LineState::Running, &done, waiting),
            Action::Wait(
                ReasonCode::WaitingAnswer,
                "waiting for Anton's answer to 2 question(s)".into()
            )
        );
        let judging = Questions {
            judging: 1,
            ..Questions::default()
        };
        assert!(matches!(
            next(LineState::Running, &done, judging),
            Action::Wait(ReasonCode::PendingJudgement, _)
        ));
        assert_eq!(
            next(LineState::Gate, &done, Questions::default()),
            Action::Gate
        );
    }

    #[test]
    fn a_failed_step_holds_the_line_but_a_failed_judge_does_not() {
        let failed = [step("e", StepKind::Executor, StepState::Failed)];
        assert_eq!(
            next(LineState::Running, &failed, Questions::default()),
            Action::Nothing
        );
        let judge = [step("j", StepKind::Judge, StepState::Failed)];
        assert_eq!(
            next(LineState::Running, &judge, Questions::default()),
            Action::Gate
        );
    }

    #[test]
    fn merging_and_deploying_go_on_and_anton_s_states_wait() {
        let q = Questions::default();
        assert_eq!(next(LineState::Merging, &[], q), Action::Merge);
        assert_eq!(next(LineState::Deploying, &[], q), Action::Deploy);
        for s in [
            LineState::WaitingAnswer,
            LineState::NeedsHuman,
            LineState::AwaitingAcceptance,
            LineState::Cancelled,
        ] {
            assert_eq!(next(s, &[], q), Action::Nothing, "{s:?}");
        }
    }
}
