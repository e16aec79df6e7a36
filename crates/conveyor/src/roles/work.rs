//! Whether a checking role did real work before its verdict: from its run's stream-json, the
//! tool calls it (or a subagent of it) made — reading files or the diff, searching, running
//! commands. Writing the verdict itself is not work: a verdict from a run that used no other
//! tool is a failed run, never a pass.

use std::path::Path;

/// The tool calls of one run that count as work, as `tool: input` lines for the log.
pub fn work_done(log: &str, verdict: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for line in log.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if v["type"] != "assistant" {
            continue;
        }
        let Some(blocks) = v["message"]["content"].as_array() else {
            continue;
        };
        for b in blocks.iter().filter(|b| b["type"] == "tool_use") {
            let name = b["name"].as_str().unwrap_or_default();
            let input = &b["input"];
            let path = input["file_path"].as_str().map(Path::new);
            if matches!(name, "Write" | "Edit" | "MultiEdit") && path == Some(verdict) {
                continue;
            }
            out.push(format!(
                "{name}: {}",
                crate::exec::tail(&input.to_string(), 200)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(tool: &str, input: serde_json::Value) -> String {
        serde_json::json!({"type": "assistant", "message": {"content": [
            {"type": "tool_use", "name": tool, "input": input}]}})
        .to_string()
    }

    #[test]
    fn only_the_verdict_write_is_not_work() {
        let v = Path::new("/data/lines/l/verdict-3.json");
        let only_verdict = [
            r#"{"type":"system","subtype":"init"}"#.to_string(),
            event(
                "Write",
                serde_json::json!({"file_path": v, "content": "{}"}),
            ),
            "not json (a log cut by a kill)".to_string(),
        ]
        .join("\n");
        assert!(work_done(&only_verdict, v).is_empty());
        let with_diff = format!(
            "{only_verdict}\n{}",
            event("Bash", serde_json::json!({"command": "git diff main"}))
        );
        assert_eq!(work_done(&with_diff, v).len(), 1);
        let other_write = event("Write", serde_json::json!({"file_path": "/tmp/x"}));
        assert_eq!(work_done(&other_write, v).len(), 1);
    }
}
