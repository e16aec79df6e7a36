//! `conveyord budget`: `GET /api/budget` as a few lines of plain text.

use std::fmt::Write;

use conveyor_api::{Budget, PoolKind};

/// The budget as text: one line per pool, the running estimates, one line per step kind with
/// history or an estimate, the misses (with the advice when they are frequent), the park and
/// the server's last word.
pub fn render(b: &Budget) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "pools:");
    for p in &b.pools {
        let name = match p.kind {
            PoolKind::Window => "window",
            PoolKind::Weekly => "weekly",
            PoolKind::Monthly => "monthly",
        };
        let _ = write!(
            out,
            "  {name:<8} {:>10} of {:>9}  ({:>5.1}%)  span {}h",
            format!("${:.4}", p.spent_usd),
            format!("${:.2}", p.threshold_usd),
            if p.threshold_usd > 0.0 {
                100.0 * p.spent_usd / p.threshold_usd
            } else {
                0.0
            },
            p.span_secs / 3600,
        );
        if let Some(u) = p.utilization {
            let _ = write!(out, "  server {:.0}%", u * 100.0);
        }
        if let Some(r) = &p.resets_at {
            let _ = write!(out, "  room again at {r}");
        }
        out.push('\n');
        if let Some(c) = &p.calibration {
            let _ = writeln!(
                out,
                "           server's view: size ${:.2} ± ${:.2} from {} observations; proposed threshold ${:.2}",
                c.observed_size_usd, c.spread_usd, c.observations, c.proposed_usd
            );
        }
    }
    let _ = writeln!(out, "running estimates: ${:.4}", b.running_estimate_usd);
    for r in &b.running {
        let _ = writeln!(
            out,
            "  {} #{} {}: spent ${:.4} of claim ${:.4} (estimate ${:.4}{})",
            r.line_id.get(..8).unwrap_or(&r.line_id),
            r.step_n,
            r.kind.as_str(),
            r.live_usd,
            r.claim_usd,
            r.estimate_usd,
            if r.live_usd > r.estimate_usd {
                ", over it"
            } else {
                ""
            }
        );
    }
    let _ = writeln!(out, "step kinds (count, median, p90 → estimate):");
    for k in &b.kinds {
        let money = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("${v:.4}"));
        let _ = writeln!(
            out,
            "  {:<9} {:>4}  {:>10}  {:>10}  → ${:.4}",
            k.kind.as_str(),
            k.count,
            money(k.median_usd),
            money(k.high_usd),
            k.estimate_usd
        );
    }
    let _ = writeln!(
        out,
        "misses: {} in all, {} in the last 24 hours",
        b.misses.total, b.misses.recent
    );
    if let Some(a) = &b.misses.advice {
        let _ = writeln!(out, "  {a}");
    }
    if let Some(p) = &b.park_until {
        let _ = writeln!(out, "parked: no step starts before {p}");
    }
    if let Some(r) = &b.last_rate_limit {
        let _ = write!(out, "server: {} at {}", r.status, r.observed_at);
        if let Some(t) = &r.rate_limit_type {
            let _ = write!(out, " ({t}");
            if let Some(u) = r.utilization {
                let _ = write!(out, " {:.0}%", u * 100.0);
            }
            out.push(')');
        }
        if let Some(at) = &r.resets_at {
            let _ = write!(out, ", resets at {at}");
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use conveyor_api::{
        BudgetPool, Calibration, KindStats, Misses, RateLimit, RunningStep, StepKind,
    };

    #[test]
    fn every_figure_shows() {
        let b = Budget {
            pools: vec![BudgetPool {
                kind: PoolKind::Window,
                span_secs: 18000,
                spent_usd: 12.5,
                threshold_usd: 50.0,
                resets_at: Some("2027-01-15T13:00:00Z".into()),
                utilization: Some(0.3),
                calibration: Some(Calibration {
                    observed_size_usd: 61.5,
                    proposed_usd: 61.5,
                    spread_usd: 2.25,
                    observations: 7,
                }),
            }],
            running_estimate_usd: 2.25,
            running: vec![RunningStep {
                line_id: "3f2a9c1e-0000-4000-8000-000000000000".into(),
                step_n: 4,
                kind: StepKind::Executor,
                estimate_usd: 2.25,
                live_usd: 2.5,
                claim_usd: 3.75,
            }],
            kinds: vec![KindStats {
                kind: StepKind::Executor,
                count: 12,
                median_usd: Some(1.5),
                high_usd: Some(3.0),
                estimate_usd: 2.4,
            }],
            misses: Misses {
                total: 4,
                recent: 3,
                advice: Some("steps too large: cut them finer".into()),
            },
            park_until: Some("2027-01-15T14:00:00Z".into()),
            last_rate_limit: Some(RateLimit {
                status: "rejected".into(),
                resets_at: Some("2027-01-15T14:00:00Z".into()),
                rate_limit_type: Some("five_hour".into()),
                utilization: Some(1.0),
                observed_at: "2027-01-15T12:00:00Z".into(),
            }),
        };
        let text = render(&b);
        for want in [
            "window",
            "$12.5000",
            "$50.00",
            "25.0%",
            "server 30%",
            "room again at 2027-01-15T13:00:00Z",
            "running estimates: $2.2500",
            "3f2a9c1e #4 executor: spent $2.5000 of claim $3.7500 (estimate $2.2500, over it)",
            "server's view: size $61.50 ± $2.25 from 7 observations; proposed threshold $61.50",
            "executor",
            "$1.5000",
            "$3.0000",
            "→ $2.4000",
            "4 in all, 3 in the last 24 hours",
            "cut them finer",
            "no step starts before 2027-01-15T14:00:00Z",
            "server: rejected",
            "(five_hour 100%)",
        ] {
            assert!(text.contains(want), "{want:?} missing in:\n{text}");
        }
    }
}
