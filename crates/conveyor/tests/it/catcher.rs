//! Telling Anton: the Catcher (a mock Telegram Bot API, `tests/fixtures/mock-telegram.mjs`)
//! and PlanFix (`tests/fixtures/mock-planfix.mjs`), both real Node servers on loopback that
//! validate what the real ones validate; the real `claude` against the scripted mock for the
//! lines; the vault's check as a real shell command.

use std::path::Path;

use conveyor_api::{ErrorCode, LineState, NewLine, OutboxKind, OutboxState, QuestionStatus};
use serde_json::{Value, json};

use crate::support::*;

const BOT_TOKEN: &str = "123456:TEST-token";
const CHAT: i64 = 4242;
/// A chat the bot has also been in (a chat id configured before): not Anton's now.
const OTHER_CHAT: i64 = 777;
const PF_TOKEN: &str = "pf-token";

/// The mock Bot API, knowing Anton's chat and another one; it refuses a second message to a
/// chat within a second, as Telegram's flood control does.
fn telegram() -> Double {
    Double::start(
        "mock-telegram.mjs",
        &[
            "--token".into(),
            BOT_TOKEN.into(),
            "--chat".into(),
            CHAT.to_string(),
            "--chat".into(),
            OTHER_CHAT.to_string(),
            "--min-interval-ms".into(),
            "1000".into(),
        ],
    )
}

fn planfix() -> Double {
    Double::start(
        "mock-planfix.mjs",
        &[
            "--token".into(),
            PF_TOKEN.into(),
            "--task".into(),
            "101".into(),
            "--task".into(),
            "202".into(),
        ],
    )
}

/// The bot's messages to Anton's chat so far (`sendMessage`), in order.
async fn messages(tg: &Double) -> Vec<Value> {
    tg.get("/test/sent")
        .await
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["method"] == "sendMessage" && s["chat_id"] == CHAT)
        .cloned()
        .collect()
}

/// The `callback_data` of a sent message's buttons.
fn buttons(m: &Value) -> Vec<String> {
    m["reply_markup"]["inline_keyboard"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|row| row.as_array().unwrap().iter())
        .map(|b| b["callback_data"].as_str().unwrap().to_string())
        .collect()
}

