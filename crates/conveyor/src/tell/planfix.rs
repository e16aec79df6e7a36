//! PlanFix's REST API as the daemon uses it (a comment, and the list to find one by its mark),
//! and the report a done line posts. The worker that posts is `notify::planfix`.

use std::time::Duration;

use serde_json::{Value, json};

use super::telegram::CallError;
use super::text::{Words, escape};

/// The PlanFix REST API.
#[derive(Debug, Clone)]
pub struct Planfix {
    http: reqwest::Client,
    /// `{base_url}/rest`.
    rest: String,
    token: String,
}

impl Planfix {
    pub fn new(base_url: &str, token: &str) -> Planfix {
        Planfix {
            http: reqwest::Client::new(),
            rest: format!("{}/rest", base_url.trim_end_matches('/')),
            token: token.into(),
        }
    }

    async fn post(&self, what: &'static str, path: &str, body: Value) -> Result<Value, CallError> {
        let transient = |why: String| CallError::Transient { method: what, why };
        let res = self
            .http
            .post(format!("{}{path}", self.rest))
            .bearer_auth(&self.token)
            .json(&body)
            .timeout(Duration::from_secs(30))
            .send()
            .await
            .map_err(|e| transient(e.to_string()))?;
        let status = res.status();
        let text = res.text().await.map_err(|e| transient(e.to_string()))?;
        let v: Option<Value> = serde_json::from_str(&text).ok();
        let ok = v
            .as_ref()
            .is_some_and(|v| v["result"].as_str() == Some("success"));
        if status.is_success() && ok {
            return Ok(v.unwrap_or(Value::Null));
        }
        let why = v
            .as_ref()
            .and_then(|v| v["error"].as_str().map(str::to_string))
            .map_or_else(
                || format!("HTTP {}", status.as_u16()),
                |e| format!("HTTP {}: {e}", status.as_u16()),
            );
        if status.as_u16() == 429 {
            return Err(CallError::Later {
                method: what,
                after: Duration::from_secs(30),
            });
        }
        if status.is_server_error() || v.is_none() {
            return Err(transient(why));
        }
        Err(CallError::Refused { method: what, why })
    }

    /// Posts a comment on `task`; its id.
    ///
    /// # Errors
    /// [`CallError`].
    pub async fn comment(&self, task: &str, html: &str, mark: &str) -> Result<String, CallError> {
        let v = self
            .post(
                "comment",
                &format!("/task/{task}/comments/"),
                json!({ "description": html, "sourceObjectId": mark }),
            )
            .await?;
        Ok(v["id"].as_i64().map_or_else(String::new, |i| i.to_string()))
    }

    /// The id of a comment on `task` that carries `mark` (as its `sourceObjectId`, or in its
    /// text: PlanFix may rewrite the text's whitespace, not the mark), newest first.
    ///
    /// # Errors
    /// [`CallError`].
    pub async fn find(&self, task: &str, mark: &str) -> Result<Option<String>, CallError> {
        let mut offset = 0;
        loop {
            let v = self
                .post(
                    "comment list",
                    &format!("/task/{task}/comments/list"),
                    json!({"offset": offset, "pageSize": 100,
                        "fields": "id,description,sourceObjectId", "resultOrder": "Desc"}),
                )
                .await?;
            let page = v["comments"].as_array().cloned().unwrap_or_default();
            if let Some(c) = page.iter().find(|c| {
                c["sourceObjectId"].as_str() == Some(mark)
                    || c["description"].as_str().is_some_and(|d| d.contains(mark))
            }) {
                return Ok(Some(
                    c["id"].as_i64().map_or_else(String::new, |i| i.to_string()),
                ));
            }
            if page.len() < 100 || offset >= 10_000 {
                return Ok(None);
            }
            offset += 100;
        }
    }
}

/// The mark a report carries: how a post whose fate is unknown is found again.
pub(crate) fn mark(line_id: &str, round: i64) -> String {
    format!("[conveyor:{line_id}:{round}]")
}

/// What a report says.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Report {
    pub line_id: String,
    pub round: i64,
    pub project: String,
    pub title: String,
    pub task: String,
    /// `(kind, title)` of the steps that were done.
    pub steps: Vec<(String, String)>,
    /// `(path, change)`; `None` when the branch is gone (accepted before the report went).
    pub files: Option<Vec<(String, String)>>,
    /// The checks the gate ran green.
    pub checks: Vec<String>,
    pub cost_usd: f64,
    pub branch: String,
}

/// The report as PlanFix's comment HTML.
pub(crate) fn render(w: Words, r: &Report) -> String {
    let mut s = format!(
        "<p><b>{}</b>: {} · {}</p>",
        escape(w.report_head()),
        escape(&r.project),
        escape(&r.title)
    );
    let task: String = r.task.chars().take(1000).collect();
    s.push_str(&format!(
        "<p><b>{}</b><br>{}</p>",
        escape(w.report_done()),
        escape(&task).replace('\n', "<br>")
    ));
    if !r.steps.is_empty() {
        s.push_str("<ol>");
        for (kind, title) in &r.steps {
            s.push_str(&format!("<li>{}: {}</li>", escape(kind), escape(title)));
        }
        s.push_str("</ol>");
    }
    s.push_str(&format!("<p><b>{}</b><br>", escape(w.report_files())));
    match &r.files {
        Some(files) if !files.is_empty() => {
            for (path, change) in files.iter().take(100) {
                s.push_str(&format!("{} ({})<br>", escape(path), escape(change)));
            }
            if files.len() > 100 {
                s.push_str(&format!("… +{}<br>", files.len() - 100));
            }
        }
        Some(_) => s.push_str("—<br>"),
        None => s.push_str(&format!("({})<br>", escape(&r.branch))),
    }
    s.push_str("</p>");
    s.push_str(&format!("<p><b>{}</b><br>", escape(w.report_checks())));
    if r.checks.is_empty() {
        s.push('—');
    }
    for c in &r.checks {
        s.push_str(&format!("<code>{}</code><br>", escape(c)));
    }
    s.push_str("</p>");
    s.push_str(&format!(
        "<p><b>{}</b>: ${:.2} · <b>{}</b>: <code>{}</code></p>",
        escape(w.report_cost()),
        r.cost_usd,
        escape(w.report_branch()),
        escape(&r.branch)
    ));
    s.push_str(&format!("<p>{}</p>", mark(&r.line_id, r.round)));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Lang;

    #[test]
    fn a_report_says_what_was_done_and_carries_its_mark() {
        let r = Report {
            line_id: "L1".into(),
            round: 2,
            project: "shop".into(),
            title: "Fix <cart>".into(),
            task: "make the cart\nkeep items".into(),
            steps: vec![("executor".into(), "cart & totals".into())],
            files: Some(vec![("src/cart.rs".into(), "modified".into())]),
            checks: vec!["cargo test".into()],
            cost_usd: 1.234,
            branch: "line/L1".into(),
        };
        let html = render(Words(Lang::Ru), &r);
        for want in [
            "Fix &lt;cart&gt;",
            "make the cart<br>keep items",
            "executor: cart &amp; totals",
            "src/cart.rs (modified)",
            "<code>cargo test</code>",
            "$1.23",
            "line/L1",
            "[conveyor:L1:2]",
            "Что сделано",
        ] {
            assert!(html.contains(want), "{want} missing from {html}");
        }
        let gone = Report { files: None, ..r };
        assert!(render(Words(Lang::En), &gone).contains("Files</b><br>(line/L1)"));
    }
}
