//! One run of the agent CLI, whatever its step: started with the run's signals recorded as they
//! come (its pid, the session's start, rate-limit events), and its end recorded with its cost,
//! tokens and denials. Steps in the line's session, the judge and the checkers all run here.

use std::path::{Path, PathBuf};

use conveyor_api::StepKind;
use tokio_util::sync::CancellationToken;

use crate::budget::Budget;
use crate::claude::{self, Invocation, Verdict, Wrap};
use crate::config::SandboxMode;
use crate::error::Result;
use crate::exec;
use crate::roles::denials;
use crate::sandbox::{Sandbox, Setup};
use crate::state::Shared;
use crate::store::runs::{self, Ended, RunOutcome};
use crate::store::{self, LineRow};

/// Runs the agent for one attempt inside its sandbox (unless `[sandbox] mode = "off"`),
/// recording what the run reports while it goes (its pid, the session's start, rate-limit
/// events) and, once it ends, what the sandbox refused it.
pub(super) async fn run_agent(
    sh: &Shared,
    line: &LineRow,
    kind: StepKind,
    run_id: i64,
    inv: &Invocation,
    cancel: &CancellationToken,
) -> claude::Report {
    let db = sh.store.clone();
    let budget = sh.budget.clone();
    let clock = sh.clock.clone();
    let events = sh.events.clone();
    let line_id = line.id.clone();
    let on = move |sig: claude::Signal| -> claude::SignalFuture {
        let db = db.clone();
        let budget = budget.clone();
        let events = events.clone();
        let now = clock.now_ms();
        let line_id = line_id.clone();
        Box::pin(async move {
            record_signal(&db, &budget, &events, now, run_id, &line_id, sig).await;
        })
    };
    let report = if sh.cfg.sandbox.mode == SandboxMode::Off {
        claude::run(inv, cancel, &on).await
    } else {
        run_sandboxed(sh, line, kind, run_id, inv, cancel, &on).await
    };
    // A CLI config file left broken (a run killed mid-write) fails every later run until it
    // is put back: put it back now, so that the step's next attempt can run.
    if let Some(path) = claude::broken_config(&report) {
        match claude::repair_config(&path, sh.clock.now_ms()) {
            Ok(Some(done)) => {
                tracing::warn!(line = %line.id, run = run_id, path = %path.display(), repair = ?done, "the CLI's config file was broken; put back")
            }
            Ok(None) => {}
            Err(e) => {
                tracing::error!(line = %line.id, run = run_id, path = %path.display(), error = %e, "the CLI's config file is broken and could not be put back")
            }
        }
    }
    report
}

async fn run_sandboxed(
    sh: &Shared,
    line: &LineRow,
    kind: StepKind,
    run_id: i64,
    inv: &Invocation,
    cancel: &CancellationToken,
    on: &(dyn Fn(claude::Signal) -> claude::SignalFuture + Send + Sync),
) -> claude::Report {
    let sandbox = match sandbox(sh, line, kind, run_id, inv).await {
        Ok(s) => s,
        Err(e) => {
            // Never a run outside the sandbox it was meant to have: the run does not start.
            tracing::error!(line = %line.id, run = run_id, error = %e, "the run's sandbox could not be set up");
            return claude::Report {
                spawn_error: Some(format!("the run's sandbox could not be set up: {e}")),
                ..claude::Report::default()
            };
        }
    };
    let wrapped = Invocation {
        wrap: Some(Wrap {
            prefix: sandbox.prefix(),
            env: Sandbox::env(),
        }),
        ..inv.clone()
    };
    let report = claude::run(&wrapped, cancel, on).await;
    let found = sandbox.finish(&inv.log).await;
    if let Err(e) = super::refusal::record_run(sh, &line.id, run_id, &found).await {
        tracing::warn!(line = %line.id, run = run_id, error = %e, "recording the sandbox's refusals failed");
    }
    report
}

/// The run's sandbox: its line's worktree and branch, its project's `allow_hosts` (from fresh
/// main, never the line's branch), every other project hidden.
async fn sandbox(
    sh: &Shared,
    line: &LineRow,
    kind: StepKind,
    run_id: i64,
    inv: &Invocation,
) -> Result<Sandbox> {
    let projects = store::projects::all(&mut *sh.store.conn().await?).await?;
    let repo = projects
        .iter()
        .find(|p| p.id == line.project_id)
        .map(|p| PathBuf::from(&p.repo_path))
        .ok_or_else(|| crate::error::Error::Internal("line without project".into()))?;
    let (allow_hosts, telegram) = match super::checklist::checklist(sh, line).await? {
        Ok((list, ..)) => (list.sandbox.allow_hosts, list.telegram),
        // The gate stops the line for it; until then the run reaches the API only.
        Err(_) => (Vec::new(), Default::default()),
    };
    // The tester runs the Telegram scenarios through the daemon (telegram::serve).
    let telegram = (kind == StepKind::Tester && sh.cfg.telegram.is_some()).then_some(telegram);
    let setup = Setup {
        run_id,
        worktree: Path::new(line.worktree.as_deref().unwrap_or_default()),
        repo: &repo,
        branch: &line.branch,
        line_id: &line.id,
        allow_hosts: &allow_hosts,
        other_repos: projects
            .iter()
            .filter(|p| p.id != line.project_id)
            .map(|p| PathBuf::from(&p.repo_path))
            .collect(),
        needs_memory: crate::vault::needs_memory(kind),
        env: &inv.env,
        telegram,
    };
    Sandbox::start(sh, &setup).await
}