/// A secret in a file readable by its owner only.
fn secret(dir: &Path, name: &str, value: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, format!("{value}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    p.display().to_string()
}

/// `[catcher]` (and `[planfix]` when given) for the doubles; a night that is `now` or not.
fn config(secrets: &Path, tg: &Double, pf: Option<&Double>, night: &str) -> String {
    let mut s = format!(
        "{night}\n[catcher]\nbot_token_file = {:?}\nchat_id = {CHAT}\napi_base = {:?}\npoll_secs = 1\nlang = \"en\"\n",
        secret(secrets, "bot", BOT_TOKEN),
        tg.url
    );
    if let Some(pf) = pf {
        s.push_str(&format!(
            "[planfix]\nbase_url = {:?}\ntoken_file = {:?}\n",
            pf.url,
            secret(secrets, "planfix", PF_TOKEN)
        ));
    }
    s
}

/// A night far from now: it is day.
fn day() -> String {
    night_around(chrono::Utc::now() + chrono::Duration::hours(6), 1)
}

/// A night that is now and lasts `hours` more.
fn night_now() -> String {
    night_around(chrono::Utc::now(), 2)
}

fn night_around(at: chrono::DateTime<chrono::Utc>, hours: i64) -> String {
    format!(
        "night = \"{}-{}\"\ntimezone = \"UTC\"",
        (at - chrono::Duration::hours(1)).format("%H:%M:%S"),
        (at + chrono::Duration::hours(hours)).format("%H:%M:%S")
    )
}

fn plan(title: &str) -> Value {
    json!({"level": "light", "steps": [{"title": title, "task": title, "checks": [{"cmd": "true"}]}]})
}

/// A line that plans one step and makes one change.
async fn simple_line(d: &Daemon, project: &str, title: &str, planfix_task: Option<&str>) -> String {
    let l = d
        .client()
        .create_line(&NewLine {
            project_id: project.into(),
            title: title.into(),
            task: format!("{title}: change a file"),
            priority: None,
            planfix_task: planfix_task.map(str::to_string),
        })
        .await
        .unwrap();
    let file = format!("{}.txt", title.replace(' ', "-"));
    d.mock()
        .script(
            &l.session_id,
            json!({"1": [write_plan(&plan(title)), text("planned")],
                   "2": [bash(&format!("echo changed > {file}")), text("done")]}),
        )
        .await;
    l.id
}

/// By day a line that reaches acceptance is one message with an Accept button, and its PlanFix
/// task gets one report — once, though the first post's answer was lost. A press from another
/// chat the bot is in does nothing; Anton's press accepts the line and the message shows it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_day_a_ready_line_is_one_message_its_button_accepts_it_and_planfix_gets_one_report() {
    let (tg, pf) = (telegram(), planfix());
    let secrets = tempfile::tempdir().unwrap();
    let toml = config(secrets.path(), &tg, Some(&pf), &day());
    let d = Daemon::builder()
        .files(&[
            ("a.txt", "a\n"),
            (".conveyor.toml", "regression = \"test -f a.txt\"\n"),
        ])
        .mock()
        .config(&toml)
        .start()
        .await;
    let c = d.client();
    // The first post's answer is lost after PlanFix stored it.
    pf.post(
        "/test/faults",
        json!({"route": "add", "status": 0, "store": true, "count": 1}),
    )
    .await;
    let p = d.project().await.to_string();
    let id = simple_line(&d, &p, "cart totals", Some("#101")).await;
    let l = wait_state(c, &id, LineState::AwaitingAcceptance, 120).await;
    assert_eq!(l.line.planfix_task.as_deref(), Some("101"));

    let ready = wait_for(30, "the ready message", || async {
        messages(&tg).await.into_iter().next()
    })
    .await;
    assert!(
        ready["plain"].as_str().unwrap().contains("Ready to accept"),
        "{ready}"
    );
    assert!(ready["plain"].as_str().unwrap().contains("cart totals"));
    assert_eq!(ready["parse_mode"], "HTML");
    let accept = buttons(&ready);
    assert_eq!(accept.len(), 1, "{ready}");
    assert!(accept[0].starts_with("a:") && accept[0].len() <= 64);

    // PlanFix: one report on task 101 (the lost post found by its mark, not posted again).
    let comments = wait_for(60, "the PlanFix report", || async {
        let all = pf.get("/test/comments").await;
        let outbox = c.outbox().await.ok()?;
        outbox
            .items
            .iter()
            .any(|i| i.kind == OutboxKind::Report && i.state == OutboxState::Sent)
            .then_some(all)
    })
    .await;
    let comments = comments.as_array().unwrap();
    assert_eq!(comments.len(), 1, "{comments:?}");
    assert_eq!(comments[0]["task"], 101);
    let text = comments[0]["description"].as_str().unwrap();
    for want in [
        "cart totals",
        "cart-totals.txt (added)",
        "<code>test -f a.txt</code>",
        &format!("line/{id}"),
    ] {
        assert!(text.contains(want), "{want} not in {text}");
    }
    assert!(text.contains(&format!("[conveyor:{id}:1]")), "{text}");

    // The same button in another chat the bot is in (sent there as the bot): not obeyed.
    let foreign = tg
        .post(
            &format!("/bot{BOT_TOKEN}/sendMessage"),
            json!({"chat_id": OTHER_CHAT, "text": "old", "reply_markup": {"inline_keyboard": [[{"text": "Accept", "callback_data": accept[0]}]]}}),
        )
        .await;
    let forged = tg
        .post(
            "/test/press",
            json!({"chat_id": OTHER_CHAT, "message_id": foreign["result"]["message_id"], "data": accept[0]}),
        )
        .await;
    // Anton's press, after it: updates are handled in order.
    let pressed = tg
        .post(
            "/test/press",
            json!({"chat_id": CHAT, "message_id": ready["message_id"], "data": accept[0]}),
        )
        .await;
    wait_state(c, &id, LineState::Accepted, 30).await;
    let sent = tg.get("/test/sent").await;
    let answered: Vec<&Value> = sent
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["method"] == "answerCallbackQuery")
        .collect();
    assert_eq!(answered.len(), 1, "{answered:?}");
    assert_eq!(
        answered[0]["callback_query_id"],
        pressed["callback_query_id"]
    );
    assert_ne!(
        answered[0]["callback_query_id"],
        forged["callback_query_id"]
    );
    assert_eq!(answered[0]["text"], "Accepted");
    // The message now says it was accepted, and has no button left.
    let edited = wait_for(30, "the edit", || async {
        tg.get("/test/sent")
            .await
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["method"] == "editMessageText")
            .cloned()
    })
    .await;
    assert_eq!(edited["message_id"], ready["message_id"]);
    assert!(
        edited["plain"].as_str().unwrap().ends_with("→ Accepted"),
        "{edited}"
    );
    assert!(buttons(&edited).is_empty());
    // Nothing else went to Anton.
    assert_eq!(messages(&tg).await.len(), 1);
}

