//! The scheduler: N slots, at most one active line per project, highest priority first, and
//! before every step the one question to the budget policy: may this step start now? The
//! candidates are asked in priority order against one snapshot of the budget, each started
//! step's estimate counted before the next is asked: when the best line's step does not fit,
//! a shorter step of a line below it that does fit starts (packing).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use conveyor_api::{LineState, ReasonCode};
use tokio::task::JoinSet;

use crate::budget::{self, Admitted, Decision};
use crate::error::Result;
use crate::line::{self, ACTIVE, Action, HOLDING};
use crate::state::Shared;
use crate::store::{self, LineRow, now_ms, rfc3339};

/// Runs until shutdown; then stops the running lines and waits for them. Nothing starts
/// before the first preflight has said whether anything blocks.
pub async fn run(sh: Arc<Shared>) {
    let mut tasks: JoinSet<()> = JoinSet::new();
    sh.first_preflight().await;
    loop {
        if sh.shutdown.is_cancelled() {
            break;
        }
        if let Err(e) = pass(&sh, &mut tasks).await {
            tracing::error!(error = %e, "scheduler pass failed");
        }
        while let Some(r) = tasks.try_join_next() {
            if let Err(e) = r {
                tracing::error!(error = %e, "line task panicked");
            }
        }
        tokio::select! {
            () = sh.wake.notified() => {}
            () = tokio::time::sleep(Duration::from_millis(sh.cfg.tick_ms)) => {}
            () = sh.shutdown.cancelled() => {}
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
        }
    }
    // Running agents see the shutdown token and are stopped; wait for their bookkeeping.
    while tasks.join_next().await.is_some() {}
}

/// The preflight at start and every `preflight_interval_secs` until shutdown (the API runs it
/// on demand too): a block that clears lets the lines go on by themselves.
pub async fn preflight(sh: Arc<Shared>) {
    let every = Duration::from_secs(sh.cfg.preflight_interval_secs.max(1));
    loop {
        if let Err(e) = sh.refresh_preflight().await {
            tracing::error!(error = %e, "preflight failed");
        }
        tokio::select! {
            () = tokio::time::sleep(every) => {}
            () = sh.shutdown.cancelled() => return,
        }
    }
}

/// One look at the queue: start what may start.
async fn pass(sh: &Arc<Shared>, tasks: &mut JoinSet<()>) -> Result<()> {
    for (l, admitted) in choose(sh).await? {
        let token = sh.start_advancing(&l.id, admitted.estimate_usd);
        let sh2 = sh.clone();
        let id = l.id.clone();
        tasks.spawn(async move {
            if let Err(e) = line::advance(&sh2, &id, admitted, &token).await {
                tracing::error!(line = %id, error = %e, "line failed");
                let _ = sh2
                    .set_line_state(
                        &id,
                        LineState::Blocked,
                        Some((ReasonCode::Internal, &format!("internal error: {e}"))),
                        None,
                    )
                    .await;
            }
            sh2.stop_advancing(&id);
            sh2.wake.notify_one();
        });
    }
    Ok(())
}

