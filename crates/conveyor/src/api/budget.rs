//! `/api/budget`: the window, the threshold, the estimates, the week, the account's park.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use conveyor_api::{Budget, BudgetPool, KindStats, Misses, PoolKind, RateLimit, StepKind};

use super::{ApiError, AppState};
use crate::store::{now_ms, rfc3339};

/// status, resets_at, limit_type, utilization, observed_at.
type LastLimit = (String, Option<i64>, Option<String>, Option<f64>, i64);

pub fn router() -> Router<AppState> {
    Router::new().route("/api/budget", get(budget))
}

#[utoipa::path(get, path = "/api/budget", responses((status = 200, body = Budget)))]
async fn budget(State(st): State<AppState>) -> Result<Json<Budget>, ApiError> {
    let now = now_ms();
    let f = st.window.figures(&st.store.pool, now).await?;
    let mut estimates = Vec::new();
    for kind in [
        StepKind::Planner,
        StepKind::Executor,
        StepKind::Fixer,
        StepKind::Remarks,
    ] {
        let (usd, samples) = st.window.estimate(&st.store.pool, kind).await?;
        estimates.push(KindStats {
            kind,
            count: samples,
            median_usd: None,
            high_usd: None,
            estimate_usd: usd,
        });
    }
    let last: Option<LastLimit> = sqlx::query_as(
        "SELECT status, resets_at, limit_type, utilization, observed_at FROM rate_limits ORDER BY id DESC LIMIT 1",
    )
    .fetch_optional(&st.store.pool)
    .await?;
    let park = st.store.account_park_until().await?.filter(|t| *t > now);
    let mut pools = vec![BudgetPool {
        kind: PoolKind::Window,
        span_secs: st.cfg.budget.window_secs,
        spent_usd: f.window_spent,
        threshold_usd: st.cfg.budget.threshold_usd,
        resets_at: None,
        utilization: None,
    }];
    if let Some(weekly) = st.cfg.budget.weekly_threshold_usd {
        pools.push(BudgetPool {
            kind: PoolKind::Weekly,
            span_secs: 7 * 24 * 3600,
            spent_usd: f.weekly_spent,
            threshold_usd: weekly,
            resets_at: None,
            utilization: None,
        });
    }
    Ok(Json(Budget {
        pools,
        running_estimate_usd: f.running_estimate,
        kinds: estimates,
        misses: Misses {
            total: 0,
            recent: 0,
            advice: None,
        },
        park_until: park.map(rfc3339),
        last_rate_limit: last.map(|(status, resets_at, t, u, at)| RateLimit {
            status,
            resets_at: resets_at.map(|s| rfc3339(s * 1000)),
            rate_limit_type: t,
            utilization: u,
            observed_at: rfc3339(at),
        }),
    }))
}