/// By day a question that is irreversible and expensive goes to the Catcher at once with its
/// options as buttons; a press answers it through the same path as the app, and the line goes
/// on in its session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_day_an_urgent_question_has_buttons_and_a_press_answers_it() {
    let tg = telegram();
    let secrets = tempfile::tempdir().unwrap();
    let toml = config(secrets.path(), &tg, None, &day());
    let d = Daemon::builder().mock().config(&toml).start().await;
    let c = d.client();
    let l = d.line("bucket", "clean up storage").await;
    let entry = json!({"kind": "question", "text": "Delete the production bucket?",
        "options": ["delete", "keep"], "default": "keep", "why": "scripted",
        "reversible": false, "expensive": true});
    d.mock()
        .script(
            &l.session_id,
            json!({"1": [write_plan(&plan("bucket")), text("planned")],
                   "2": [bash(&format!("echo '{entry}' >> \"$CONVEYOR_JOURNAL\"")), text("asked")]}),
        )
        .await;
    d.mock()
        .script_line(
            &l.id,
            "judge",
            json!({"*": [judge_verdict(&[("production bucket", "validated", None)]), text("judged")]}),
        )
        .await;
    let waiting = wait_state(c, &l.id, LineState::WaitingAnswer, 120).await;
    assert!(waiting.questions[0].urgent);
    let asked = wait_for(30, "the question's message", || async {
        messages(&tg).await.into_iter().next()
    })
    .await;
    let plain = asked["plain"].as_str().unwrap();
    assert!(
        plain.contains("Delete the production bucket?") && plain.contains("Default: keep"),
        "{plain}"
    );
    let keys = buttons(&asked);
    assert_eq!(keys.len(), 2, "{asked}");
    tg.post(
        "/test/press",
        json!({"chat_id": CHAT, "message_id": asked["message_id"], "data": keys[1]}),
    )
    .await;
    // Answered as in the app: an answer step in the line's session, then on to acceptance.
    let done = wait_state(c, &l.id, LineState::AwaitingAcceptance, 120).await;
    assert_eq!(done.questions[0].status, QuestionStatus::Answered);
    assert_eq!(done.questions[0].answer.as_deref(), Some("keep"));
    let answer_step = done
        .line
        .steps
        .iter()
        .find(|s| s.kind == conveyor_api::StepKind::Answer)
        .expect("an answer step");
    assert_eq!(answer_step.state, conveyor_api::StepState::Done);
    let in_session = d.mock().requests(&l.session_id).await;
    assert!(
        in_session
            .iter()
            .any(|r| r.to_string().contains(&format!("· answer · line {}", l.id))),
        "the answer step ran in the line's session"
    );
    let edited = wait_for(30, "the edit showing the answer", || async {
        tg.get("/test/sent")
            .await
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["method"] == "editMessageText" && s["message_id"] == asked["message_id"])
            .cloned()
    })
    .await;
    assert!(
        edited["plain"]
            .as_str()
            .unwrap()
            .ends_with("→ Answer: keep"),
        "{edited}"
    );
    assert!(buttons(&edited).is_empty());
}

