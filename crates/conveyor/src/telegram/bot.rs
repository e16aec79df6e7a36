//! A bot scenario, step by step, over a [`Transport`]. What the bot says is read as a person
//! sees it: the chat as it is now. A message that is new since the last look, or one whose
//! text or buttons changed (an edit), is an event; an `expect` takes events in order until one
//! matches or its time is up. Nothing a bot says is ever run.

use std::collections::{HashMap, VecDeque};

use conveyor_core::telegram::{Action, DEFAULT_TIMEOUT, Scenario, expect_finding};

use super::TelegramError;
use super::transport::{Message, Transport};

/// What the runner has seen of the chat.
struct Seen {
    known: HashMap<i64, Message>,
    events: VecDeque<Message>,
}

impl Seen {
    /// Takes in the chat as it is now: new bot messages and changed ones become events.
    fn take(&mut self, chat: Vec<Message>) -> Vec<Message> {
        for m in chat.iter().filter(|m| m.from_bot) {
            if self.known.get(&m.id) != Some(m) {
                self.known.insert(m.id, m.clone());
                self.events.push_back(m.clone());
            }
        }
        chat
    }
}

/// Runs the scenario's steps against `bot`; the findings (empty: passed). The first failed
/// step ends the scenario: what follows it depends on it.
///
/// # Errors
/// The transport failed (not the bot: a bot that does not answer is a finding).
pub(super) async fn run<T: Transport>(
    t: &mut T,
    bot: &str,
    s: &Scenario,
) -> Result<Vec<String>, TelegramError> {
    // What was there before the scenario is history, not an answer.
    let mut seen = Seen {
        known: HashMap::new(),
        events: VecDeque::new(),
    };
    seen.take(t.chat(bot).await?);
    seen.events.clear();
    for (i, step) in s.steps.iter().enumerate() {
        let n = i + 1;
        match &step.action {
            Action::Send { text } => t.send(bot, text).await?,
            Action::Press { button } => {
                let chat = seen.take(t.chat(bot).await?);
                let found = chat.iter().rev().filter(|m| m.from_bot).find_map(|m| {
                    m.buttons
                        .iter()
                        .flatten()
                        .find(|b| &b.text == button)
                        .map(|b| (m.id, b.data.clone()))
                });
                let (id, data) = match found {
                    Some((id, Some(data))) => (id, data),
                    Some((_, None)) => {
                        return Ok(vec![format!(
                            "step {n}: the button «{button}» is a link or web-app button, not one to press"
                        )]);
                    }
                    None => {
                        let there: Vec<String> = chat
                            .iter()
                            .rev()
                            .filter(|m| m.from_bot)
                            .flat_map(|m| m.buttons.iter().flatten())
                            .map(|b| format!("«{}»", b.text))
                            .collect();
                        let there = if there.is_empty() {
                            "the bot's messages have no buttons".to_string()
                        } else {
                            format!("buttons there: {}", there.join(", "))
                        };
                        return Ok(vec![format!("step {n}: no button «{button}» ({there})")]);
                    }
                };
                if !t.press(bot, id, &data, DEFAULT_TIMEOUT).await? {
                    return Ok(vec![format!(
                        "step {n}: the bot did not answer the press of «{button}» \
                         (answerCallbackQuery) within {} s",
                        DEFAULT_TIMEOUT.as_secs()
                    )]);
                }
            }
            Action::Expect {
                pattern, timeout, ..
            } => {
                let deadline = tokio::time::Instant::now() + *timeout;
                let mut got: Option<String> = None;
                'wait: loop {
                    seen.take(t.chat(bot).await?);
                    while let Some(m) = seen.events.pop_front() {
                        if pattern.is_match(&m.text) {
                            break 'wait;
                        }
                        got = Some(m.text);
                    }
                    if tokio::time::Instant::now() >= deadline {
                        return Ok(vec![expect_finding(n, pattern, got.as_deref())]);
                    }
                    tokio::time::sleep(t.poll_every()).await;
                }
            }
            Action::OpenMiniapp { .. } | Action::Click { .. } | Action::Fill { .. } => {
                unreachable!("the parser keeps page steps out of bot scenarios")
            }
        }
    }
    Ok(Vec::new())
}
