//! Delivers the outbox: one queue per channel, in id order, nothing overtaking a message
//! that waits to be retried. Telegram: at most one message per `min_gap_ms` to the chat, a
//! 429 waits its `retry_after`, a failure backs off; at night only tests and edits go, and
//! what was held goes as one digest when the night ends. PlanFix: see [`super::planfix`].
//!
//! Delivery is at least once: the attempt is counted before the call, and a message whose
//! call was cut by a crash is sent again (Telegram has no way to ask whether it arrived;
//! PlanFix has, and [`super::planfix`] asks).

use std::sync::Arc;
use std::time::Duration;

use conveyor_api::{Channel, EventKind, OutboxKind, OutboxState};
use tokio::time::Instant;

use crate::error::Result;
use crate::events::EventBody;
use crate::state::Shared;
use crate::store::outbox::{self, OutboxRow};
use crate::tell::telegram::{Bot, CallError, Key};
use crate::tell::text::{self, Words};
use crate::tell::{Body, Does};

/// After `failures` failures in a row the next try waits this long: 1 s, doubling up to 5
/// minutes.
pub(crate) fn backoff(failures: i64) -> Duration {
    let n = u32::try_from(failures.clamp(1, 20) - 1).unwrap_or(19);
    Duration::from_secs(2u64.saturating_pow(n).min(300))
}

/// A message not delivered within this long after it was written fails.
pub(crate) const GIVE_UP_MS: i64 = 24 * 3_600_000;

/// One message as sent: its text and its keyboard.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Part {
    pub text: String,
    pub keys: Vec<Vec<Key>>,
}

/// A block of a message: one row's text and buttons.
fn block(w: Words, r: &OutboxRow, numbered: Option<usize>) -> (String, Vec<Vec<Key>>) {
    let body: Body = serde_json::from_str(&r.body).unwrap_or_default();
    let mut t = body.text;
    if let Some(n) = numbered {
        t = format!("{n}. {t}");
    }
    if let Some(res) = &r.resolved {
        t.push('\n');
        t.push_str(&w.resolved(res));
        return (t, Vec::new());
    }
    let keys = body
        .buttons
        .iter()
        .map(|b| {
            let label = match numbered {
                Some(n) => format!("{n}. {}", b.text),
                None => b.text.clone(),
            };
            let data = match b.does {
                Does::Answer(i) => format!("q:{}:{i}", r.id),
                Does::Accept => format!("a:{}", r.id),
            };
            debug_assert!(data.len() <= text::CALLBACK_MAX);
            vec![Key { text: label, data }]
        })
        .collect();
    (t, keys)
}

/// What a message row goes out as: one part, or several when it is long (a digest of a busy
/// night), each below Telegram's limit with room for an edit, the buttons with the part
/// that holds their text. The same row renders the same parts until something resolves.
pub(crate) fn render(w: Words, r: &OutboxRow, members: &[OutboxRow]) -> Vec<Part> {
    let blocks: Vec<(String, Vec<Vec<Key>>)> = if r.kind == OutboxKind::Digest {
        let mut b = vec![(w.digest(members.len()), Vec::new())];
        b.extend(
            members
                .iter()
                .enumerate()
                .map(|(i, m)| block(w, m, Some(i + 1))),
        );
        b
    } else {
        vec![block(w, r, None)]
    };
    let mut parts: Vec<Part> = Vec::new();
    let mut cur = Part {
        text: String::new(),
        keys: Vec::new(),
    };
    for (t, keys) in blocks {
        let pieces = text::split(&t, text::PART_MAX);
        let count = pieces.len();
        for (i, piece) in pieces.into_iter().enumerate() {
            let sep = if cur.text.is_empty() { 0 } else { 2 };
            let last_piece = i + 1 == count;
            let more_keys = if last_piece { keys.len() } else { 0 };
            if !cur.text.is_empty()
                && (text::units(&cur.text) + sep + text::units(&piece) > text::PART_MAX
                    || cur.keys.len() + more_keys > 100)
            {
                parts.push(std::mem::replace(
                    &mut cur,
                    Part {
                        text: String::new(),
                        keys: Vec::new(),
                    },
                ));
            }
            if !cur.text.is_empty() {
                cur.text.push_str("\n\n");
            }
            cur.text.push_str(&piece);
            if last_piece {
                cur.keys.extend(keys.iter().cloned());
            }
        }
    }
    parts.push(cur);
    parts
}