/// At night nothing is sent: a line ready at night waits in the outbox, held; when the night
/// ends one digest carries what waited, with its buttons, and a press on it works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_night_nothing_is_sent_until_the_night_ends_then_one_digest() {
    let tg = telegram();
    let secrets = tempfile::tempdir().unwrap();
    let toml = config(secrets.path(), &tg, None, &night_now());
    let mut d = Daemon::builder().mock().config(&toml).start().await;
    let p = d.project().await.to_string();
    let q = d.add_project("q", &[("b.txt", "b\n")]).await;
    let a = simple_line(&d, &p, "first fix", None).await;
    let b = simple_line(&d, &q, "second fix", None).await;
    for id in [&a, &b] {
        wait_state(d.client(), id, LineState::AwaitingAcceptance, 120).await;
    }
    let held = wait_for(30, "both messages held", || async {
        let o = d.client().outbox().await.ok()?;
        let held: Vec<_> = o
            .items
            .into_iter()
            .filter(|i| i.kind == OutboxKind::Ready && i.held && i.state == OutboxState::Pending)
            .collect();
        (held.len() == 2).then_some(held)
    })
    .await;
    assert_eq!(held.len(), 2);
    // The sender had time to send them, had it been day: the test message goes at night,
    // so once it has, the ready ones were passed over, not merely not reached yet.
    d.client().outbox_test().await.unwrap();
    wait_for(30, "the test message", || async {
        (messages(&tg).await.len() == 1).then_some(())
    })
    .await;
    assert!(
        messages(&tg).await[0]["plain"]
            .as_str()
            .unwrap()
            .contains("A test")
    );

    // The night ends; the daemon restarts with it.
    d.set_config(&day());
    d.restart().await;
    let digest = wait_for(30, "the digest", || async {
        messages(&tg).await.into_iter().nth(1)
    })
    .await;
    let plain = digest["plain"].as_str().unwrap();
    assert!(plain.contains("While it was night (2)"), "{plain}");
    assert!(
        plain.contains("first fix") && plain.contains("second fix"),
        "{plain}"
    );
    let keys = buttons(&digest);
    assert_eq!(keys.len(), 2, "{digest}");
    // One digest, nothing besides it, and the held rows are sent with it.
    let o = wait_for(10, "the held rows marked sent", || async {
        let o = d.client().outbox().await.ok()?;
        o.items
            .iter()
            .filter(|i| i.kind == OutboxKind::Ready)
            .all(|i| i.state == OutboxState::Sent)
            .then_some(o)
    })
    .await;
    assert_eq!(o.pending, 0);
    assert_eq!(messages(&tg).await.len(), 2);
    // A press in the digest accepts its line (its button is the one numbered as it is).
    let first = plain.find("first fix").unwrap() < plain.find("second fix").unwrap();
    let key = if first { &keys[0] } else { &keys[1] };
    tg.post(
        "/test/press",
        json!({"chat_id": CHAT, "message_id": digest["message_id"], "data": key}),
    )
    .await;
    wait_state(d.client(), &a, LineState::Accepted, 30).await;
    assert_eq!(
        d.client().line(&b).await.unwrap().line.state,
        LineState::AwaitingAcceptance
    );
}

/// The test message of row `n` as the mock stored it: its number.
fn test_number(m: &Value) -> i64 {
    let plain = m["plain"].as_str().unwrap();
    plain.rsplit('#').next().unwrap().trim().parse().unwrap()
}

/// A storm of 429s (each with its `retry_after`) and 5xx answers: every message is delivered
/// once, in the order it was written, and never faster than one a second (the mock refuses
/// a faster one with a 429 of its own, which would show up below).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_storm_delivers_every_message_once_in_order() {
    let tg = telegram();
    let secrets = tempfile::tempdir().unwrap();
    let toml = config(secrets.path(), &tg, None, &day());
    let d = Daemon::builder().config(&toml).start().await;
    let c = d.client();
    for f in [
        json!({"method": "sendMessage", "status": 429, "retry_after": 1, "count": 3}),
        json!({"method": "sendMessage", "status": 502, "count": 1}),
        json!({"method": "sendMessage", "status": 429, "retry_after": 2, "count": 2}),
        json!({"method": "sendMessage", "status": 500, "count": 1}),
    ] {
        tg.post("/test/faults", f).await;
    }
    let mut ids = Vec::new();
    for _ in 0..5 {
        ids.push(c.outbox_test().await.unwrap().id);
    }
    let sent = wait_for(90, "five messages through the storm", || async {
        let m = messages(&tg).await;
        (m.len() >= 5).then_some(m)
    })
    .await;
    let got: Vec<i64> = sent.iter().map(test_number).collect();
    assert_eq!(got, ids, "each once, in order");
    let calls = tg.get("/test/calls").await;
    let refused_429 = calls
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["method"] == "sendMessage" && c["status"] == 429)
        .count();
    assert_eq!(refused_429, 5, "only the injected 429s: {calls}");
    let at: Vec<i64> = sent.iter().map(|m| m["at_ms"].as_i64().unwrap()).collect();
    assert!(at.windows(2).all(|w| w[1] - w[0] >= 1000), "{at:?}");
    let o = c.outbox().await.unwrap();
    assert_eq!((o.pending, o.sent, o.failed), (0, 5, 0));
    assert!(o.items.iter().all(|i| i.attempts >= 1));
    assert!(o.catcher.configured && !o.planfix.configured);
    assert_eq!(o.catcher.target.as_deref(), Some(CHAT.to_string().as_str()));
}

