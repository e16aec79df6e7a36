//! `deepwork --selftest`: offline, passes, sends nothing, writes nothing.

use serde_json::json;

use crate::support::*;

#[test]
fn selftest_passes_and_sends_nothing() {
    let server = MockServer::start(json!({ "steps": [{ "answer": "=== NEED: x ===" }] }));
    let b = Bridge::answers(&["=== NEED: x ==="]);
    let out = deepwork()
        .config(json!({
            "bridge": fake_bridge_path(),
            "debug_port": server.port,
        }))
        .bridge_env(&b)
        .arg("--selftest")
        .run();
    out.expect_code(0);
    assert!(b.calls().is_empty(), "--selftest ran the bridge");
    assert!(
        server.access().is_empty(),
        "--selftest made HTTP requests: {:?}",
        server.access()
    );
    assert!(
        !out.stdout.trim().is_empty() || !out.stderr.trim().is_empty(),
        "--selftest printed nothing"
    );
    let left: Vec<_> = std::fs::read_dir(out.home.path().join("cwd"))
        .unwrap()
        .collect();
    assert!(
        left.is_empty(),
        "--selftest wrote into the working folder: {left:?}"
    );
}

#[test]
fn selftest_with_openai_config_sends_nothing() {
    let server = MockServer::start(json!({ "steps": [{ "answer": "x" }] }));
    let out = deepwork()
        .config(
            json!({ "transport": "openai", "base_url": server.base_url(), "model": "test-model" }),
        )
        .arg("--selftest")
        .run();
    out.expect_code(0);
    assert!(
        server.access().is_empty(),
        "--selftest made HTTP requests: {:?}",
        server.access()
    );
}
