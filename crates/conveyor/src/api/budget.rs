//! `/api/budget`: every pool's spent, threshold and reset, the running estimates, what each
//! step kind costs, the misses, the account's park and the server's last word — the figures
//! the policy decides on, from the same snapshot.

use std::collections::HashMap;

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use conveyor_api::{Budget, BudgetPool, KindStats, Misses, RateLimit, StepKind};

use super::{ApiError, AppState};
use crate::store::{now_ms, rfc3339};

/// status, resets_at, limit_type, utilization, observed_at.
type LastLimit = (String, Option<i64>, Option<String>, Option<f64>, i64);

/// Every step kind, in the order a line meets them.
const KINDS: [StepKind; 7] = [
    StepKind::Planner,
    StepKind::Executor,
    StepKind::Reviewer,
    StepKind::Tester,
    StepKind::Skeptic,
    StepKind::Fixer,
    StepKind::Remarks,
];

pub fn router() -> Router<AppState> {
    Router::new().route("/api/budget", get(budget))
}

#[utoipa::path(get, path = "/api/budget", responses((status = 200, body = Budget)))]
async fn budget(State(st): State<AppState>) -> Result<Json<Budget>, ApiError> {
    let now = now_ms();
    let admitted: HashMap<String, f64> = st.admitted.lock().expect("admitted map poisoned").clone();
    let snap = st.budget.snapshot(&st.store.pool, now, &admitted).await?;
    let policy = &st.budget.policy;
    let pools = policy
        .pools(&snap)
        .into_iter()
        .map(|p| BudgetPool {
            kind: p.kind,
            span_secs: u32::try_from(p.span_ms / 1000).unwrap_or(u32::MAX),
            spent_usd: p.spent_usd,
            threshold_usd: p.threshold_usd,
            resets_at: p.resets_at_ms().map(rfc3339),
            utilization: p.utilization,
        })
        .collect();
    let kinds = KINDS
        .into_iter()
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
    let total: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM runs WHERE outcome IN ('usage_limit', 'max_budget')",
    )
    .fetch_one(&st.store.pool)
    .await?;
    let total = u32::try_from(total).unwrap_or(u32::MAX);
    let last: Option<LastLimit> = sqlx::query_as(
        "SELECT status, resets_at, limit_type, utilization, observed_at FROM rate_limits ORDER BY id DESC LIMIT 1",
    )
    .fetch_optional(&st.store.pool)
    .await?;
    Ok(Json(Budget {
        pools,
        running_estimate_usd: snap.running_usd(),
        kinds,
        misses: Misses {
            total,
            recent,
            advice,
        },
        park_until: snap.park_until.filter(|t| *t > now).map(rfc3339),
        last_rate_limit: last.map(|(status, resets_at, t, u, at)| RateLimit {
            status,
            resets_at: resets_at.map(|s| rfc3339(s * 1000)),
            rate_limit_type: t,
            utilization: u,
            observed_at: rfc3339(at),
        }),
    }))
}