/// What an ended run is recorded from.
pub(super) struct RunEnd<'a> {
    pub kind: StepKind,
    pub report: &'a claude::Report,
    pub verdict: &'a Verdict,
    /// The run's stream-json log: why each of its calls was denied.
    pub log: &'a Path,
    /// The Stop hook's blocks.
    pub hook_blocks: u32,
    /// False for a run in a session of its own (a judge's, a checker's).
    pub in_line_session: bool,
}

/// Records an ended run: its outcome, tokens and its own cost — the delta of the session's
/// cumulative total — with the line's new session total, in one transaction. A run in a
/// session of its own (`in_line_session` false: a judge's) costs its whole total and leaves
/// the line's session total alone. Its denials stay on the run (the line shows them); Anton
/// is asked about each, except a checking run's own mistakes (`roles::denials`), whose
/// number is returned for the caller to count against the run.
///
/// # Errors
/// Database errors.
pub(super) async fn record_run_end(
    sh: &Shared,
    line_id: &str,
    run_id: i64,
    end: &RunEnd<'_>,
) -> Result<usize> {
    let RunEnd {
        kind,
        report,
        verdict,
        log,
        hook_blocks,
        in_line_session,
    } = *end;
    let denied: Vec<serde_json::Value> = report
        .result
        .as_ref()
        .and_then(|r| r.permission_denials.as_ref())
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default();
    let sorted = sort_denials(sh, line_id, kind, log, denied).await;
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
    let ask = &sorted.for_anton;
    let told =
        super::answer::ask_about_denials(sh, &mut tx, line_id, ask, sh.clock.now_ms()).await?;
    tx.commit().await?;
    // Its cost is recorded: the live figure is done with.
    sh.budget.live.remove(run_id);
    if told {
        sh.told();
    }
    if sorted.mistakes > 0 {
        tracing::warn!(
            line = line_id,
            run = run_id,
            kind = %kind,
            denied = sorted.mistakes,
            "the checker tried tools its role does not have; recorded on the line"
        );
    }
    if !ask.is_empty() {
        tracing::warn!(
            line = line_id,
            run = run_id,
            denied = ask.len(),
            "the agent was denied tool calls; Anton is asked"
        );
        sh.announce_questions(line_id, ask.len());
    }
    Ok(sorted.mistakes)
}

/// A run's denials, sorted: a checker's mistake (a tool its role lacks, a write its guard
/// refuses) is the daemon's business, never a question; what the never-autonomous guard
/// denied it still is, as every denial of a working run.
async fn sort_denials(
    sh: &Shared,
    line_id: &str,
    kind: StepKind,
    log: &Path,
    denied: Vec<serde_json::Value>,
) -> denials::Denials {
    if !denials::checking(kind) || denied.is_empty() {
        return denials::Denials {
            for_anton: denied,
            mistakes: 0,
        };
    }
    // The guard's own check as its hook ran it: the line's context file, and the daemon's
    // environment for what a command expands (a call both guards deny is a file tool's: a
    // role's guard leaves Bash alone, and the judge has no Bash).
    let cx = crate::guard::read_context(&super::guard::context_file(sh, line_id));
    let never = |tool: &str, input: &serde_json::Value| {
        crate::guard::check(tool, input, &cx, &|name| std::env::var(name).ok()).is_some()
    };
    let log = tokio::fs::read_to_string(log).await.unwrap_or_default();
    denials::sort(&denied, &log, &never)
}

/// Records what a run reports while it goes (pid, session start, rate-limit events, its live
/// cost) and tells `/api/events` how far its transcript goes. A failure is logged: the run goes on.
async fn record_signal(
    db: &store::Store,
    budget: &Budget,
    events: &crate::events::Events,
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
            claude::Signal::Transcript(seq) => {
                events.emit(
                    conveyor_api::EventKind::RunEvent,
                    crate::events::EventBody {
                        line_id: Some(line_id.to_string()),
                        run: Some(conveyor_api::RunEvent { run_id, seq }),
                        ..Default::default()
                    },
                );
                Ok(())
            }
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