/// Runs the Telegram queue until shutdown (nothing without a `[catcher]`).
pub async fn telegram(sh: Arc<Shared>) {
    let Some(cc) = sh.cfg.catcher.clone() else {
        return;
    };
    let mut last = last_send(&sh, cc.min_gap_ms).await;
    let mut failures: i64 = 0;
    let mut bot: Option<Bot> = None;
    loop {
        if sh.shutdown.is_cancelled() {
            return;
        }
        if bot.is_none() {
            match crate::config::read_secret(&cc.bot_token_file, "catcher.bot_token_file") {
                Ok(t) => bot = Some(Bot::new(&cc.api_base, &t)),
                Err(e) => tracing::warn!(error = %e, "the Catcher cannot send"),
            }
        }
        let wait = match &bot {
            Some(b) => match telegram_once(
                &sh,
                b,
                (cc.chat_id, cc.min_gap_ms),
                &mut last,
                &mut failures,
            )
            .await
            {
                Ok(w) => w,
                Err(e) => {
                    tracing::error!(error = %e, "the Catcher's queue failed");
                    Duration::from_secs(5)
                }
            },
            None => Duration::from_secs(60),
        };
        let notified = sh.outbox_wake.notified();
        tokio::select! {
            () = notified => {}
            () = tokio::time::sleep(wait) => {}
            () = sh.shutdown.cancelled() => return,
        }
    }
}

/// Where the time of the last call to the chat is kept (the daemon's clock, ms): the gap is
/// Telegram's, and a restarted daemon must keep it too, not send at once.
const LAST_SEND: &str = "catcher_last_send_ms";

/// The last call to the chat as an `Instant`, from what the outbox's store kept; `None` when
/// it is longer ago than the gap (or never was).
async fn last_send(sh: &Shared, gap_ms: u64) -> Option<Instant> {
    let kept = match sh.store.conn().await {
        Ok(mut c) => crate::store::account::value(&mut c, LAST_SEND)
            .await
            .ok()
            .flatten(),
        Err(_) => None,
    };
    let ago = sh.clock.now_ms() - kept?.parse::<i64>().ok()?;
    let ago = u64::try_from(ago).unwrap_or(0);
    if ago >= gap_ms {
        return None;
    }
    Instant::now().checked_sub(Duration::from_millis(ago))
}

/// A call to the chat was answered now: the next waits the gap from here, also after a restart.
async fn sent_now(sh: &Shared, last: &mut Option<Instant>) {
    *last = Some(Instant::now());
    let now = sh.clock.now_ms().to_string();
    let kept = match sh.store.conn().await {
        Ok(mut c) => crate::store::account::set_value(&mut c, LAST_SEND, Some(&now)).await,
        Err(e) => Err(e),
    };
    if let Err(e) = kept {
        // The gap still holds in memory; only a restart in the next second could break it.
        tracing::warn!(error = %e, "keeping the Catcher's last send time failed");
    }
}

/// Tells the subscribers that the outbox changed.
pub(crate) fn announce(sh: &Shared, r: &OutboxRow, state: OutboxState) {
    sh.events.emit(
        EventKind::Outbox,
        EventBody {
            line_id: r.line_id.clone(),
            detail: Some(format!("{} {} {}", r.channel, r.kind, state)),
            ..EventBody::default()
        },
    );
}

