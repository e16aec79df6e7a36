use serde_json::json;

use super::*;

/// A log as the CLI writes it: init, text and thinking, three tool calls (one failing), their
/// results, the result.
fn log() -> String {
    [
        json!({"type": "system", "subtype": "init", "session_id": "s1"}),
        json!({"type": "assistant", "message": {"content": [
            {"type": "thinking", "thinking": "look first"},
            {"type": "text", "text": "I will **look**."},
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}},
        ]}}),
        json!({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "a\nb", "is_error": false},
        ]}}),
        json!({"type": "rate_limit_event", "rate_limit_info": {"status": "allowed"}}),
        json!({"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": "t2", "name": "Read", "input": {"file_path": "/nope"}},
        ]}}),
        json!({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "t2",
             "content": [{"type": "text", "text": "File does not exist."}], "is_error": true},
        ]}}),
        json!({"type": "result", "subtype": "success", "is_error": false, "result": "done"}),
    ]
    .iter()
    .map(|v| format!("{v}\n"))
    .collect()
}

fn reader() -> Reader {
    Reader::new(Secrets::default(), OUTPUT_LIMIT)
}

#[test]
fn a_log_reads_in_order_with_kinds_tools_and_errors() {
    let text = log();
    let p = reader().read(&text, Some("2026-01-01T00:00:00Z"));
    assert_eq!(p.whole, text.len());
    let kinds: Vec<_> = p.events.iter().map(|e| e.kind).collect();
    use TranscriptKind::*;
    assert_eq!(
        kinds,
        [
            Thinking, Text, ToolUse, ToolResult, ToolUse, ToolResult, Result
        ]
    );
    assert_eq!(
        p.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
        (1..=7).collect::<Vec<_>>()
    );
    assert_eq!(p.events[1].text.as_deref(), Some("I will **look**."));
    assert_eq!(p.events[2].input, Some(json!({"command": "ls"})));
    // A result names the tool of the call it answers, and its parts are joined.
    assert_eq!(p.events[3].tool.as_deref(), Some("Bash"));
    assert_eq!(p.events[3].output.as_deref(), Some("a\nb"));
    assert!(!p.events[3].is_error);
    assert_eq!(p.events[5].tool.as_deref(), Some("Read"));
    assert_eq!(p.events[5].output.as_deref(), Some("File does not exist."));
    assert!(p.events[5].is_error);
    assert_eq!(p.events[6].text.as_deref(), Some("done"));
    assert_eq!(p.events[0].at.as_deref(), Some("2026-01-01T00:00:00Z"));
}

/// Read in pieces, as a running run's log grows (and as a log cut by a kill ends): a line
/// still being written is left for later, and the numbering and tool names carry over.
#[test]
fn a_growing_or_cut_log_reads_only_whole_lines() {
    let text = log();
    let whole = reader().read(&text, None).events;
    for split in 0..text.len() {
        if !text.is_char_boundary(split) {
            continue;
        }
        let mut r = reader();
        let first = r.read(&text[..split], None);
        assert!(first.whole <= split);
        assert!(first.whole == 0 || text.as_bytes()[first.whole - 1] == b'\n');
        let rest = r.read(&text[first.whole..], None);
        let mut all = first.events;
        all.extend(rest.events);
        assert_eq!(all, whole, "split at {split}");
    }
    // Cut mid-line for good, as kill -9 leaves it: what is whole reads, the rest is ignored.
    let cut_at = text.len() - 10;
    let p = reader().read(&text[..cut_at], None);
    assert_eq!(p.events.len(), whole.len() - 1);
    assert_eq!(p.events, whole[..whole.len() - 1]);
}

#[test]
fn an_error_result_is_an_error() {
    let text = format!(
        "{}\n",
        json!({"type": "result", "subtype": "success", "is_error": true,
               "result": "API Error: 500", "api_error_status": 500})
    );
    let p = reader().read(&text, None);
    assert_eq!(p.events[0].kind, TranscriptKind::Error);
    assert!(p.events[0].is_error);
    assert_eq!(p.events[0].text.as_deref(), Some("API Error: 500"));
}

#[test]
fn long_outputs_are_cut_with_the_full_size() {
    let long = "я".repeat(100); // 200 bytes, two per character
    let text = format!(
        "{}\n",
        json!({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "x", "content": long}]}})
    );
    let p = Reader::new(Secrets::default(), 51).read(&text, None);
    let e = &p.events[0];
    assert_eq!(e.output_bytes, Some(200));
    let out = e.output.as_deref().unwrap();
    assert!(out.starts_with(&"я".repeat(25)), "{out}");
    assert!(!out.starts_with(&"я".repeat(26)), "{out}");
    assert!(out.ends_with("[cut: 200 bytes in all]"), "{out}");
    // A short one is whole and says no size.
    let p = reader().read(&text, None);
    assert_eq!(p.events[0].output.as_deref(), Some(&*long));
    assert_eq!(p.events[0].output_bytes, None);
}

#[test]
fn secrets_are_hidden_in_text_input_and_output() {
    let token = "sk-ant-0123456789abcdef";
    let text = [
        json!({"type": "assistant", "message": {"content": [
            {"type": "text", "text": format!("the token is {token}")},
            {"type": "thinking", "thinking": token},
            {"type": "tool_use", "id": "t", "name": "Write",
             "input": {"file_path": "/tmp/x", "content": format!("T={token}"), token: 1}},
        ]}}),
        json!({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "t", "content": format!("{token}{token}")}]}}),
        json!({"type": "result", "is_error": false, "result": token}),
    ]
    .iter()
    .map(|v| format!("{v}\n"))
    .collect::<String>();
    // As read from a token file: with its newline; a too-short value is not a secret.
    let secrets = Secrets::new([format!("{token}\n"), "ab".into(), String::new()]);
    let p = Reader::new(secrets, OUTPUT_LIMIT).read(&text, None);
    let served = serde_json::to_string(&p.events).unwrap();
    assert!(!served.contains(token), "{served}");
    assert!(!served.contains("0123456789abcdef"), "{served}");
    assert_eq!(
        p.events[0].text.as_deref(),
        Some("the token is [secret hidden]")
    );
    assert_eq!(
        p.events[2].input,
        Some(json!({"file_path": "/tmp/x", "content": "T=[secret hidden]", "[secret hidden]": 1}))
    );
    assert_eq!(
        p.events[3].output.as_deref(),
        Some("[secret hidden][secret hidden]")
    );
    // Nothing else is touched.
    assert!(served.contains("/tmp/x"));
}

/// A secret across the cut is hidden before the cut, so no piece of it is left.
#[test]
fn a_secret_across_the_cut_leaves_no_piece() {
    let token = "ABCDEFGHIJKLMNOP";
    let out = format!("{}{token}", "x".repeat(10));
    let text = format!(
        "{}\n",
        json!({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "x", "content": out}]}})
    );
    let p = Reader::new(Secrets::new([token]), 14).read(&text, None);
    let o = p.events[0].output.as_deref().unwrap();
    assert!(!o.contains("ABCD"), "{o}");
}
