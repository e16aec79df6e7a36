//! Anton's presses and replies in the Catcher, by long polling `getUpdates` (the daemon may
//! sit behind NAT: nothing calls it). The offset is kept in SQLite after each update is
//! handled, so a restart neither loses a press nor takes one twice (an update handled just
//! before a crash comes again, and answering or accepting twice is refused the second time).
//! Only the configured chat is obeyed; a press is answered at once (its spinner stops), and
//! the message it came from is edited through the outbox to show what was done.

use std::sync::Arc;
use std::time::Duration;

use conveyor_api::OutboxKind;

use crate::error::Result;
use crate::state::Shared;
use crate::store::{self, outbox};
use crate::tell::telegram::{Bot, CallError, CallbackQuery, Message, Update};
use crate::tell::text::Words;

const OFFSET: &str = "telegram_offset";

/// Polls until shutdown (nothing without a `[catcher]`).
pub async fn run(sh: Arc<Shared>) {
    let Some(cc) = sh.cfg.catcher.clone() else {
        return;
    };
    let mut failures: i64 = 0;
    // The token is read once (again only while it cannot be), and one client keeps its
    // connection across the polls.
    let mut bot: Option<Bot> = None;
    loop {
        if sh.shutdown.is_cancelled() {
            return;
        }
        if bot.is_none() {
            match crate::config::read_secret(&cc.bot_token_file, "catcher.bot_token_file") {
                Ok(token) => bot = Some(Bot::new(&cc.api_base, &token)),
                Err(e) => tracing::warn!(error = %e, "the Catcher cannot read presses"),
            }
        }
        let wait = match &bot {
            Some(bot) => {
                let got = tokio::select! {
                    r = once(&sh, bot, cc.chat_id, cc.poll_secs) => r,
                    () = sh.shutdown.cancelled() => return,
                };
                match got {
                    Ok(()) => {
                        failures = 0;
                        Duration::ZERO
                    }
                    Err(Failed::Call(CallError::Later { after, .. })) => after,
                    Err(e) => {
                        failures += 1;
                        tracing::warn!(error = %e, "Catcher: getUpdates failed");
                        super::send::backoff(failures).min(Duration::from_secs(60))
                    }
                }
            }
            None => Duration::from_secs(60),
        };
        if !wait.is_zero() {
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = sh.shutdown.cancelled() => return,
            }
        }
    }
}