/// One look at the Telegram queue: sends its head if it is due; how long to wait before the
/// next look (a wake comes sooner when something is written). `failures` counts the server's
/// failures in a row (a 429 is not one: it says when to come back), for the backoff.
async fn telegram_once(
    sh: &Shared,
    bot: &Bot,
    (chat, gap_ms): (i64, u64),
    last: &mut Option<Instant>,
    failures: &mut i64,
) -> Result<Duration> {
    let now = sh.clock.now_ms();
    let night = sh.cfg.night().is_some_and(|n| n.contains(now));
    if !night {
        fold_digest(sh, now).await?;
    }
    let mut c = sh.store.conn().await?;
    let Some(head) = outbox::head(&mut c, Channel::Telegram).await? else {
        drop(c);
        // Held messages wait for the night's end, which no write announces.
        return Ok(Duration::from_secs(if night { 1 } else { 30 }));
    };
    if night && !matches!(head.kind, OutboxKind::Test | OutboxKind::Edit) {
        // Written by day and not delivered before the night came: it waits for the digest
        // (a digest itself waits for the morning).
        if head.kind != OutboxKind::Digest {
            outbox::hold(&mut c, head.id).await?;
            return Ok(Duration::ZERO);
        }
        return Ok(Duration::from_secs(1));
    }
    if head.next_at > now {
        return Ok(Duration::from_millis(
            u64::try_from(head.next_at - now).unwrap_or(0),
        ));
    }
    // One message per gap to the chat.
    if let Some(at) = *last {
        let gap = Duration::from_millis(gap_ms);
        if at.elapsed() < gap {
            return Ok(gap - at.elapsed());
        }
    }
    if now - head.created_at > GIVE_UP_MS {
        let why = format!(
            "not delivered within a day: {}",
            head.last_error.as_deref().unwrap_or("no answer")
        );
        outbox::failed(&mut c, head.id, &why).await?;
        announce(sh, &head, OutboxState::Failed);
        return Ok(Duration::ZERO);
    }
    outbox::attempt(&mut c, head.id).await?;
    drop(c);
    let outcome = deliver(sh, bot, chat, &head, last).await;
    let mut c = sh.store.conn().await?;
    let now = sh.clock.now_ms();
    match outcome {
        Ok(ids) => {
            *failures = 0;
            outbox::sent(&mut c, head.id, &ids, now).await?;
            tracing::info!(id = head.id, kind = %head.kind, "Catcher: sent");
            announce(sh, &head, OutboxState::Sent);
        }
        Err(CallError::Later { after, method }) => {
            *failures = 0;
            let e = CallError::Later { method, after };
            let ms = i64::try_from(after.as_millis()).unwrap_or(i64::MAX);
            outbox::retry(&mut c, head.id, now + ms, &e.to_string()).await?;
            tracing::warn!(id = head.id, error = %e, "Catcher: held back by Telegram");
        }
        Err(e @ CallError::Transient { .. }) => {
            *failures += 1;
            let ms = i64::try_from(backoff(*failures).as_millis()).unwrap_or(i64::MAX);
            outbox::retry(&mut c, head.id, now + ms, &e.to_string()).await?;
            tracing::warn!(id = head.id, failures = *failures, error = %e, "Catcher: will retry");
        }
        Err(e @ CallError::Refused { .. }) => {
            *failures = 0;
            outbox::failed(&mut c, head.id, &e.to_string()).await?;
            tracing::error!(id = head.id, error = %e, "Catcher: refused");
            announce(sh, &head, OutboxState::Failed);
        }
    }
    Ok(Duration::ZERO)
}

/// When the night has ended: the messages held through it, folded into one digest (written
/// before the messages are marked, in one transaction).
async fn fold_digest(sh: &Shared, now: i64) -> Result<()> {
    // Looked at without the write lock: this runs on every pass of the queue.
    if outbox::held_loose(&mut *sh.store.conn().await?, Channel::Telegram)
        .await?
        .is_empty()
    {
        return Ok(());
    }
    let mut tx = sh.store.begin().await?;
    let loose = outbox::held_loose(&mut tx, Channel::Telegram).await?;
    let (Some(first), Some(last)) = (loose.first(), loose.last()) else {
        // Rolled back now, not when the pool next uses the connection: the write lock must
        // not outlive this call.
        tx.rollback().await?;
        return Ok(());
    };
    let ids: Vec<i64> = loose.iter().map(|r| r.id).collect();
    let body = Body {
        members: ids.clone(),
        ..Body::default()
    };
    let Some(digest) = outbox::enqueue(
        &mut tx,
        &outbox::New {
            channel: Channel::Telegram,
            kind: OutboxKind::Digest,
            dedupe: format!("digest:{}:{}", first.id, last.id),
            line_id: None,
            question_id: None,
            target: None,
            body: serde_json::to_value(&body).expect("a body serializes"),
            held: false,
            now,
        },
    )
    .await?
    else {
        tx.rollback().await?;
        return Ok(());
    };
    outbox::fold(&mut tx, digest, &ids).await?;
    tx.commit().await?;
    tracing::info!(digest, messages = ids.len(), "Catcher: the night's digest");
    Ok(())
}

