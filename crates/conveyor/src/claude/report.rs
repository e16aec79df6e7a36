//! Everything a run left behind, and what the daemon makes of it: finished, a usage limit, its
//! budget cap, a session in use or gone, a dead end, a failure to retry, or a stop.

use super::events::{RateLimitInfo, ResultEvent};
use crate::exec;

/// Everything a run left behind.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub pid: Option<u32>,
    pub exit_code: Option<i32>,
    /// The session existed at some point of this run (`system/init` seen).
    pub init_seen: bool,
    pub result: Option<ResultEvent>,
    pub rate_limits: Vec<RateLimitInfo>,
    pub stderr: String,
    pub timed_out: bool,
    pub cancelled: bool,
    /// The binary could not be started.
    pub spawn_error: Option<String>,
    pub duration_ms: i64,
}

/// What the daemon makes of a run.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// `is_error:false`: the checks decide the rest.
    Finished,
    /// A usage limit: park until `resets_at` (unix seconds) or, without one, the configured
    /// wait; roll back; resume the same session later.
    UsageLimit {
        resets_at: Option<i64>,
        message: String,
    },
    /// The run reached its `--max-budget-usd` cap (`error_max_budget_usd`): a miss of the
    /// estimate; roll back and try again with the raised estimate.
    BudgetCap { message: String },
    /// `--session-id` of a session that already exists: retry with `--resume`.
    SessionInUse,
    /// `--resume` of a session the CLI does not know ("No conversation found").
    NoConversation { reason: String },
    /// The line cannot go on without Anton (not logged in, unknown session, no binary).
    Fatal { reason: String },
    /// The run failed; the step may be attempted again.
    Failed { reason: String },
    /// Stopped by the daemon's shutdown.
    Interrupted,
}

impl Report {
    /// Classifies the run.
    pub fn verdict(&self) -> Verdict {
        if let Some(e) = &self.spawn_error {
            return Verdict::Fatal {
                reason: format!("the claude binary cannot be started: {e}"),
            };
        }
        if self.cancelled {
            return Verdict::Interrupted;
        }
        let stderr = self.stderr.trim();
        if let Some(r) = &self.result {
            let text = r.result.clone().unwrap_or_default();
            if !r.is_error {
                return Verdict::Finished;
            }
            let rejected = self
                .rate_limits
                .iter()
                .rev()
                .find(|l| l.status == "rejected");
            if r.api_error.as_deref() == Some("usage_limit_reached")
                || r.api_error_status == Some(429)
                || rejected.is_some()
            {
                return Verdict::UsageLimit {
                    resets_at: rejected.and_then(|l| l.resets_at),
                    message: text,
                };
            }
            if r.subtype.as_deref() == Some("error_max_budget_usd")
                || r.terminal_reason.as_deref() == Some("budget_exhausted")
            {
                let detail = r.errors.clone().unwrap_or_default().join("; ");
                return Verdict::BudgetCap {
                    message: if detail.is_empty() { text } else { detail },
                };
            }
            if text.contains("Not logged in") {
                return Verdict::Fatal {
                    reason: format!("claude is not logged in: {text}"),
                };
            }
            if stderr.contains("No conversation found") {
                return no_conversation(stderr);
            }
            let detail = if text.is_empty() {
                r.errors.clone().unwrap_or_default().join("; ")
            } else {
                text
            };
            return Verdict::Failed {
                reason: format!(
                    "claude reported an error ({}): {}",
                    r.terminal_reason.as_deref().unwrap_or("error"),
                    exec::tail(&detail, 1000)
                ),
            };
        }
        if stderr.contains("is already in use") {
            return Verdict::SessionInUse;
        }
        if stderr.contains("No conversation found") {
            return no_conversation(stderr);
        }
        if self.timed_out {
            return Verdict::Failed {
                reason: "the run timed out".into(),
            };
        }
        Verdict::Failed {
            reason: format!(
                "claude exited {} without a result: {}",
                self.exit_code
                    .map_or("by a signal".into(), |c| c.to_string()),
                exec::tail(stderr, 1000)
            ),
        }
    }
}

fn no_conversation(stderr: &str) -> Verdict {
    Verdict::NoConversation {
        reason: format!(
            "the line's session is gone, a new one would lose its context: {}",
            exec::tail(stderr, 300)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::super::events::fixtures::{FIX, limits_of, result_of};
    use super::*;

    #[test]
    fn a_usage_limit_mid_step_parks_until_the_events_reset() {
        let r = Report {
            result: Some(result_of("usage-limit-midstep.stream.ndjson")),
            rate_limits: limits_of("usage-limit-midstep.stream.ndjson"),
            init_seen: true,
            ..Report::default()
        };
        assert_eq!(
            r.verdict(),
            Verdict::UsageLimit {
                resets_at: Some(1795985871),
                message: "You've hit your 5-hour limit · resets 8:57pm (UTC)".into()
            }
        );
        // The work before the limit is still paid for.
        assert!((r.result.unwrap().total_cost_usd - 0.0078).abs() < 1e-9);
    }

    #[test]
    fn an_api_key_429_is_a_limit_without_reset() {
        let r = Report {
            result: Some(result_of("429-apikey.json")),
            ..Report::default()
        };
        assert!(matches!(
            r.verdict(),
            Verdict::UsageLimit {
                resets_at: None,
                ..
            }
        ));
    }

    #[test]
    fn the_max_budget_cap_is_a_miss_not_a_failure() {
        let report = Report {
            result: Some(result_of("error-max-budget.json")),
            ..Report::default()
        };
        assert_eq!(
            report.verdict(),
            Verdict::BudgetCap {
                message: "Reached maximum budget ($0.001)".into()
            }
        );
    }

    #[test]
    fn not_logged_in_stops_the_line() {
        let text = std::fs::read_to_string(format!("{FIX}/not-logged-in.txt")).unwrap();
        let line = text.lines().find(|l| l.starts_with("{\"duration")).unwrap();
        let r = Report {
            result: Some(serde_json::from_str(line).unwrap()),
            ..Report::default()
        };
        assert!(
            matches!(r.verdict(), Verdict::Fatal { reason } if reason.contains("not logged in"))
        );
    }

    #[test]
    fn session_errors_from_stderr() {
        let r = Report {
            stderr: "Error: Session ID x is already in use.\n".into(),
            exit_code: Some(1),
            ..Report::default()
        };
        assert_eq!(r.verdict(), Verdict::SessionInUse);
        let r = Report {
            stderr: "No conversation found with session ID: x\n".into(),
            result: Some(ResultEvent {
                is_error: true,
                ..ResultEvent::default()
            }),
            ..Report::default()
        };
        assert!(matches!(r.verdict(), Verdict::NoConversation { .. }));
    }
}
