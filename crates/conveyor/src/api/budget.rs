//! `/api/budget`: every pool's spent, threshold and reset, the running estimates, what each
//! step kind costs, the misses, the account's park and the server's last word — the figures
//! the policy decides on, from the same snapshot.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use conveyor_api::{Budget, BudgetPool, KindStats, Misses, PoolKind, RateLimit, StepKind};

use super::error::ApiError;
use super::state::{ApiState, AppState};
use crate::store::runs::RunOutcome;
use crate::store::{self, now_ms, rfc3339};

pub fn router() -> Router<ApiState> {
    Router::new().route("/api/budget", get(budget))
}

#[utoipa::path(get, operation_id = "get_budget", path = "/api/budget", responses((status = 200, body = Budget)))]
async fn budget(State(st): State<AppState>) -> Result<Json<Budget>, ApiError> {
    let now = now_ms();
    let (snap, running) = st.budget.view(&st.store, now, &st.admitted()).await?;
    let policy = &st.budget.policy;
    let mut pools = Vec::new();
    for p in policy.pools(&snap) {
        let calibration = match p.kind {
            PoolKind::Window => snap.window_calibration.clone(),
            PoolKind::Weekly => st.budget.calibration(&st.store, p.kind, now).await?,
            PoolKind::Monthly => None,
        };
        pools.push(BudgetPool {
            kind: p.kind,
            span_secs: u32::try_from(p.span_ms / 1000).unwrap_or(u32::MAX),
            spent_usd: p.spent_usd,
            threshold_usd: p.threshold_usd,
            resets_at: p.resets_at_ms().map(rfc3339),
            utilization: p.utilization,
            calibration,
        });
    }
    let kinds = StepKind::ALL
        .iter()
        .copied()
        .map(|kind| {
            let e = policy.estimate(&snap.runs, kind, None);
            KindStats {
                kind,
                count: e.count,
                median_usd: e.median,
                high_usd: e.high,
                estimate_usd: e.usd,
            }
        })
        .collect();
    let (_, recent, advice) = policy.misses(&snap.runs, now);
    // All of them, not only the snapshot's month.
    let total = store::runs::count_all(
        &mut *st.store.conn().await?,
        &[RunOutcome::UsageLimit, RunOutcome::MaxBudget],
    )
    .await?;
    let total = u32::try_from(total).unwrap_or(u32::MAX);
    let last = store::rate_limits::last(&mut *st.store.conn().await?).await?;
    Ok(Json(Budget {
        pools,
        running_estimate_usd: snap.running_usd(),
        running,
        kinds,
        misses: Misses {
            total,
            recent,
            advice,
        },
        park_until: snap.park_until.filter(|t| *t > now).map(rfc3339),
        last_rate_limit: last.map(|l| RateLimit {
            status: l.status,
            resets_at: l.resets_at.map(|s| rfc3339(s * 1000)),
            rate_limit_type: l.limit_type,
            utilization: l.utilization,
            observed_at: rfc3339(l.observed_at),
        }),
    }))
}
