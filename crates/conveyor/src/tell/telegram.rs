//! A client of the Telegram Bot API: the five methods the Catcher uses. The bot's token is
//! part of every URL, so neither a URL nor a `reqwest` error with its URL is ever shown:
//! errors carry the method and Telegram's own description only.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

/// Why a call did not go through.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CallError {
    /// 429: try again after this long (`parameters.retry_after`).
    #[error("{method}: too many requests, retry after {}s", after.as_secs())]
    Later {
        method: &'static str,
        after: Duration,
    },
    /// The server or the network failed (5xx, a timeout, a refused connection): try again.
    #[error("{method}: {why}")]
    Transient { method: &'static str, why: String },
    /// Telegram refused it for good (a bad chat, bad markup, a bad token).
    #[error("{method}: {why}")]
    Refused { method: &'static str, why: String },
}

/// An inline keyboard button.
#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    pub text: String,
    pub data: String,
}

/// The bot.
#[derive(Debug, Clone)]
pub struct Bot {
    http: reqwest::Client,
    /// `{api_base}/bot{token}`: never logged.
    base: String,
}

/// One update from `getUpdates`, as far as the Catcher reads it.
#[derive(Debug, Clone, Deserialize)]
pub struct Update {
    pub update_id: i64,
    #[serde(default)]
    pub message: Option<Message>,
    #[serde(default)]
    pub callback_query: Option<CallbackQuery>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Message {
    pub message_id: i64,
    pub chat: Chat,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub reply_to_message: Option<Box<Message>>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Chat {
    pub id: i64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct CallbackQuery {
    pub id: String,
    #[serde(default)]
    pub message: Option<Message>,
    #[serde(default)]
    pub data: Option<String>,
}

#[derive(Deserialize)]
struct Reply {
    ok: bool,
    #[serde(default)]
    result: Value,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    parameters: Option<Parameters>,
}

#[derive(Deserialize)]
struct Parameters {
    #[serde(default)]
    retry_after: Option<u64>,
}

fn keyboard(keys: &[Vec<Key>]) -> Value {
    json!({
        "inline_keyboard": keys.iter().map(|row| row.iter().map(|k| json!({
            "text": k.text, "callback_data": k.data,
        })).collect::<Vec<_>>()).collect::<Vec<_>>()
    })
}

impl Bot {
    pub fn new(api_base: &str, token: &str) -> Bot {
        Bot {
            http: reqwest::Client::new(),
            base: format!("{}/bot{token}", api_base.trim_end_matches('/')),
        }
    }

    async fn call(
        &self,
        method: &'static str,
        body: Value,
        timeout: Duration,
    ) -> Result<Value, CallError> {
        let transient = |why: String| CallError::Transient { method, why };
        let res = self
            .http
            .post(format!("{}/{method}", self.base))
            .json(&body)
            .timeout(timeout)
            .send()
            .await
            // Without the URL: it holds the token.
            .map_err(|e| transient(e.without_url().to_string()))?;
        let status = res.status();
        let text = res
            .text()
            .await
            .map_err(|e| transient(e.without_url().to_string()))?;
        let reply: Option<Reply> = serde_json::from_str(&text).ok();
        if let Some(r) = &reply
            && r.ok
            && status.is_success()
        {
            return Ok(r.result.clone());
        }
        let why = reply
            .as_ref()
            .and_then(|r| r.description.clone())
            .unwrap_or_else(|| format!("HTTP {}", status.as_u16()));
        if status.as_u16() == 429 {
            let secs = reply
                .as_ref()
                .and_then(|r| r.parameters.as_ref())
                .and_then(|p| p.retry_after)
                .unwrap_or(1);
            return Err(CallError::Later {
                method,
                after: Duration::from_secs(secs.max(1)),
            });
        }
        if status.is_server_error() || reply.is_none() {
            return Err(transient(why));
        }
        Err(CallError::Refused { method, why })
    }

    /// `getMe`: the bot's `@username`.
    ///
    /// # Errors
    /// [`CallError`].
    pub async fn get_me(&self) -> Result<String, CallError> {
        let r = self
            .call("getMe", json!({}), Duration::from_secs(10))
            .await?;
        Ok(r.get("username")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string())
    }

    /// `sendMessage` in HTML parse mode; the message's id.
    ///
    /// # Errors
    /// [`CallError`].
    pub async fn send(&self, chat: i64, html: &str, keys: &[Vec<Key>]) -> Result<i64, CallError> {
        let mut body = json!({
            "chat_id": chat, "text": html, "parse_mode": "HTML",
            "link_preview_options": {"is_disabled": true},
        });
        if !keys.is_empty() {
            body["reply_markup"] = keyboard(keys);
        }
        let r = self
            .call("sendMessage", body, Duration::from_secs(30))
            .await?;
        r.get("message_id")
            .and_then(Value::as_i64)
            .ok_or(CallError::Transient {
                method: "sendMessage",
                why: "the answer has no message_id".into(),
            })
    }

    /// `editMessageText`; a message already showing this is no error.
    ///
    /// # Errors
    /// [`CallError`].
    pub async fn edit(
        &self,
        chat: i64,
        message_id: i64,
        html: &str,
        keys: &[Vec<Key>],
    ) -> Result<(), CallError> {
        let body = json!({
            "chat_id": chat, "message_id": message_id, "text": html, "parse_mode": "HTML",
            "reply_markup": keyboard(keys),
        });
        match self
            .call("editMessageText", body, Duration::from_secs(30))
            .await
        {
            Err(CallError::Refused { why, .. }) if why.contains("message is not modified") => {
                Ok(())
            }
            r => r.map(|_| ()),
        }
    }

    /// `answerCallbackQuery`: stops the button's spinner and shows `text` briefly.
    ///
    /// # Errors
    /// [`CallError`].
    pub async fn answer_callback(&self, id: &str, text: &str) -> Result<(), CallError> {
        let text: String = text.chars().take(200).collect();
        self.call(
            "answerCallbackQuery",
            json!({"callback_query_id": id, "text": text}),
            Duration::from_secs(10),
        )
        .await
        .map(|_| ())
    }

    /// `getUpdates` as a long poll of `timeout` seconds: the updates from `offset` on.
    ///
    /// # Errors
    /// [`CallError`].
    pub async fn updates(&self, offset: i64, timeout: u64) -> Result<Vec<Update>, CallError> {
        let r = self
            .call(
                "getUpdates",
                json!({"offset": offset, "timeout": timeout, "limit": 100,
                    "allowed_updates": ["message", "callback_query"]}),
                Duration::from_secs(timeout + 15),
            )
            .await?;
        serde_json::from_value(r).map_err(|e| CallError::Transient {
            method: "getUpdates",
            why: format!("unreadable updates: {e}"),
        })
    }
}