/// The lines to advance now, with the budget's estimate of their step: at most the free slots,
/// at most one line per project (counting the lines running now), highest priority first.
/// Lines the budget or the account's limit holds back are parked here.
async fn choose(sh: &Shared) -> Result<Vec<(LineRow, Admitted)>> {
    let mut chosen = Vec::new();
    let running: HashSet<String> = sh.advancing_ids().into_iter().collect();
    let mut free = sh.cfg.slots.saturating_sub(running.len());
    if free == 0 {
        return Ok(chosen);
    }
    let now = now_ms();
    // Lines the closed vault holds go back to work once it opens.
    crate::vault::recheck(sh).await?;
    let candidates = store::lines::in_states(&mut *sh.store.conn().await?, &ACTIVE).await?;
    if candidates.is_empty() {
        return Ok(chosen);
    }
    // Projects held by a line other than the candidate.
    let holders = store::lines::projects_in_states(&mut *sh.store.conn().await?, &HOLDING).await?;
    // A line being advanced holds its project whatever its state says: a line just started
    // stays `queued` until its worktree exists.
    let mut taken: HashSet<String> = HashSet::new();
    for id in &running {
        if let Some(l) = store::lines::get(&mut *sh.store.conn().await?, id).await? {
            taken.insert(l.project_id);
        }
    }
    let account_park = store::account::park_until(&mut *sh.store.conn().await?)
        .await?
        .filter(|t| *t > now);
    let mut snap = sh.budget.snapshot(&sh.store, now, &sh.admitted()).await?;
    let preflight = sh.preflight();

    for l in candidates {
        if free == 0 {
            break;
        }
        if running.contains(&l.id) || taken.contains(&l.project_id) {
            continue;
        }
        // A line that holds its project itself is never kept out by another holder: were two
        // ever to hold one project, each would wait for the other forever. Only one of them is
        // advanced at a time all the same (`taken`).
        if !HOLDING.contains(&l.state)
            && holders
                .iter()
                .any(|(p, id)| *p == l.project_id && *id != l.id)
        {
            continue;
        }
        // A line waiting for the budget is asked again on every pass (its `park_until` is the
        // budget's forecast, and the account's park is checked below): room can come sooner
        // than forecast (a running step cost less than its estimate), and the best line must
        // have the first claim on it, not the shorter steps packed below it.
        if l.state != LineState::WaitingBudget && l.park_until.is_some_and(|t| t > now) {
            taken.insert(l.project_id.clone());
            continue;
        }
        let action = line::next_action(sh, &l).await?;
        // What the preflight blocks waits, keeping its project, and says so; it goes on by
        // itself once a later preflight clears it.
        let blocked = preflight.as_ref().and_then(|r| {
            r.blocks_project(&l.project_id).or(match action {
                Action::Step { .. } => r.blocks_steps(),
                Action::Merge | Action::Deploy => r.blocks_merge(&l.project_id),
                Action::Gate | Action::Sort | Action::Wait(..) | Action::Nothing => None,
            })
        });
        if let Some(item) = blocked {
            taken.insert(l.project_id.clone());
            let why = format!("waiting: {}", item.message);
            if l.reason_code != Some(ReasonCode::Preflight) || l.reason.as_deref() != Some(&why) {
                sh.set_line_state(
                    &l.id,
                    l.state,
                    Some((ReasonCode::Preflight, &why)),
                    l.park_until,
                )
                .await?;
            }
            continue;
        }
        let admitted = match action {
            Action::Nothing => continue,
            Action::Step { kind, size, step } => {
                if let Some(until) = account_park {
                    taken.insert(l.project_id.clone());
                    if l.state != LineState::WaitingBudget || l.park_until != Some(until) {
                        sh.set_line_state(
                            &l.id,
                            LineState::WaitingBudget,
                            Some((
                                ReasonCode::UsageLimit,
                                &format!("the account's usage limit resets at {}", rfc3339(until)),
                            )),
                            Some(until),
                        )
                        .await?;
                    }
                    continue;
                }
                // The single decision point of the budget.
                match sh.budget.policy.admit(
                    &mut snap,
                    budget::Class { kind, size },
                    &l.project_id,
                    step.as_deref(),
                ) {
                    // A step that needs memory starts only while the vault is open (checked
                    // now, just before it would start).
                    Decision::Start { .. }
                        if crate::vault::needs_memory(kind)
                            && crate::vault::check(sh).await? == Some(false) =>
                    {
                        taken.insert(l.project_id.clone());
                        crate::vault::block(sh, &l.id).await?;
                        continue;
                    }
                    Decision::Start { estimate_usd } => {
                        sh.budget
                            .policy
                            .admitted(&snap.runs, kind, &l.project_id, estimate_usd)
                    }
                    Decision::Wait { until_ms, reason } => {
                        taken.insert(l.project_id.clone());
                        // Not a new event every pass for the same wait.
                        if l.state != LineState::WaitingBudget
                            || l.park_until.is_none_or(|t| (t - until_ms).abs() > 60_000)
                            || l.reason.as_deref() != Some(reason.as_str())
                        {
                            sh.set_line_state(
                                &l.id,
                                LineState::WaitingBudget,
                                Some((ReasonCode::Budget, &reason)),
                                Some(until_ms),
                            )
                            .await?;
                        }
                        continue;
                    }
                }
            }
            Action::Gate | Action::Merge | Action::Deploy | Action::Sort | Action::Wait(..) => {
                Admitted::NOTHING
            }
        };
        taken.insert(l.project_id.clone());
        free -= 1;
        chosen.push((l, admitted));
    }
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::testing;
    use crate::store::testing as rows;

    fn ids(chosen: &[(LineRow, Admitted)]) -> Vec<&str> {
        chosen.iter().map(|(l, _)| l.id.as_str()).collect()
    }

    #[tokio::test]
    async fn no_more_lines_than_slots_highest_priority_first() {
        let tmp = tempfile::tempdir().unwrap();
        let d = testing::start(&tmp.path().join("data"), "slots = 2").await;
        let sh = d.shared().clone();
        rows::line(&sh.store, "p1", "low", 1, "queued").await;
        rows::line(&sh.store, "p2", "high", 9, "queued").await;
        rows::line(&sh.store, "p3", "mid", 5, "queued").await;
        let chosen = choose(&sh).await.unwrap();
        assert_eq!(ids(&chosen), ["high", "mid"]);
        // One slot taken by a line being advanced: one more starts.
        sh.start_advancing("high", 0.0);
        assert_eq!(ids(&choose(&sh).await.unwrap()), ["mid"]);
        drop(sh);
        d.stop().await;
    }

    /// `PUT /api/lines/order` is the scheduler's order: lines of equal priority start by age
    /// (then id), and a reorder decides which starts first.
    #[tokio::test]
    async fn a_reorder_is_the_order_lines_start_in() {
        let tmp = tempfile::tempdir().unwrap();
        let d = testing::start(&tmp.path().join("data"), "slots = 3").await;
        let sh = d.shared().clone();
        for (p, id) in [("p1", "a"), ("p2", "b"), ("p3", "c")] {
            rows::line(&sh.store, p, id, 0, "queued").await;
        }
        rows::exec(&sh.store, "UPDATE lines SET created_at = 1").await;
        assert_eq!(ids(&choose(&sh).await.unwrap()), ["a", "b", "c"]);
        let order = ["c", "a", "b"].map(String::from);
        crate::line::order::reorder(&sh, &order)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(ids(&choose(&sh).await.unwrap()), ["c", "a", "b"]);
        drop(sh);
        d.stop().await;
    }

    #[tokio::test]
    async fn one_line_per_project_the_best_one() {
        let tmp = tempfile::tempdir().unwrap();
        let d = testing::start(&tmp.path().join("data"), "slots = 3").await;
        let sh = d.shared().clone();
        rows::line(&sh.store, "p", "a", 1, "queued").await;
        rows::line(&sh.store, "p", "b", 7, "queued").await;
        rows::line(&sh.store, "q", "c", 0, "queued").await;
        assert_eq!(ids(&choose(&sh).await.unwrap()), ["b", "c"]);
        // A line of the project holding it by its state keeps the others out.
        rows::line(&sh.store, "r", "holder", 0, "gate").await;
        rows::line(&sh.store, "r", "waiting", 9, "queued").await;
        assert!(!ids(&choose(&sh).await.unwrap()).contains(&"waiting"));
        drop(sh);
        d.stop().await;
    }

    /// Two lines that both hold one project (an answer sent one back to work while the other
    /// ran) do not wait for each other forever: the better one goes, one at a time.
    #[tokio::test]
    async fn two_holders_of_one_project_do_not_wait_for_each_other() {
        let tmp = tempfile::tempdir().unwrap();
        let d = testing::start(&tmp.path().join("data"), "slots = 3").await;
        let sh = d.shared().clone();
        rows::line(&sh.store, "p", "a", 5, "running").await;
        rows::line(&sh.store, "p", "b", 3, "running").await;
        assert_eq!(ids(&choose(&sh).await.unwrap()), ["a"]);
        sh.start_advancing("a", 0.0);
        assert!(choose(&sh).await.unwrap().is_empty(), "one at a time");
        sh.stop_advancing("a");
        rows::exec(
            &sh.store,
            "UPDATE lines SET state = 'awaiting_acceptance' WHERE id = 'a'",
        )
        .await;
        assert_eq!(ids(&choose(&sh).await.unwrap()), ["b"]);
        drop(sh);
        d.stop().await;
    }

    /// A judge run is a budgeted step like any other: it waits when its kind's estimate does
    /// not fit, and starts with that estimate when it does.
    #[tokio::test]
    async fn a_judge_step_asks_the_budget_like_any_step() {
        for (threshold, starts) in [(0.5, false), (10.0, true)] {
            let tmp = tempfile::tempdir().unwrap();
            let d = testing::start(
                &tmp.path().join("data"),
                &format!("[budget]\nthreshold_usd = {threshold}\nmargin = 0.0\ncold_start_usd = {{ judge = 0.75 }}"),
            )
            .await;
            let sh = d.shared().clone();
            let id = rows::line(&sh.store, "p", "l", 0, "running").await;
            let judge = rows::step(&sh.store, &id, conveyor_api::StepKind::Judge).await;
            assert_eq!(
                line::next_action(
                    &sh,
                    &store::lines::get(&mut sh.store.conn().await.unwrap(), &id)
                        .await
                        .unwrap()
                        .unwrap()
                )
                .await
                .unwrap(),
                Action::Step {
                    kind: conveyor_api::StepKind::Judge,
                    size: None,
                    step: Some(judge.id.clone())
                }
            );
            let chosen = choose(&sh).await.unwrap();
            if starts {
                assert_eq!(
                    chosen
                        .iter()
                        .map(|(l, e)| (l.id.as_str(), e.estimate_usd))
                        .collect::<Vec<_>>(),
                    [("l", 0.75)]
                );
            } else {
                assert!(chosen.is_empty());
                let l = store::lines::get(&mut sh.store.conn().await.unwrap(), &id)
                    .await
                    .unwrap()
                    .unwrap();
                assert_eq!(
                    (l.state, l.reason_code),
                    (LineState::WaitingBudget, Some(ReasonCode::Budget))
                );
            }
            drop(sh);
            d.stop().await;
        }
    }

    /// A line just started is still `queued` in the database until its worktree exists: it
    /// holds its project all the same.
    #[tokio::test]
    async fn a_started_line_still_queued_holds_its_project() {
        let tmp = tempfile::tempdir().unwrap();
        let d = testing::start(&tmp.path().join("data"), "slots = 3").await;
        let sh = d.shared().clone();
        rows::line(&sh.store, "p", "first", 9, "queued").await;
        rows::line(&sh.store, "p", "second", 1, "queued").await;
        sh.start_advancing("first", 0.0);
        assert!(choose(&sh).await.unwrap().is_empty());
        drop(sh);
        d.stop().await;
    }

    /// A run of a planner in `project` that ended `ago_ms` ago having cost `cost`.
    async fn spent(sh: &Shared, project: &str, cost: f64, ago_ms: i64) {
        let line = rows::line(
            &sh.store,
            project,
            &uuid::Uuid::new_v4().to_string(),
            0,
            "accepted",
        )
        .await;
        let step =
            crate::store::testing::step(&sh.store, &line, conveyor_api::StepKind::Planner).await;
        let run = rows::run(&sh.store, &step.id, &line).await;
        rows::end_run(&sh.store, run, "planner", "ok", cost, now_ms() - ago_ms).await;
    }

    /// Packing: the best line's step (its project's planners cost 6) does not fit the room
    /// of 4.5 left in the window, nor does the next one's (the kind's p90 across projects, 6); lines below
    /// them whose steps fit start, in priority order, each admitted estimate counting for the
    /// next: after 1 and 3.5, the last line's 1 no longer fits. The others wait with the reason.
    #[tokio::test]
    async fn a_shorter_step_of_a_lower_line_fills_the_room_the_best_one_does_not_fit() {
        let tmp = tempfile::tempdir().unwrap();
        let d = testing::start(
            &tmp.path().join("data"),
            "slots = 5\n[budget]\nwindow_secs = 3600\nthreshold_usd = 10.0\nmargin = 0.0\nproject_min_runs = 3",
        )
        .await;
        let sh = d.shared().clone();
        // History from yesterday (outside the window).
        for (project, cost) in [("big", 6.0), ("small", 1.0), ("mid", 3.5), ("tiny", 1.0)] {
            for _ in 0..3 {
                spent(&sh, project, cost, 24 * 3_600_000).await;
            }
        }
        // 5.5 spent in the window.
        spent(&sh, "other", 5.5, 60_000).await;
        rows::line(&sh.store, "big", "best", 9, "queued").await;
        rows::line(&sh.store, "new", "next", 7, "queued").await;
        rows::line(&sh.store, "small", "s1", 5, "queued").await;
        rows::line(&sh.store, "mid", "s2", 3, "queued").await;
        rows::line(&sh.store, "tiny", "s3", 1, "queued").await;
        let chosen = choose(&sh).await.unwrap();
        assert_eq!(ids(&chosen), ["s1", "s2"]);
        let est: Vec<f64> = chosen.iter().map(|(_, e)| e.estimate_usd).collect();
        assert_eq!(est, [1.0, 3.5]);
        for id in ["best", "next", "s3"] {
            let l = store::lines::get(&mut sh.store.conn().await.unwrap(), id)
                .await
                .unwrap()
                .unwrap();
            assert_eq!(l.state, LineState::WaitingBudget, "{id}");
            assert!(l.reason.unwrap_or_default().starts_with("budget:"), "{id}");
            assert!(l.park_until.is_some_and(|t| t > now_ms()), "{id}");
        }
        drop(sh);
        d.stop().await;
    }

    /// A line waiting for the budget is asked again on every pass: when room comes before the
    /// forecast in its `park_until`, the best line takes it before anyone below.
    #[tokio::test]
    async fn a_waiting_line_takes_room_that_comes_before_its_forecast() {
        let tmp = tempfile::tempdir().unwrap();
        let d = testing::start(
            &tmp.path().join("data"),
            "slots = 2\n[budget]\nwindow_secs = 3600\nthreshold_usd = 10.0\nmargin = 0.0\ncold_start_usd = { planner = 4.0 }",
        )
        .await;
        let sh = d.shared().clone();
        // 7 spent: room 3, the planner needs 4.
        spent(&sh, "other", 7.0, 60_000).await;
        rows::line(&sh.store, "p1", "best", 9, "queued").await;
        assert!(choose(&sh).await.unwrap().is_empty());
        let l = store::lines::get(&mut sh.store.conn().await.unwrap(), "best")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(l.state, LineState::WaitingBudget);
        let forecast = l.park_until.unwrap();
        assert!(
            forecast > now_ms() + 50 * 60_000,
            "when the 7 leaves the window"
        );
        // The next pass again: the same wait is not written (nor announced) again.
        store::lines::set_updated_at(&mut sh.store.conn().await.unwrap(), "best", 0)
            .await
            .unwrap();
        assert!(choose(&sh).await.unwrap().is_empty());
        assert_eq!(
            store::lines::get(&mut sh.store.conn().await.unwrap(), "best")
                .await
                .unwrap()
                .unwrap()
                .updated_at,
            0
        );
        // Room comes sooner (that spending turns out smaller), and a line below arrives too.
        rows::exec(
            &sh.store,
            "UPDATE runs SET cost_usd = 2.0 WHERE cost_usd = 7.0",
        )
        .await;
        rows::line(&sh.store, "p2", "below", 1, "queued").await;
        let chosen = choose(&sh).await.unwrap();
        assert_eq!(ids(&chosen), ["best", "below"]);
        drop(sh);
        d.stop().await;
    }
}
