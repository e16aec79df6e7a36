//! Bot scenarios against the sample bot through the fake Telegram: sends, presses, edits,
//! findings, `prod_bot` refused, bad files named.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn a_bot_scenario_sends_presses_and_sees_the_edit() {
    let dir = tempfile::tempdir().unwrap();
    let tg = FakeWithBot::start(dir.path(), ["--paid-text", "Оплачено ✅"]).await;
    let p = project(dir.path(), &[("pay.toml", PAY)]);
    let r = telegram_check(&fake_config(dir.path(), tg.base()), &p, &[]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "pay: passed\n"),
        "{}",
        r.stderr
    );
    // What the user and the bot did, as the fake recorded it: the menu was edited in place.
    let msgs = tg.messages().await;
    let texts: Vec<&str> = msgs.iter().map(|m| m["text"].as_str().unwrap()).collect();
    assert_eq!(texts, ["/start", "Оплачено ✅"]);
    assert!(msgs[1]["edit_date"].is_i64(), "{msgs:?}");
    let sent = tg.get("/test/sent").await;
    assert!(
        sent.as_array()
            .unwrap()
            .iter()
            .any(|s| s["method"] == "answerCallbackQuery"),
        "{sent}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_changed_reply_is_a_finding_and_prod_bot_is_refused_with_nothing_sent() {
    let dir = tempfile::tempdir().unwrap();
    let tg = FakeWithBot::start(dir.path(), ["--paid-text", "Ошибка оплаты"]).await;
    let prod = PAY.replace("target = \"bot\"", "target = \"bot\"\nbot = \"@Shop_Bot\"");
    let p = project(dir.path(), &[("pay.toml", PAY), ("prod.toml", &prod)]);
    let cfg = fake_config(dir.path(), tg.base());

    // Aimed at the production bot: refused before anything is sent.
    let r = telegram_check(&cfg, &p, &["--scenario", ".conveyor/telegram/prod.toml"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.starts_with(
            "prod: FAILED\n  refused: the scenario is aimed at @Shop_Bot, the project's prod_bot"
        ),
        "{}",
        r.stdout
    );
    assert_eq!(tg.messages().await, Vec::<Value>::new());
    assert_eq!(tg.get("/test/updates").await, serde_json::json!([]));

    // The bot answers otherwise than the scenario expects: the finding quotes it.
    let r = telegram_check(&cfg, &p, &["--scenario", ".conveyor/telegram/pay.toml"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert_eq!(
        r.stdout,
        "pay: FAILED\n  step 4: expected /Оплачено/, got «Ошибка оплаты»\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_button_and_a_bad_file_say_what_and_where() {
    let dir = tempfile::tempdir().unwrap();
    let tg = FakeWithBot::start(dir.path(), ["--paid-text", "Оплачено ✅"]).await;
    let nobutton = PAY.replace("press = \"Оплатить\"", "press = \"Купить\"");
    let p = project(dir.path(), &[("buy.toml", &nobutton)]);
    let cfg = fake_config(dir.path(), tg.base());
    let r = telegram_check(&cfg, &p, &[]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (
            1,
            "buy: FAILED\n  step 3: no button «Купить» (buttons there: «Оплатить», «Помощь»)\n"
        ),
        "{}",
        r.stderr
    );

    std::fs::write(
        p.join(".conveyor/telegram/typo.toml"),
        "target = \"bot\"\n[[step]]\nsned = \"/start\"\n",
    )
    .unwrap();
    let r = telegram_check(&cfg, &p, &[]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stderr
            .contains(".conveyor/telegram/typo.toml:3: sned: unknown field `sned`"),
        "{}",
        r.stderr
    );
}
