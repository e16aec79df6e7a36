//! What the CLI's stream-json says that the daemon reads: the `rate_limit_event`s and the
//! `result` (cost, tokens, error, denials), the last of several when a background subagent
//! made more than one.

use std::collections::BTreeMap;

use serde::Deserialize;

/// `rate_limit_event.rate_limit_info`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct RateLimitInfo {
    pub status: String,
    #[serde(rename = "resetsAt", default)]
    pub resets_at: Option<i64>,
    #[serde(rename = "rateLimitType", default)]
    pub rate_limit_type: Option<String>,
    #[serde(rename = "unifiedWindows", default)]
    pub unified_windows: Option<serde_json::Value>,
    #[serde(skip)]
    pub raw: String,
}

impl RateLimitInfo {
    /// The server's own utilisation of the limiting window, when given.
    pub fn utilization(&self) -> Option<f64> {
        let w = self.unified_windows.as_ref()?;
        let key = self.rate_limit_type.as_deref().unwrap_or("five_hour");
        w.get(key)?.get("utilization")?.as_f64()
    }
}

/// Token usage of the result.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
pub struct Usage {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_read_input_tokens: u64,
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
}

/// Per-model usage (`modelUsage`, `model_usage_since_last_result`).
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
pub struct ModelUsage {
    #[serde(rename = "inputTokens", default)]
    pub input_tokens: u64,
    #[serde(rename = "outputTokens", default)]
    pub output_tokens: u64,
    #[serde(rename = "cacheReadInputTokens", default)]
    pub cache_read_input_tokens: u64,
    #[serde(rename = "cacheCreationInputTokens", default)]
    pub cache_creation_input_tokens: u64,
    #[serde(rename = "costUSD", default)]
    pub cost_usd: f64,
}

/// The `{"type":"result"}` object.
#[derive(Debug, Clone, Deserialize, PartialEq, Default)]
pub struct ResultEvent {
    #[serde(default)]
    pub is_error: bool,
    #[serde(default)]
    pub subtype: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub total_cost_usd: f64,
    #[serde(default)]
    pub usage: Usage,
    #[serde(default)]
    pub model_usage_since_last_result: Option<BTreeMap<String, ModelUsage>>,
    #[serde(rename = "modelUsage", default)]
    pub model_usage: Option<BTreeMap<String, ModelUsage>>,
    #[serde(default)]
    pub result: Option<String>,
    #[serde(default)]
    pub api_error_status: Option<i64>,
    #[serde(default)]
    pub api_error: Option<String>,
    #[serde(default)]
    pub terminal_reason: Option<String>,
    #[serde(default)]
    pub num_turns: Option<i64>,
    #[serde(default)]
    pub duration_ms: Option<i64>,
    #[serde(default)]
    pub permission_denials: Option<serde_json::Value>,
    #[serde(default)]
    pub errors: Option<Vec<String>>,
}

/// A run with a background subagent emits more than one result: the last one stands (its
/// `total_cost_usd` is cumulative), but its `permission_denials` and
/// `model_usage_since_last_result` cover only its own part of the run, so the earlier ones'
/// are kept with it (denials each once, by `tool_use_id`; usage summed per model).
pub(super) fn later_result(earlier: Option<ResultEvent>, mut last: ResultEvent) -> ResultEvent {
    let Some(earlier) = earlier else {
        return last;
    };
    if let Some(before) = earlier.model_usage_since_last_result {
        let now = last
            .model_usage_since_last_result
            .get_or_insert_with(Default::default);
        for (model, u) in before {
            let sum = now.entry(model).or_default();
            sum.input_tokens += u.input_tokens;
            sum.output_tokens += u.output_tokens;
            sum.cache_read_input_tokens += u.cache_read_input_tokens;
            sum.cache_creation_input_tokens += u.cache_creation_input_tokens;
            sum.cost_usd += u.cost_usd;
        }
    }
    let mut all: Vec<serde_json::Value> = earlier
        .permission_denials
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default();
    for d in last
        .permission_denials
        .as_ref()
        .and_then(|v| v.as_array())
        .into_iter()
        .flatten()
    {
        let id = &d["tool_use_id"];
        if id.is_null() || !all.iter().any(|x| x["tool_use_id"] == *id) {
            all.push(d.clone());
        }
    }
    last.permission_denials = Some(serde_json::Value::Array(all));
    last
}