/// Sends a message (or the edit of one); the JSON list of the message ids it went out as.
/// A message in several parts keeps the parts already sent across retries.
async fn deliver(
    sh: &Shared,
    bot: &Bot,
    chat: i64,
    row: &OutboxRow,
    last: &mut Option<Instant>,
) -> std::result::Result<String, CallError> {
    let w = crate::tell::words(&sh.cfg);
    let db = |e: crate::error::Error| CallError::Transient {
        method: "outbox",
        why: e.to_string(),
    };
    if row.kind == OutboxKind::Edit {
        let target = row
            .target
            .as_deref()
            .and_then(|t| t.parse::<i64>().ok())
            .unwrap_or(0);
        let mut c = sh.store.conn().await.map_err(db)?;
        let Some(m) = outbox::get(&mut c, target).await.map_err(db)? else {
            return Ok("[]".into());
        };
        let members = outbox::members(&mut c, m.id).await.map_err(db)?;
        drop(c);
        let parts = render(w, &m, &members);
        for (p, id) in parts.iter().zip(m.message_ids()) {
            let r = bot.edit(chat, id, &p.text, &p.keys).await;
            // From its answer: Telegram saw the call before it answered, so the next one
            // reaches it at least the gap later (timed from the request, a call slow to arrive
            // and a quick next one can land closer than the gap, and be refused with a 429).
            sent_now(sh, last).await;
            match r {
                // Deleted in the chat meanwhile: nothing left to change.
                Err(CallError::Refused { why, .. }) if why.contains("not found") => {}
                r => r?,
            }
        }
        return Ok("[]".into());
    }
    let members = if row.kind == OutboxKind::Digest {
        let mut c = sh.store.conn().await.map_err(db)?;
        outbox::members(&mut c, row.id).await.map_err(db)?
    } else {
        Vec::new()
    };
    let parts = render(w, row, &members);
    let mut ids = row.message_ids();
    for p in parts.iter().skip(ids.len()) {
        if let Some(at) = *last {
            let gap = Duration::from_millis(sh.cfg.catcher.as_ref().map_or(1000, |c| c.min_gap_ms));
            if at.elapsed() < gap {
                tokio::time::sleep(gap - at.elapsed()).await;
            }
        }
        let sent = bot.send(chat, &p.text, &p.keys).await;
        // The gap runs from the answer, as for an edit above.
        sent_now(sh, last).await;
        let id = sent?;
        ids.push(id);
        if ids.len() < parts.len() {
            // The parts sent so far are kept: a retry sends only the rest.
            let mut c = sh.store.conn().await.map_err(db)?;
            outbox::set_remote(
                &mut c,
                row.id,
                &serde_json::to_string(&ids).expect("ids serialize"),
            )
            .await
            .map_err(db)?;
        }
    }
    Ok(serde_json::to_string(&ids).expect("ids serialize"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Lang;

    fn row(id: i64, kind: OutboxKind, body: &Body) -> OutboxRow {
        OutboxRow {
            id,
            channel: Channel::Telegram,
            kind,
            dedupe: format!("d{id}"),
            line_id: None,
            question_id: None,
            target: None,
            body: serde_json::to_string(body).unwrap(),
            state: OutboxState::Pending,
            attempts: 0,
            next_at: 0,
            last_error: None,
            held: false,
            digest_id: None,
            resolved: None,
            remote_id: None,
            created_at: 0,
            sent_at: None,
        }
    }

    fn question(text: &str, options: usize) -> Body {
        Body {
            text: text.into(),
            buttons: (0..options)
                .map(|i| crate::tell::Button {
                    text: format!("option {i}"),
                    does: Does::Answer(i),
                })
                .collect(),
            members: Vec::new(),
        }
    }

    #[test]
    fn buttons_carry_their_row_and_fit_in_sixty_four_bytes() {
        let w = Words(Lang::En);
        let r = row(i64::MAX, OutboxKind::Question, &question("q?", 12));
        let parts = render(w, &r, &[]);
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].keys.len(), 12);
        assert_eq!(parts[0].keys[11][0].data, format!("q:{}:11", i64::MAX));
        assert!(
            parts[0]
                .keys
                .iter()
                .all(|k| k[0].data.len() <= text::CALLBACK_MAX)
        );
    }

    #[test]
    fn a_resolved_message_shows_what_became_of_it_and_loses_its_buttons() {
        let w = Words(Lang::Ru);
        let mut r = row(7, OutboxKind::Question, &question("q?", 2));
        r.resolved = Some(w.answered("option 1"));
        let parts = render(w, &r, &[]);
        assert!(parts[0].keys.is_empty());
        assert!(
            parts[0].text.ends_with("<i>→ Ответ: option 1</i>"),
            "{}",
            parts[0].text
        );
    }

    #[test]
    fn a_digest_numbers_its_messages_and_keeps_each_ones_buttons() {
        let w = Words(Lang::En);
        let members = vec![
            row(
                1,
                OutboxKind::Ready,
                &Body {
                    text: "ready".into(),
                    buttons: vec![crate::tell::Button {
                        text: "Accept".into(),
                        does: Does::Accept,
                    }],
                    members: Vec::new(),
                },
            ),
            row(2, OutboxKind::Question, &question("q?", 2)),
            row(
                3,
                OutboxKind::RolledBack,
                &Body {
                    text: "rolled back".into(),
                    ..Body::default()
                },
            ),
        ];
        let d = row(4, OutboxKind::Digest, &Body::default());
        let parts = render(w, &d, &members);
        assert_eq!(parts.len(), 1);
        let t = &parts[0].text;
        assert!(
            t.contains("(3)") && t.contains("1. ready") && t.contains("3. rolled back"),
            "{t}"
        );
        let data: Vec<&str> = parts[0].keys.iter().map(|k| k[0].data.as_str()).collect();
        assert_eq!(data, ["a:1", "q:2:0", "q:2:1"]);
        assert_eq!(parts[0].keys[1][0].text, "2. option 0");
    }

    #[test]
    fn a_busy_nights_digest_goes_in_parts_below_the_limit() {
        let w = Words(Lang::Ru);
        let long = "строка текста вопроса\n".repeat(40);
        let members: Vec<OutboxRow> = (1..=30)
            .map(|i| row(i, OutboxKind::Question, &question(&long, 3)))
            .collect();
        let d = row(99, OutboxKind::Digest, &Body::default());
        let parts = render(w, &d, &members);
        assert!(parts.len() > 3, "{}", parts.len());
        for p in &parts {
            assert!(text::units(&p.text) <= text::PART_MAX);
            assert!(p.keys.len() <= 100);
        }
        // Every question's three buttons are somewhere, once.
        let keys: usize = parts.iter().map(|p| p.keys.len()).sum();
        assert_eq!(keys, 90);
        // Rendering is stable: an edit lines up with the parts sent.
        assert_eq!(render(w, &d, &members), parts);
    }

    #[test]
    fn backoff_doubles_to_five_minutes() {
        assert_eq!(backoff(1), Duration::from_secs(1));
        assert_eq!(backoff(3), Duration::from_secs(4));
        assert_eq!(backoff(10), Duration::from_secs(300));
        assert_eq!(backoff(1000), Duration::from_secs(300));
    }
}
