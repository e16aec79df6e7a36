//! PlanFix's queue: a line that names its task gets one report comment there when it is
//! done, and nothing is ever written to any other task (the task is the row's, fixed when it
//! was written). The comment carries `[conveyor:<line>:<round>]`; a post whose fate is unknown
//! (a timeout, a 5xx, a crash mid-call) is looked up by that mark before it is tried again, so
//! a retry never doubles it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use conveyor_api::{Channel, OutboxState};
use serde_json::Value;

use super::send::{GIVE_UP_MS, announce, backoff};
use crate::error::Result;
use crate::state::Shared;
use crate::store::{self, outbox};
use crate::tell::planfix::{Planfix, Report, mark, render};
use crate::tell::telegram::CallError;
use crate::tell::text::Words;

/// Gathers what the report of `line_id` says, from the line as it is now.
async fn gather(sh: &Shared, line_id: &str, round: i64) -> Result<Option<Report>> {
    let Some(line) = store::lines::get(&mut *sh.store.conn().await?, line_id).await? else {
        return Ok(None);
    };
    let Some(project) =
        store::projects::get(&mut *sh.store.conn().await?, &line.project_id).await?
    else {
        return Ok(None);
    };
    let steps = store::steps::with_cost(&mut *sh.store.conn().await?, line_id).await?;
    let cost_usd = steps.iter().map(|s| s.cost_usd).sum();
    let done: Vec<(String, String)> = steps
        .iter()
        .filter(|s| s.state == conveyor_api::StepState::Done)
        .map(|s| (s.kind.as_str().to_string(), s.title.clone()))
        .collect();
    let repo = PathBuf::from(&project.repo_path);
    let files = crate::git::line_diff(&repo, &project.main_branch, &line.branch, &sh.shutdown)
        .await
        .ok()
        .flatten()
        .map(|(_, _, f)| {
            f.into_iter()
                .map(|f| (f.path, f.change.as_str().to_string()))
                .collect()
        });
    let checks = match crate::line::checklist(sh, &line).await {
        Ok(Ok((c, ..))) => c
            .regression
            .into_iter()
            .chain(c.checklist.into_iter().map(|k| k.cmd))
            .chain(c.ui_scenarios)
            .collect(),
        _ => Vec::new(),
    };
    Ok(Some(Report {
        line_id: line.id.clone(),
        round,
        project: project.name,
        title: line.title,
        task: line.task,
        steps: done,
        files,
        checks,
        cost_usd,
        branch: line.branch,
    }))
}

/// Runs the PlanFix queue until shutdown (nothing without a `[planfix]`).
pub async fn run(sh: Arc<Shared>) {
    let Some(pc) = sh.cfg.planfix.clone() else {
        return;
    };
    let mut failures: i64 = 0;
    // The token is read once (again only while it cannot be), and one client is kept.
    let mut api: Option<Planfix> = None;
    loop {
        if sh.shutdown.is_cancelled() {
            return;
        }
        if api.is_none() {
            match crate::config::read_secret(&pc.token_file, "planfix.token_file") {
                Ok(token) => api = Some(Planfix::new(&pc.base_url, &token)),
                Err(e) => tracing::warn!(error = %e, "PlanFix reports cannot be sent"),
            }
        }
        let wait = match &api {
            Some(api) => match once(&sh, api, Words(pc.lang), &mut failures).await {
                Ok(w) => w,
                Err(e) => {
                    tracing::error!(error = %e, "PlanFix queue failed");
                    Duration::from_secs(5)
                }
            },
            None => Duration::from_secs(60),
        };
        let notified = sh.outbox_wake.notified();
        tokio::select! {
            () = notified => {}
            () = tokio::time::sleep(wait) => {}
            () = sh.shutdown.cancelled() => return,
        }
    }
}

/// Sends the head of the PlanFix queue if it is due; how long to wait before the next look.
/// `failures` counts PlanFix's failures in a row, for the backoff.
async fn once(sh: &Shared, api: &Planfix, w: Words, failures: &mut i64) -> Result<Duration> {
    let now = sh.clock.now_ms();
    let Some(head) = outbox::head(&mut *sh.store.conn().await?, Channel::Planfix).await? else {
        return Ok(Duration::from_secs(30));
    };
    if head.next_at > now {
        return Ok(Duration::from_millis(
            u64::try_from(head.next_at - now).unwrap_or(0),
        ));
    }
    let (Some(task), Some(line_id)) = (head.target.clone(), head.line_id.clone()) else {
        outbox::failed(&mut *sh.store.conn().await?, head.id, "no task or line").await?;
        return Ok(Duration::ZERO);
    };
    if now - head.created_at > GIVE_UP_MS {
        let why = format!(
            "not delivered within a day: {}",
            head.last_error.as_deref().unwrap_or("no answer")
        );
        outbox::failed(&mut *sh.store.conn().await?, head.id, &why).await?;
        announce(sh, &head, OutboxState::Failed);
        return Ok(Duration::ZERO);
    }
    let round = serde_json::from_str::<Value>(&head.body)
        .ok()
        .and_then(|v| v["round"].as_i64())
        .unwrap_or(1);
    let mark = mark(&line_id, round);
    let earlier = head.attempts > 0;
    outbox::attempt(&mut *sh.store.conn().await?, head.id).await?;
    let outcome = async {
        // A post tried before may have arrived (its answer lost): look before posting again.
        if earlier && let Some(id) = api.find(&task, &mark).await? {
            tracing::info!(id = head.id, "PlanFix: the earlier post had arrived");
            return Ok(id);
        }
        let Some(report) = gather(sh, &line_id, round)
            .await
            .map_err(|e| CallError::Transient {
                method: "report",
                why: e.to_string(),
            })?
        else {
            return Err(CallError::Refused {
                method: "report",
                why: "the line is gone".into(),
            });
        };
        api.comment(&task, &render(w, &report), &mark).await
    }
    .await;
    let mut c = sh.store.conn().await?;
    let now = sh.clock.now_ms();
    match outcome {
        Ok(id) => {
            *failures = 0;
            outbox::sent(&mut c, head.id, &id, now).await?;
            tracing::info!(id = head.id, task, "PlanFix: report posted");
            announce(sh, &head, OutboxState::Sent);
        }
        Err(CallError::Later { after, method }) => {
            let e = CallError::Later { method, after };
            let ms = i64::try_from(after.as_millis()).unwrap_or(i64::MAX);
            outbox::retry(&mut c, head.id, now + ms, &e.to_string()).await?;
        }
        Err(e @ CallError::Transient { .. }) => {
            *failures += 1;
            let ms = i64::try_from(backoff(*failures).as_millis()).unwrap_or(i64::MAX);
            outbox::retry(&mut c, head.id, now + ms, &e.to_string()).await?;
            tracing::warn!(id = head.id, error = %e, "PlanFix: will retry");
        }
        Err(e @ CallError::Refused { .. }) => {
            outbox::failed(&mut c, head.id, &e.to_string()).await?;
            tracing::error!(id = head.id, error = %e, "PlanFix: refused");
            announce(sh, &head, OutboxState::Failed);
        }
    }
    Ok(Duration::ZERO)
}
