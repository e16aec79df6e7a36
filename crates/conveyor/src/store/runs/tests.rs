use super::super::{steps, testing};
use super::*;

#[test]
fn outcomes_read_back_by_their_names() {
    for v in RunOutcome::ALL {
        assert_eq!(RunOutcome::from_name(v.name()), Some(v));
    }
}

/// A checking role's run, in a session of its own, neither starts the line's session nor
/// counts as of it after a crash; the line's own runs do both.
#[tokio::test]
async fn only_a_run_of_a_step_without_a_session_of_its_own_is_of_the_lines_session() {
    let (_d, store) = testing::store().await;
    let line = testing::line(&store, "p", "l", 0, "running").await;
    let own = testing::step(&store, &line, StepKind::Reviewer).await;
    let c = &mut store.conn().await.unwrap();
    steps::set_session(c, &own.id, "its-own").await.unwrap();
    let role = testing::run(&store, &own.id, &line).await;
    saw_init(c, role, &line).await.unwrap();
    let started = |l: Option<lines::LineRow>| l.unwrap().session_started;
    assert!(!started(lines::get(c, &line).await.unwrap()));
    let executor = testing::step(&store, &line, StepKind::Executor).await;
    let run = testing::run(&store, &executor.id, &line).await;
    let in_line = |u: Vec<Unfinished>| {
        let mut v: Vec<(i64, bool)> = u.iter().map(|u| (u.id, u.in_line_session)).collect();
        v.sort_unstable();
        v
    };
    assert_eq!(
        in_line(unfinished(c).await.unwrap()),
        [(role, false), (run, true)]
    );
    saw_init(c, run, &line).await.unwrap();
    assert!(started(lines::get(c, &line).await.unwrap()));
}