/// `kill -9` with messages pending (Telegram down): after the restart each is delivered
/// exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_pending_at_a_kill9_are_each_delivered_once_after_restart() {
    let tg = telegram();
    let secrets = tempfile::tempdir().unwrap();
    let toml = config(secrets.path(), &tg, None, &day());
    let mut d = Daemon::builder().config(&toml).spawn().await;
    // Telegram is down: every send fails.
    tg.post(
        "/test/faults",
        json!({"method": "sendMessage", "status": 503, "count": 1000}),
    )
    .await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(d.client().outbox_test().await.unwrap().id);
    }
    // Killed while no call is in flight (a message whose call was cut may go twice: at least
    // once is the promise), so every message is pending: the head waits out its backoff.
    wait_for(30, "the head to wait out a backoff", || async {
        let o = d.client().outbox().await.ok()?;
        let head = o.items.iter().find(|i| i.attempts >= 2)?;
        let due = chrono::DateTime::parse_from_rfc3339(head.next_at.as_deref()?).ok()?;
        (due.timestamp_millis() - chrono::Utc::now().timestamp_millis() > 1000).then_some(())
    })
    .await;
    d.kill9();
    // Telegram is back.
    let left = tg.get("/test/faults").await;
    assert!(!left.as_array().unwrap().is_empty());
    let r = tg
        .http
        .delete(format!("{}/test/faults", tg.url))
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success());
    d.restart().await;
    let sent = wait_for(60, "the three messages", || async {
        let m = messages(&tg).await;
        (m.len() >= 3).then_some(m)
    })
    .await;
    let got: Vec<i64> = sent.iter().map(test_number).collect();
    assert_eq!(got, ids);
    let o = d.client().outbox().await.unwrap();
    assert_eq!((o.pending, o.sent), (0, 3));
}

/// A closed vault: lines whose next step needs memory wait `blocked` with `vault_closed`,
/// keeping their projects; Anton is told once; when it opens they go on by themselves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_vault_holds_lines_with_one_notice_and_they_go_on_when_it_opens() {
    let tg = telegram();
    let secrets = tempfile::tempdir().unwrap();
    let vault = secrets.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    let flag = secrets.path().join("unlocked");
    let toml = format!(
        "{}\n[vault]\npath = {:?}\ncheck = \"test -e '{}'\"\nrecheck_secs = 1\n",
        config(secrets.path(), &tg, None, &day()),
        vault.display().to_string(),
        flag.display()
    );
    let d = Daemon::builder().mock().config(&toml).start().await;
    let c = d.client();
    let p = d.project().await.to_string();
    let q = d.add_project("q", &[("b.txt", "b\n")]).await;
    let a = simple_line(&d, &p, "needs notes", None).await;
    let b = simple_line(&d, &q, "needs notes too", None).await;
    for id in [&a, &b] {
        let l = wait_state(c, id, LineState::Blocked, 30).await;
        assert_eq!(
            l.line.reason_code,
            Some(conveyor_api::ReasonCode::VaultClosed)
        );
        assert!(l.line.steps.iter().all(|s| s.attempts == 0), "no step ran");
    }
    // The line blocked by the vault keeps its project: a second line there does not start.
    let later = simple_line(&d, &p, "second in p", None).await;
    let notice = wait_for(30, "the vault notice", || async {
        messages(&tg).await.into_iter().next()
    })
    .await;
    assert!(
        notice["plain"]
            .as_str()
            .unwrap()
            .contains("The vault is closed")
    );
    let pre = c.preflight().await.unwrap();
    let item = pre
        .items
        .iter()
        .find(|i| i.code == conveyor_api::PreflightCode::Vault)
        .unwrap();
    assert_eq!(item.level, conveyor_api::PreflightLevel::Warning);
    assert!(
        !pre.blocking,
        "a closed vault blocks only steps that need memory"
    );
    // Held by its project's blocked line, the second line of `p` never reached the vault.
    assert_eq!(c.line(&later).await.unwrap().line.state, LineState::Queued);
    std::fs::write(&flag, "").unwrap();
    for id in [&a, &b] {
        wait_state(c, id, LineState::AwaitingAcceptance, 120).await;
    }
    // One notice for the whole closing, then the two lines' ready messages.
    wait_for(30, "the ready messages", || async {
        (messages(&tg).await.len() >= 3).then_some(())
    })
    .await;
    let vault_notices = messages(&tg)
        .await
        .iter()
        .filter(|m| m["plain"].as_str().unwrap().contains("vault"))
        .count();
    assert_eq!(vault_notices, 1);
}

