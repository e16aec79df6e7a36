//! One run of the agent CLI, whatever its step: started with the run's signals recorded as they
//! come (its pid, the session's start, rate-limit events), and its end recorded with its cost,
//! tokens and denials. Steps in the line's session, the judge and the checkers all run here.

use tokio_util::sync::CancellationToken;

use crate::budget::Budget;
use crate::claude::{self, Invocation, Verdict};
use crate::error::Result;
use crate::exec;
use crate::state::Shared;
use crate::store;
use crate::store::runs::{self, Ended, RunOutcome};

/// Runs the agent for one attempt, recording what the run reports while it goes (its pid,
/// the session's start, rate-limit events).
pub(super) async fn run_agent(
    sh: &Shared,
    line_id: &str,
    run_id: i64,
    inv: &Invocation,
    cancel: &CancellationToken,
) -> claude::Report {
    let db = sh.store.clone();
    let budget = sh.budget.clone();
    let clock = sh.clock.clone();
    let line_id = line_id.to_string();
    let on = move |sig: claude::Signal| -> claude::SignalFuture {
        let db = db.clone();
        let budget = budget.clone();
        let now = clock.now_ms();
        let line_id = line_id.clone();
        Box::pin(async move { record_signal(&db, &budget, now, run_id, &line_id, sig).await })
    };
    claude::run(inv, cancel, &on).await
}

/// Records an ended run: its outcome, tokens and its own cost — the delta of the session's
/// cumulative total — with the line's new session total, in one transaction. A run in a
/// session of its own (`in_line_session` false: a judge's) costs its whole total and leaves
/// the line's session total alone.
pub(super) async fn record_run_end(
    sh: &Shared,
    line_id: &str,
    run_id: i64,
    report: &claude::Report,
    verdict: &Verdict,
    hook_blocks: u32,
    in_line_session: bool,
) -> Result<()> {
    let mut tx = sh.store.begin().await?;
    let session_cost = if in_line_session {
        store::lines::get(&mut tx, line_id)
            .await?
            .expect("line exists")
            .session_cost
    } else {
        0.0
    };
    let (cost, new_total) = match &report.result {
        Some(r) if r.total_cost_usd + 1e-12 >= session_cost => {
            (r.total_cost_usd - session_cost, r.total_cost_usd)
        }
        Some(r) => {
            // The total went down: this CLI reports per call. Trust the run's own figure.
            let c = r.run_cost_reported().unwrap_or(r.total_cost_usd);
            (c, session_cost + c)
        }
        None => (0.0, session_cost),
    };
    let tokens = report
        .result
        .as_ref()
        .map(|r| r.run_tokens())
        .unwrap_or_default();
    let outcome = match verdict {
        Verdict::Finished => RunOutcome::Finished,
        Verdict::UsageLimit { .. } => RunOutcome::UsageLimit,
        Verdict::BudgetCap { .. } => RunOutcome::MaxBudget,
        Verdict::SessionInUse => RunOutcome::SessionInUse,
        Verdict::NoConversation { .. } => RunOutcome::NoConversation,
        Verdict::Fatal { .. } => RunOutcome::Fatal,
        Verdict::Failed { .. } => RunOutcome::Failed,
        Verdict::Interrupted => RunOutcome::Interrupted,
    };
    let ended = Ended {
        outcome,
        exit_code: report.exit_code,
        session_total: report.result.as_ref().map(|r| r.total_cost_usd),
        cost_usd: cost,
        input_tokens: tokens.input_tokens,
        output_tokens: tokens.output_tokens,
        cache_read: tokens.cache_read_input_tokens,
        cache_write: tokens.cache_creation_input_tokens,
        duration_ms: report.duration_ms,
        result: report.result.as_ref().and_then(|r| r.result.clone()),
        stderr_tail: exec::tail(&report.stderr, 4000),
        permission_denials: report
            .result
            .as_ref()
            .and_then(|r| r.permission_denials.as_ref())
            .map(|v| v.to_string()),
        hook_blocks,
        init_seen: report.init_seen,
    };
    runs::finish(
        &mut tx,
        run_id,
        line_id,
        in_line_session.then_some(new_total),
        &ended,
    )
    .await?;
    let denied: Vec<serde_json::Value> = report
        .result
        .as_ref()
        .and_then(|r| r.permission_denials.as_ref())
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default();
    let told =
        super::answer::ask_about_denials(sh, &mut tx, line_id, &denied, sh.clock.now_ms()).await?;
    tx.commit().await?;
    // Its cost is recorded: the live figure is done with.
    sh.budget.live.remove(run_id);
    if told {
        sh.told();
    }
    if !denied.is_empty() {
        tracing::warn!(
            line = line_id,
            run = run_id,
            denied = denied.len(),
            "the agent was denied tool calls; Anton is asked"
        );
        sh.announce_questions(line_id, denied.len());
    }
    Ok(())
}

/// Records what a run reports while it goes (pid, session start, rate-limit events, its live
/// cost). A failure is logged: the run goes on.
async fn record_signal(
    db: &store::Store,
    budget: &Budget,
    now_ms: i64,
    run_id: i64,
    line_id: &str,
    sig: claude::Signal,
) {
    let recorded: Result<()> = async {
        match sig {
            claude::Signal::Started(pid) => {
                runs::set_pid(&mut *db.conn().await?, run_id, pid).await
            }
            claude::Signal::Init => runs::saw_init(&mut *db.conn().await?, run_id, line_id).await,
            claude::Signal::Usage(tokens) => {
                budget.live.set(run_id, budget.prices.cost(&tokens));
                Ok(())
            }
            claude::Signal::RateLimit(info) => {
                store::rate_limits::insert(
                    &mut *db.conn().await?,
                    Some(run_id),
                    store::rate_limits::NewRateLimit {
                        status: &info.status,
                        resets_at: info.resets_at,
                        limit_type: info.rate_limit_type.as_deref(),
                        utilization: info.utilization(),
                        raw: &info.raw,
                    },
                )
                .await?;
                let windows = crate::budget::server_windows(&info.raw);
                budget.observe(db, now_ms, Some(run_id), &windows).await
            }
        }
    }
    .await;
    if let Err(e) = recorded {
        tracing::warn!(run = run_id, error = %e, "recording a run signal failed");
    }
}
