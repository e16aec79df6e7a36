//! The OpenAI-compatible HTTP transport against `tests/fixtures/mock-server.mjs`.

use serde_json::{Value, json};

use crate::support::*;

fn openai_config(server_url: &str) -> Value {
    json!({
        "transport": "openai",
        "base_url": server_url,
        "model": "test-model",
        "api_key_env": "DW_TEST_API_KEY",
    })
}

#[test]
fn openai_history_grows_and_key_is_sent() {
    let p = Project::new();
    p.write("a.txt", "A-CONTENT-OPENAI\n");
    let first = "Let me read it.\n=== NEED: a.txt ===";
    let last = "It says A.";
    let server = MockServer::start(json!({ "steps": [{ "answer": first }, { "answer": last }] }));
    let bridge = Bridge::answers(&["the bridge must not be used"]);
    let out = deepwork()
        .config(openai_config(&server.base_url()))
        .env("DW_TEST_API_KEY", "sk-test-123")
        .bridge_env(&bridge)
        .dir(&p)
        .args(["--json", "what is in a.txt?"])
        .run();
    out.expect_code(0);
    let v = out.json();
    assert_eq!(v["stop_reason"], "no_requests", "{v:#}");
    assert_eq!(v["answer"].as_str().unwrap().trim(), last);
    assert!(
        bridge.calls().is_empty(),
        "bridge called with transport openai"
    );

    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "{reqs:#?}");
    for r in &reqs {
        assert_eq!(r["model"], "test-model");
        assert_eq!(r["authorization"], "Bearer sk-test-123");
        assert_ne!(r["stream"], true, "stream must be off");
    }
    let m1 = reqs[0]["messages"].as_array().unwrap();
    let m2 = reqs[1]["messages"].as_array().unwrap();
    let last1 = m1.last().unwrap();
    assert_eq!(last1["role"], "user");
    assert!(
        last1["content"]
            .as_str()
            .unwrap()
            .trim_end()
            .ends_with("what is in a.txt?")
    );
    assert_eq!(
        m2.len(),
        m1.len() + 2,
        "history must grow by the answer and the next message"
    );
    assert_eq!(
        &m2[..m1.len()],
        &m1[..],
        "earlier messages are resent unchanged"
    );
    assert_eq!(m2[m1.len()]["role"], "assistant");
    assert_eq!(m2[m1.len()]["content"], first);
    assert_eq!(m2[m1.len() + 1]["role"], "user");
    assert_contains(
        m2[m1.len() + 1]["content"].as_str().unwrap(),
        "A-CONTENT-OPENAI",
    );
}

#[test]
fn openai_http_500_is_a_transport_error() {
    let p = Project::new();
    let server =
        MockServer::start(json!({ "steps": [{ "status": 500, "body": "MOCK-UPSTREAM-BROKE" }] }));
    let out = deepwork()
        .config(openai_config(&server.base_url()))
        .env("DW_TEST_API_KEY", "k")
        .dir(&p)
        .arg("q")
        .run();
    out.expect_code(3);
    assert_contains(&out.stderr, "500");
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn openai_unreachable_is_a_transport_error() {
    let p = Project::new();
    let url = format!("http://127.0.0.1:{}/v1", closed_port());
    let out = deepwork()
        .config(openai_config(&url))
        .env("DW_TEST_API_KEY", "k")
        .dir(&p)
        .arg("q")
        .run();
    out.expect_code(3);
}
