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
    let fake = fake_telegram();
    let base = &fake.url;
    let config = format!(
        "[telegram]\nfake_api = \"{base}\"\nfake_chat = {CHAT}\nsession_dir = {:?}\napi_id_file = {:?}\napi_hash_file = {:?}\n",
        session_dir.display().to_string(),
        id_file.display().to_string(),
        hash_file.display().to_string(),
    );
    let d = Daemon::builder()
        .files(&PAY_PROJECT)
        .config(&config)
        .mock()
        .start()
        .await;
    let (c, mock) = (d.client(), d.mock());
    let l = d.line("pay", "the pay button answers Оплачено").await;
    // The bot under test answers a press with what the line's worktree says.
    let wt = d.worktree(&l.id);
    let paid = wt.join("paid.txt");
    let _bot = sample_bot(
        base,
        &secret(tmp.path(), "bot-token", BOT_TOKEN),
        ["--paid-text-file", paid.to_str().unwrap()],
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

/// The test account signed out at night, between two preflights: the tester's check cannot
/// run, and its verdict (here a rework it makes of the failure) is not the line's. No fixer
/// runs; the tester's step waits, and the preflight, told by the check, holds the project with
/// the login command. A new login clears it and the tester runs again. The client is the real
/// `user_client.py` with the stand-in `pyrogram` (tests/fixtures/telegram/fake_pyrogram).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_signed_out_at_night_holds_the_line_until_a_new_login() {
    use conveyor_api::{LineState, PreflightCode, PreflightLevel, ReasonCode, StepKind, StepState};
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let session_dir = dir.path().join("session");
    std::fs::create_dir_all(&session_dir).unwrap();
    let session = session_dir.join("conveyor_test.session");
    // As long as "signed-out", so that turning into it leaves the file's size as it was.
    std::fs::write(&session, "works-ok!!").unwrap();
    let id_file = secret(dir.path(), "api-id", "12345");
    let hash_file = secret(dir.path(), "api-hash", "0123456789abcdef");
    let token_file = secret(dir.path(), "bot-token", BOT_TOKEN);
    let python = fake_pyrogram_python(dir.path());
    let config = format!(
        "[telegram]\nsession_dir = {:?}\napi_id_file = {:?}\napi_hash_file = {:?}\ntest_bot_token_file = {:?}\npython = {:?}\n",
        session_dir.display().to_string(),
        id_file.display().to_string(),
        hash_file.display().to_string(),
        token_file.display().to_string(),
        python.display().to_string()
    );
    let d = Daemon::builder()
        .files(&PAY_PROJECT)
        .config(&config)
        .mock()
        .start()
        .await;
    let (c, mock) = (d.client(), d.mock());
    let blocking = |pre: &conveyor_api::Preflight| {
        pre.items
            .iter()
            .filter(|i| i.level == PreflightLevel::Blocking)
            .map(|i| i.message.clone())
            .collect::<Vec<_>>()
    };
    // The project first: the preflight asks Telegram for the projects with scenarios only.
    d.project().await;
    let pre = c.preflight().await.unwrap();
    assert!(blocking(&pre).is_empty(), "{pre:#?}");
    // Scripted right after it is queued, as every line test does (nothing slow in between).
    let l = d.line("pay", "the pay button answers Оплачено").await;
    mock.script(
        &l.session_id,
        serde_json::json!({
            "1": [write_plan(&serde_json::json!({"level": "light", "steps": [
                {"title": "pay", "task": "answer the pay button", "checks": [{"cmd": "test -f paid.txt"}]}
            ]})), text("planned")],
            "2": [write("paid.txt", "Оплачено ✅\n"), {"text": "written", "hold": true}],
        }),
    )
    .await;
    mock.script_line(
        &l.id,
        "tester",
        serde_json::json!({
            // A tester that takes the failure for the line's.
            "3.1": [run_telegram_check(),
                    verdict(&serde_json::json!({"verdict": "rework", "findings": [
                        {"path": ".conveyor/telegram/pay.toml", "text": "the bot did not answer"}]})),
                    text("sent back")],
            "3": [bash("cat paid.txt"), verdict(&serde_json::json!({"verdict": "pass", "findings": []})), text("good")],
        }),
    )
    .await;
    // While the executor works, Telegram ends the session: the file's size and time stay, so
    // the preflight's last answer still stands for it.
    wait_for(120, "the executor held", || async {
        mock.log()
            .await
            .iter()
            .any(|e| e["step"] == 2 && e["held"] == true)
            .then_some(())
    })
    .await;
    let modified = std::fs::metadata(&session).unwrap().modified().unwrap();
    std::fs::write(&session, "signed-out").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&session)
        .unwrap()
        .set_modified(modified)
        .unwrap();
    assert!(blocking(&c.preflight().await.unwrap()).is_empty());
    mock.release(&l.session_id).await;

    // The tester's check could not run: the line waits on the preflight, no fixer.
    let held = wait_for(180, "the line held by the preflight", || async {
        let d = c.line(&l.id).await.ok()?;
        (d.line.reason_code == Some(ReasonCode::Preflight)).then_some(d)
    })
    .await;
    let steps = &held.line.steps;
    assert!(
        !steps.iter().any(|s| s.kind == StepKind::Fixer),
        "no fixer: {steps:#?}"
    );
    let tester = steps.iter().find(|s| s.kind == StepKind::Tester).unwrap();
    assert_eq!(tester.state, StepState::Pending, "{steps:#?}");
    assert!(
        tester
            .error
            .as_deref()
            .is_some_and(|e| e.contains("the Telegram check could not run")
                && e.contains("AUTH_KEY_UNREGISTERED")),
        "{tester:#?}"
    );
    let pre = c.preflight().await.unwrap();
    let session_item = pre
        .items
        .iter()
        .find(|i| i.code == PreflightCode::Telegram && i.message.contains("session"))
        .unwrap();
    assert_eq!(session_item.level, PreflightLevel::Blocking, "{pre:#?}");
    assert!(
        session_item
            .fix
            .as_deref()
            .is_some_and(|f| f.contains("conveyord telegram-login")),
        "{session_item:#?}"
    );

    // A new login (another file): the preflight asks again, clears, and the tester runs again.
    std::fs::write(&session, "a renewed session").unwrap();
    assert!(blocking(&c.preflight().await.unwrap()).is_empty());
    let done = wait_state(c, &l.id, LineState::AwaitingAcceptance, 180).await;
    let kinds: Vec<_> = done.line.steps.iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds,
        [StepKind::Planner, StepKind::Executor, StepKind::Tester],
        "{:#?}",
        done.line.steps
    );
}