impl ResultEvent {
    /// This run's own tokens: `model_usage_since_last_result` summed over models, else
    /// `usage` (which covers only the last turn).
    pub fn run_tokens(&self) -> Usage {
        match &self.model_usage_since_last_result {
            Some(m) if !m.is_empty() => m.values().fold(Usage::default(), |mut u, m| {
                u.input_tokens += m.input_tokens;
                u.output_tokens += m.output_tokens;
                u.cache_read_input_tokens += m.cache_read_input_tokens;
                u.cache_creation_input_tokens += m.cache_creation_input_tokens;
                u
            }),
            _ => self.usage.clone(),
        }
    }

    /// This run's own cost as `model_usage_since_last_result` gives it (a cross-check).
    pub fn run_cost_reported(&self) -> Option<f64> {
        self.model_usage_since_last_result
            .as_ref()
            .map(|m| m.values().map(|u| u.cost_usd).sum())
    }
}

/// The CLI's recorded streams (`tests/fixtures/claude-cli`), read as a run reads them.
#[cfg(test)]
pub(super) mod fixtures {
    use super::{RateLimitInfo, ResultEvent};

    pub(in crate::claude) const FIX: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/claude-cli"
    );

    pub(in crate::claude) fn result_of(file: &str) -> ResultEvent {
        let text = std::fs::read_to_string(format!("{FIX}/{file}")).unwrap();
        let line = text
            .lines()
            .rfind(|l| l.contains("\"type\":\"result\""))
            .unwrap()
            .to_string();
        serde_json::from_str(&line).unwrap()
    }

    pub(in crate::claude) fn limits_of(file: &str) -> Vec<RateLimitInfo> {
        std::fs::read_to_string(format!("{FIX}/{file}"))
            .unwrap()
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| v["type"] == "rate_limit_event")
            .map(|v| serde_json::from_value(v["rate_limit_info"].clone()).unwrap())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::result_of;
    use super::*;

    #[test]
    fn denials_of_every_result_of_a_run_are_kept() {
        let first: ResultEvent = serde_json::from_value(serde_json::json!({
            "type": "result", "is_error": false, "total_cost_usd": 0.1, "session_id": "s",
            "model_usage_since_last_result": {"m": {"inputTokens": 10, "outputTokens": 1}},
            "permission_denials": [{"tool_name": "Bash", "tool_use_id": "a", "tool_input": {"command": "npm publish"}}]
        }))
        .unwrap();
        let second: ResultEvent = serde_json::from_value(serde_json::json!({
            "type": "result", "is_error": false, "total_cost_usd": 0.2, "session_id": "s",
            "permission_denials": [
                {"tool_name": "Bash", "tool_use_id": "a", "tool_input": {"command": "npm publish"}},
                {"tool_name": "Bash", "tool_use_id": "b", "tool_input": {"command": "cargo publish"}}]
        }))
        .unwrap();
        let only_second: ResultEvent = serde_json::from_value(serde_json::json!({
            "type": "result", "is_error": false, "total_cost_usd": 0.3, "session_id": "s",
            "model_usage_since_last_result": {"m": {"inputTokens": 5, "outputTokens": 2}},
            "permission_denials": []
        }))
        .unwrap();
        let r = later_result(Some(later_result(Some(first), second)), only_second);
        assert!(
            (r.total_cost_usd - 0.3).abs() < 1e-12,
            "the last result stands"
        );
        let ids: Vec<&str> = r
            .permission_denials
            .as_ref()
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["tool_use_id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["a", "b"]);
        // Tokens of every part of the run, not only the last.
        let t = r.run_tokens();
        assert_eq!((t.input_tokens, t.output_tokens), (15, 3));
    }

    #[test]
    fn step_tokens_come_from_usage_since_last_result() {
        let r = result_of("step2-resume.stream.ndjson");
        assert!((r.total_cost_usd - 0.0312).abs() < 1e-9);
        assert_eq!(r.run_cost_reported(), Some(0.0156));
        assert_eq!(r.run_tokens().input_tokens, 1000);
        assert!(!r.is_error);
    }
}