/// Without a `[catcher]` the test message is refused saying what to configure; a bot token
/// file others can read is named as the problem.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unconfigured_catcher_or_an_open_token_file_is_said_plainly() {
    let d = Daemon::start().await;
    let e = d.client().outbox_test().await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::CatcherOff));
    assert!(e.to_string().contains("[catcher]"), "{e}");
    let o = d.client().outbox().await.unwrap();
    assert!(!o.catcher.configured && o.items.is_empty());

    let tg = telegram();
    let secrets = tempfile::tempdir().unwrap();
    let toml = config(secrets.path(), &tg, None, &day());
    use std::os::unix::fs::PermissionsExt;
    let token = secrets.path().join("bot");
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o644)).unwrap();
    let d = Daemon::builder().config(&toml).start().await;
    let pre = d.client().preflight().await.unwrap();
    let item = pre
        .items
        .iter()
        .find(|i| i.code == conveyor_api::PreflightCode::Catcher)
        .unwrap();
    assert_eq!(item.level, conveyor_api::PreflightLevel::Warning);
    assert!(
        item.message.contains("catcher.bot_token_file")
            && item.message.contains("readable by others"),
        "{}",
        item.message
    );
    // With the mode fixed, the bot answers.
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600)).unwrap();
    let pre = d.client().preflight().await.unwrap();
    let item = pre
        .items
        .iter()
        .find(|i| i.code == conveyor_api::PreflightCode::Catcher)
        .unwrap();
    assert_eq!(
        item.level,
        conveyor_api::PreflightLevel::Ok,
        "{}",
        item.message
    );
}

/// The one-message-a-gap rule holds across a restart: the time of the last send is kept with
/// the outbox, so a daemon started again right after a send waits out the rest of the gap
/// instead of being refused by Telegram's flood control (the mock's 429).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_right_after_a_send_still_waits_the_gap() {
    // A gap longer than a restart takes on a busy machine.
    let tg = Double::start(
        "mock-telegram.mjs",
        &[
            "--token".into(),
            BOT_TOKEN.into(),
            "--chat".into(),
            CHAT.to_string(),
            "--min-interval-ms".into(),
            "4000".into(),
        ],
    );
    let secrets = tempfile::tempdir().unwrap();
    let toml = config(secrets.path(), &tg, None, &day()) + "min_gap_ms = 4000\n";
    let mut d = Daemon::builder().config(&toml).start().await;
    let first = d.client().outbox_test().await.unwrap().id;
    wait_for(30, "the first message", || async {
        (!messages(&tg).await.is_empty()).then_some(())
    })
    .await;
    d.restart().await;
    let second = d.client().outbox_test().await.unwrap().id;
    let sent = wait_for(60, "the second message", || async {
        let m = messages(&tg).await;
        (m.len() >= 2).then_some(m)
    })
    .await;
    assert_eq!(
        sent.iter().map(test_number).collect::<Vec<_>>(),
        [first, second]
    );
    let calls = tg.get("/test/calls").await;
    let refused = calls
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["method"] == "sendMessage" && c["status"] == 429)
        .count();
    assert_eq!(refused, 0, "sent before the gap was over: {calls}");
    let at: Vec<i64> = sent.iter().map(|m| m["at_ms"].as_i64().unwrap()).collect();
    assert!(at[1] - at[0] >= 4000, "{at:?}");
}