#[derive(Debug, thiserror::Error)]
enum Failed {
    #[error(transparent)]
    Call(#[from] CallError),
    #[error(transparent)]
    Db(#[from] crate::error::Error),
}

/// One long poll, and what it brought handled in order.
async fn once(sh: &Shared, bot: &Bot, chat: i64, timeout: u64) -> Result<(), Failed> {
    let offset = store::account::value(&mut *sh.store.conn().await?, OFFSET)
        .await?
        .and_then(|v| v.parse::<i64>().ok())
        .unwrap_or(0);
    for u in bot.updates(offset, timeout).await? {
        handle(sh, bot, chat, &u).await?;
        store::account::set_value(
            &mut *sh.store.conn().await?,
            OFFSET,
            Some(&(u.update_id + 1).to_string()),
        )
        .await?;
    }
    Ok(())
}

async fn handle(sh: &Shared, bot: &Bot, chat: i64, u: &Update) -> Result<(), Failed> {
    let w = crate::tell::words(&sh.cfg);
    if let Some(q) = &u.callback_query {
        let from = q.message.as_ref().map(|m| m.chat.id);
        if from != Some(chat) {
            // Not Anton's chat: not obeyed, not answered.
            tracing::warn!(
                update = u.update_id,
                chat = ?from,
                "Catcher: a press from another chat, ignored"
            );
            return Ok(());
        }
        let said = press(sh, w, q).await?;
        if let Err(e) = bot.answer_callback(&q.id, &said).await {
            // Too late to answer is no loss: what it did is done.
            tracing::warn!(error = %e, "Catcher: answerCallbackQuery failed");
        }
        return Ok(());
    }
    if let Some(m) = &u.message {
        if m.chat.id != chat {
            tracing::warn!(
                update = u.update_id,
                chat = m.chat.id,
                "Catcher: a message from another chat, ignored"
            );
            return Ok(());
        }
        reply(sh, bot, w, chat, m).await?;
    }
    Ok(())
}

/// A press: `q:<row>:<option>` answers the row's question, `a:<row>` accepts its line. What
/// the button's spinner says.
async fn press(sh: &Shared, w: Words, q: &CallbackQuery) -> Result<String> {
    let data = q.data.as_deref().unwrap_or("");
    let mut it = data.split(':');
    let (verb, row, option) = (it.next(), it.next(), it.next());
    let row = match row.and_then(|r| r.parse::<i64>().ok()) {
        Some(id) => outbox::get(&mut *sh.store.conn().await?, id).await?,
        None => None,
    };
    let Some(row) = row else {
        return Ok(w.refused("?"));
    };
    match (verb, option.and_then(|o| o.parse::<usize>().ok())) {
        (Some("q"), Some(i)) => {
            let Some(qid) = &row.question_id else {
                return Ok(w.refused("?"));
            };
            let Some(question) = store::questions::get(&mut *sh.store.conn().await?, qid).await?
            else {
                return Ok(w.refused("?"));
            };
            let Some(option) = question.said.options().get(i).cloned() else {
                return Ok(w.refused("?"));
            };
            Ok(
                match crate::line::answer::answer(sh, &question, &option).await? {
                    Ok(()) => {
                        tracing::info!(question = %qid, "Catcher: answered by a press");
                        w.answered(&option)
                    }
                    Err(refused) => w.refused(&refused.to_string()),
                },
            )
        }
        (Some("a"), None) => {
            let Some(line) = &row.line_id else {
                return Ok(w.refused("?"));
            };
            Ok(match crate::line::accept(sh, line).await? {
                Ok(()) => {
                    tracing::info!(line = %line, "Catcher: accepted by a press");
                    w.accepted()
                }
                Err(refused) => w.refused(&refused.to_string()),
            })
        }
        _ => Ok(w.refused("?")),
    }
}

/// A reply to a question's message answers it in Anton's own words; other messages are not
/// commands.
async fn reply(sh: &Shared, bot: &Bot, w: Words, chat: i64, m: &Message) -> Result<(), Failed> {
    let (Some(to), Some(text)) = (&m.reply_to_message, m.text.as_deref()) else {
        return Ok(());
    };
    if text.trim().is_empty() {
        return Ok(());
    }
    let rows = outbox::by_message(&mut *sh.store.conn().await?, to.message_id).await?;
    // The questions the message asked: its own, or a digest's.
    let mut asked = Vec::new();
    for r in rows {
        if r.kind == OutboxKind::Digest {
            asked.extend(
                outbox::members(&mut *sh.store.conn().await?, r.id)
                    .await?
                    .into_iter()
                    .filter(|m| m.kind == OutboxKind::Question),
            );
        } else if r.kind == OutboxKind::Question {
            asked.push(r);
        }
    }
    let open: Vec<_> = asked.iter().filter(|r| r.resolved.is_none()).collect();
    let target = match (open.as_slice(), asked.as_slice()) {
        ([one], _) => *one,
        ([], [one]) => one,
        ([], []) => return Ok(()),
        _ => {
            // Which question the words answer is not ours to guess.
            if let Err(e) = bot.send(chat, w.reply_ambiguous(), &[]).await {
                tracing::warn!(error = %e, "Catcher: could not say the reply was ambiguous");
            }
            return Ok(());
        }
    };
    let Some(qid) = &target.question_id else {
        return Ok(());
    };
    let Some(question) = store::questions::get(&mut *sh.store.conn().await?, qid).await? else {
        return Ok(());
    };
    match crate::line::answer::answer(sh, &question, text.trim()).await? {
        Ok(()) => tracing::info!(question = %qid, "Catcher: answered by a reply"),
        Err(refused) => {
            tracing::info!(question = %qid, %refused, "Catcher: a reply's answer was refused");
            if let Err(e) = bot.send(chat, &w.refused(&refused.to_string()), &[]).await {
                tracing::warn!(error = %e, "Catcher: could not say the answer was refused");
            }
        }
    }
    Ok(())
}
