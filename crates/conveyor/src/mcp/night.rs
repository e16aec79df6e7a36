//! The tools that look back and ahead: last night's results and the budget tonight may spend.

use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};

use super::evening::{Evening, fail, ok};
use super::text::{names, night_report};

#[tool_router(router = night_router, vis = "pub(super)")]
impl Evening {
    #[tool(
        description = "The daemon's budget: each pool (the rolling window, weekly, monthly) with \
what is spent and its threshold, the estimates of running steps, what a step of each kind costs \
from history, the steps cut by limits, and whether the account's usage limit parks every line \
until some time. Use it to judge how much work tonight can hold.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn get_budget(&self) -> CallToolResult {
        let d = match self.daemon() {
            Ok(d) => d,
            Err(e) => return e,
        };
        match d.client.budget().await {
            Ok(b) => ok(crate::budget::render(&b)),
            Err(e) => fail(d.explain(&e, "reading the budget")),
        }
    }

    #[tool(
        description = "What happened since last night began: what finished (awaiting Anton's \
acceptance, or accepted), what waits for Anton (needs_human, waiting_answer with how many \
questions are open on his morning page), what failed, was rolled back or is blocked and why, \
what still runs or is queued, what the night cost, and how much the judge kept from Anton. \
Start the evening with it.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn last_night(&self) -> CallToolResult {
        let d = match self.daemon() {
            Ok(d) => d,
            Err(e) => return e,
        };
        let review = match d.client.review().await {
            Ok(r) => r,
            Err(e) => return fail(d.explain(&e, "reading the morning page")),
        };
        let lines = match d.client.lines(None, None).await {
            Ok(l) => l,
            Err(e) => return fail(d.explain(&e, "listing the lines")),
        };
        let projects = match d.client.projects().await {
            Ok(p) => p,
            Err(e) => return fail(d.explain(&e, "listing the projects")),
        };
        ok(night_report(&review, &lines, &names(&projects)))
    }
}
