//! `GET /api/lines/{id}/runs` and `GET /api/runs/{id}/transcript`: a line's runs, and what a
//! run's agent said and did, read from its stream-json log on each request (so a running run
//! is followed by asking again with `after=`, as `run_event` on `/api/events` says when).

use axum::extract::{Path, Query, State};
use axum::routing::get;
use axum::{Json, Router};
use conveyor_api::{ApiErrorBody, Run, RunOutcome, Tokens, Transcript};
use conveyor_core::transcript::{OUTPUT_LIMIT, Reader, Secrets};
use serde::Deserialize;

use super::error::ApiError;
use super::state::{ApiState, AppState};
use crate::budget::Meter;
use crate::claude::Resumer;
use crate::state::Shared;
use crate::store;

pub fn router() -> Router<ApiState> {
    Router::new()
        .route("/api/lines/{id}/runs", get(of_line))
        .route("/api/runs/{id}/transcript", get(transcript))
}

/// The path parameter of `/api/lines/{id}/runs`.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
struct LineId {
    /// The line's id.
    id: String,
}

/// The path parameter of `/api/runs/{id}…`.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
struct RunId {
    /// The run's id, as `GET /api/lines/{id}/runs` gave it. A string here, as every other id
    /// in a path: it names a run, it is not a quantity (one that is not a run's is a 404).
    id: String,
}

/// The query of `GET /api/runs/{id}/transcript`.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct After {
    /// Only the events past this `seq` (0, or none, for all).
    after: Option<i64>,
}

/// A line's runs (every attempt of every step, a judge's and the checking roles' included),
/// oldest first.
#[utoipa::path(get, operation_id = "get_line_runs", path = "/api/lines/{id}/runs", params(LineId),
    responses((status = 200, body = [Run]), (status = 404, description = "`not_found`: no line has that id", body = ApiErrorBody)))]
async fn of_line(
    State(st): State<AppState>,
    Path(LineId { id }): Path<LineId>,
) -> Result<Json<Vec<Run>>, ApiError> {
    if store::lines::get(&mut *st.store.conn().await?, &id)
        .await?
        .is_none()
    {
        return Err(ApiError::not_found(format!("no line {id}")));
    }
    let runs = store::runs::of_line(&mut *st.store.conn().await?, &id).await?;
    let env = st.agent_base_env();
    let own_home = std::env::var("HOME").ok();
    let resumer = Resumer {
        claude_bin: &st.cfg.claude_bin,
        user: st.agent_user.as_ref().map(|u| u.name.as_str()),
        env: &env,
        own_home: own_home.as_deref(),
    };
    Ok(Json(
        runs.into_iter()
            .map(|mut r| {
                r.run.resume = match (&r.worktree, &r.run.session_id) {
                    (Some(w), Some(s)) => Some(resumer.command(w, s)),
                    _ => None,
                };
                r.run
            })
            .collect(),
    ))
}

/// What a run's agent said and did, in order: text, thinking, tool calls and their results,
/// the CLI's result. Long tool outputs are cut with a mark; known secrets are hidden. `done`
/// once the run has ended and every event is served.
#[utoipa::path(get, operation_id = "get_run_transcript", path = "/api/runs/{id}/transcript",
    params(RunId, After),
    responses((status = 200, body = Transcript), (status = 400, description = "`bad_request`: an `after` that is not a whole number", body = ApiErrorBody), (status = 404, description = "`not_found`: no run has that id", body = ApiErrorBody)))]
async fn transcript(
    State(st): State<AppState>,
    p: Result<Path<RunId>, axum::extract::rejection::PathRejection>,
    q: Result<Query<After>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Transcript>, ApiError> {
    // A malformed id or `after` is the API's own 400 body, as every other route's.
    let Path(RunId { id }) = p?;
    let Query(After { after }) = q?;
    let no_run = || ApiError::not_found(format!("no run {id}"));
    let run_id = id.parse::<i64>().map_err(|_| no_run())?;
    let Some(r) = store::runs::view(&mut *st.store.conn().await?, run_id).await? else {
        return Err(no_run());
    };
    // Read after the row: a run the row says ended has its whole log on disk by then.
    let done = r.run.outcome != RunOutcome::Running;
    let text = match &r.log_path {
        Some(p) => match tokio::fs::read(p).await {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            // Not written yet (the process is starting), or cleaned away.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => {
                tracing::error!(error = %e, path = p, "run log unreadable");
                return Err(crate::error::Error::io(p, e).into());
            }
        },
        None => String::new(),
    };
    let after = after.unwrap_or(0);
    // So far: the same meter as the budget's live cost, over the whole lines written.
    let mut meter = Meter::default();
    let mut events = Reader::new(secrets(&st).await, OUTPUT_LIMIT)
        .read_each(&text, None, |v| {
            meter.feed(v);
        })
        .events;
    events.retain(|e| i64::try_from(e.seq).unwrap_or(i64::MAX) > after);
    let t = meter.total();
    let tokens = Tokens {
        input: t.input,
        output: t.output,
        cache_read: t.cache_read,
        cache_write: t.cache_write,
    };
    // A run cut by a crash ended with no figure of the CLI's: the meter's is the only one.
    let cost_usd = if done && r.run.cost_usd > 0.0 {
        r.run.cost_usd
    } else {
        st.budget.prices.cost(&meter.tokens())
    };
    Ok(Json(Transcript {
        events,
        done,
        tokens,
        cost_usd,
    }))
}

/// Every secret the daemon holds: the API's token (inline or its file's), the Catcher's bot
/// token, PlanFix's token, the Telegram checks' API hash and test bot token. Read on each request, so a rotated token file is hidden too.
pub(crate) async fn secrets(sh: &Shared) -> Secrets {
    let mut values: Vec<String> = sh.cfg.token.iter().cloned().collect();
    let files = sh
        .cfg
        .token_file
        .iter()
        .chain(sh.cfg.catcher.as_ref().map(|c| &c.bot_token_file))
        .chain(sh.cfg.planfix.as_ref().map(|p| &p.token_file))
        .chain(sh.cfg.telegram.iter().flat_map(|t| {
            [&t.api_hash_file, &t.test_bot_token_file]
                .into_iter()
                .flatten()
        }));
    for f in files {
        if let Ok(v) = tokio::fs::read_to_string(f).await {
            values.push(v);
        }
    }
    Secrets::new(values)
}
