//! `deepwork --check`: config valid, node found, bridge found, the bridge's browser reachable.

use serde_json::json;

use crate::support::*;

#[test]
fn check_passes_against_devtools_endpoints() {
    let server = MockServer::start(json!({ "steps": [{ "answer": "never asked" }] }));
    let out = deepwork()
        .config(json!({ "bridge": fake_bridge_path(), "debug_port": server.port }))
        .arg("--check")
        .run();
    out.expect_code(0);
    let access = server.access();
    assert!(
        access.contains(&("GET".into(), "/json/version".into())),
        "{access:?}"
    );
    assert!(
        access.contains(&("GET".into(), "/json/list".into())),
        "{access:?}"
    );
    assert!(
        server.requests().is_empty(),
        "--check must not ask the model anything"
    );
}

#[test]
fn check_bridge_flag_overrides_config() {
    let server = MockServer::start(json!({ "steps": [{ "answer": "x" }] }));
    let out = deepwork()
        .config(
            json!({ "bridge": "/nonexistent/deepwork-test/ask.mjs", "debug_port": server.port }),
        )
        .arg("--check")
        .arg("--bridge")
        .arg(fake_bridge_path())
        .run();
    out.expect_code(0);
}

#[test]
fn check_needs_a_chat_tab() {
    let server = MockServer::start(json!({
        "steps": [{ "answer": "x" }],
        "tabs": [
            { "type": "page", "url": "https://example.org/", "title": "Other" },
            { "type": "service_worker", "url": "https://chat.deepseek.com/sw.js", "title": "" }
        ]
    }));
    let out = deepwork()
        .config(json!({ "bridge": fake_bridge_path(), "debug_port": server.port }))
        .arg("--check")
        .run();
    assert!(
        matches!(out.code, Some(c) if c != 0),
        "no chat tab must fail --check\n{}",
        out.dump()
    );

    // The same tabs pass when chat_url names the other site.
    let out = deepwork()
        .config(json!({ "bridge": fake_bridge_path(), "debug_port": server.port, "chat_url": "example.org" }))
        .arg("--check")
        .run();
    out.expect_code(0);
}

#[test]
fn check_fails_when_the_port_is_closed() {
    let out = deepwork()
        .config(json!({ "bridge": fake_bridge_path(), "debug_port": closed_port() }))
        .arg("--check")
        .run();
    out.expect_code(3);
}

#[test]
fn check_missing_bridge_file_is_a_config_error() {
    let server = MockServer::start(json!({ "steps": [{ "answer": "x" }] }));
    let missing = "/nonexistent/deepwork-test/ask-missing.mjs";
    let out = deepwork()
        .config(json!({ "bridge": missing, "debug_port": server.port }))
        .arg("--check")
        .run();
    out.expect_code(2);
    // The check report may go to stdout or stderr; the path must be named in it.
    assert_contains(&format!("{}{}", out.stdout, out.stderr), "ask-missing.mjs");
}

#[test]
fn check_missing_node_fails() {
    let server = MockServer::start(json!({ "steps": [{ "answer": "x" }] }));
    let out = deepwork()
        .config(json!({
            "bridge": fake_bridge_path(),
            "debug_port": server.port,
            "node": "/nonexistent/deepwork-test/node-missing"
        }))
        .arg("--check")
        .run();
    assert!(
        matches!(out.code, Some(c) if c != 0),
        "missing node must fail --check\n{}",
        out.dump()
    );
    assert_contains(&format!("{}{}", out.stdout, out.stderr), "node-missing");
}

#[test]
fn check_openai_transport() {
    let server = MockServer::start(json!({ "steps": [{ "answer": "x" }] }));
    let out = deepwork()
        .config(json!({
            "transport": "openai",
            "base_url": server.base_url(),
            "model": "test-model",
            "api_key_env": "DW_TEST_API_KEY"
        }))
        .env("DW_TEST_API_KEY", "k")
        .arg("--check")
        .run();
    out.expect_code(0);
    assert!(
        !server.access().is_empty(),
        "--check did not contact the server"
    );

    let url = format!("http://127.0.0.1:{}/v1", closed_port());
    let out = deepwork()
        .config(json!({ "transport": "openai", "base_url": url, "model": "test-model" }))
        .arg("--check")
        .run();
    out.expect_code(3);
}
