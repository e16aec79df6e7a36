//! A line whose tester runs the checks through the daemon's socket, with the real `claude`.

use super::*;

/// A checking role's turn writing its verdict where its prompt says.
fn verdict(v: &Value) -> Value {
    serde_json::json!({"tool": "Write", "input": {
        "file_path": "{{prompt:\\$CONVEYOR_VERDICT \\(([^)]+)\\)}}",
        "content": v.to_string()}})
}

/// The tester's run of the command its prompt lists, with the exit code after it.
fn run_telegram_check() -> Value {
    bash("{{prompt:- `([^`]*telegram-check)`}}; echo \"exit=$?\"")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_whose_bot_answers_wrong_goes_back_with_the_finding_and_the_fix_passes() {
    use conveyor_api::{LineState, RoleCall, StepKind};
    // Outside /tmp: the sandbox gives every run a fresh /tmp, so a secret there proves nothing.
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let session_dir = outside.path().join("tg-session");
    std::fs::create_dir_all(&session_dir).unwrap();
    std::fs::write(
        session_dir.join("conveyor_test.session"),
        "SESSION-SECRET-91",
    )
    .unwrap();
    std::fs::write(outside.path().join("visible.txt"), "VISIBLE-OK").unwrap();
    let id_file = secret(outside.path(), "api-id", "12345");
    // Readable by anyone on the machine: only the sandbox's hiding keeps it from the run.
    let hash_file = outside.path().join("api-hash");
    std::fs::write(&hash_file, "HASH-SECRET-17\n").unwrap();

    let tmp = tempfile::tempdir().unwrap();
    let (fake, port) = node_server(
        "mock-telegram.mjs",
        &[
            "--token",
            BOT_TOKEN,
            "--chat",
            &CHAT.to_string(),
            "--username",
            "shop_test_bot",
        ],
        "listening ",
    );
    let _fake = Kill(fake);
    let config = format!(
        "[telegram]\nfake_api = \"http://127.0.0.1:{port}\"\nfake_chat = {CHAT}\nsession_dir = {:?}\napi_id_file = {:?}\napi_hash_file = {:?}\n",
        session_dir.display().to_string(),
        id_file.display().to_string(),
        hash_file.display().to_string(),
    );
    let d = Daemon::builder()
        .files(&[
            ("a.txt", "a\n"),
            (
                ".conveyor.toml",
                "[telegram]\ntest_bot = \"@shop_test_bot\"\nprod_bot = \"@shop_bot\"\n",
            ),
            (".conveyor/telegram/pay.toml", PAY),
        ])
        .config(&config)
        .mock()
        .start()
        .await;
    let (c, mock) = (d.client(), d.mock());
    let l = d.line("pay", "the pay button answers Оплачено").await;
    // The bot under test answers a press with what the line's worktree says.
    let wt = d.worktree(&l.id);
    let token_file = secret(tmp.path(), "bot-token", BOT_TOKEN);
    let _bot = Kill(
        Command::new("python3")
            .arg(repo_root().join("tests/fixtures/telegram/sample_bot.py"))
            .arg("--api")
            .arg(format!("http://127.0.0.1:{port}"))
            .arg("--token-file")
            .arg(&token_file)
            .arg("--paid-text-file")
            .arg(wt.join("paid.txt"))
            .stdin(Stdio::null())
            .spawn()
            .expect("python3 runs the sample bot"),
    );
    mock.script(
        &l.session_id,
        serde_json::json!({
            "1": [write_plan(&serde_json::json!({"level": "light", "steps": [
                {"title": "pay", "task": "answer the pay button", "checks": [{"cmd": "test -f paid.txt"}]}
            ]})), text("planned")],
            "2": [write("paid.txt", "Ошибка оплаты\n"), text("written")],
            // The fixer, after the tester's rework.
            "4": [write("paid.txt", "Оплачено ✅\n"), text("fixed the answer")],
        }),
    )
    .await;
    let steal = format!(
        "cat {:?} 2>&1; cat {:?} 2>&1; ls -a {:?} 2>&1; cat {:?}; true",
        session_dir.join("conveyor_test.session"),
        hash_file,
        session_dir,
        outside.path().join("visible.txt")
    );
    mock.script_line(
        &l.id,
        "tester",
        serde_json::json!({
            "3": [bash(&steal), run_telegram_check(),
                  verdict(&serde_json::json!({"verdict": "rework", "findings": [
                      {"path": ".conveyor/telegram/pay.toml", "text": "{{after:(step [0-9]+: expected [^»]+»)}}"}]})),
                  text("sent back")],
            "5": [run_telegram_check(), verdict(&serde_json::json!({"verdict": "pass", "findings": []})), text("good")],
        }),
    )
    .await;

    let done = wait_state(c, &l.id, LineState::AwaitingAcceptance, 300).await;
    let steps = &done.line.steps;
    assert_eq!(
        steps.iter().map(|s| s.kind).collect::<Vec<_>>(),
        [
            StepKind::Planner,
            StepKind::Executor,
            StepKind::Tester,
            StepKind::Fixer,
            StepKind::Tester
        ]
    );
    let first = steps[2].verdict.as_ref().unwrap();
    assert_eq!(first.verdict, RoleCall::Rework);
    assert_eq!(
        first.findings[0].text,
        "step 4: expected /Оплачено/, got «Ошибка оплаты»"
    );
    assert_eq!(steps[4].verdict.as_ref().unwrap().verdict, RoleCall::Pass);

    // What the tester saw, as the mock got it back: the command in its prompt, the finding,
    // then the pass; and nothing of the test account's session or credentials.
    let log = mock.log().await;
    let tester = |step: i64| -> String {
        log.iter()
            .filter(|e| {
                e["step_kind"] == "tester" && e["line"] == l.id.as_str() && e["step"] == step
            })
            .filter_map(|e| e["conversation"].as_str())
            .max_by_key(|c| c.len())
            .unwrap_or_default()
            .to_string()
    };
    let (round1, round2) = (tester(3), tester(5));
    assert!(round1.contains("conveyord telegram-check`"), "{round1}");
    assert!(
        round1.contains("pay: FAILED") && round1.contains("exit=1"),
        "{round1}"
    );
    assert!(
        round2.contains("pay: passed") && round2.contains("exit=0"),
        "{round2}"
    );
    assert!(
        round1.contains("VISIBLE-OK"),
        "the outside folder is visible: {round1}"
    );
    for secret in ["SESSION-SECRET-91", "HASH-SECRET-17"] {
        assert!(!round1.contains(secret), "{secret} leaked: {round1}");
    }
    // The fixer worked from the finding.
    let fixer = mock
        .requests(&l.session_id)
        .await
        .into_iter()
        .find(|e| e["step"] == 4)
        .unwrap();
    assert!(
        fixer["conversation"]
            .as_str()
            .unwrap()
            .contains("step 4: expected /Оплачено/, got «Ошибка оплаты»"),
        "{fixer:#?}"
    );
}
