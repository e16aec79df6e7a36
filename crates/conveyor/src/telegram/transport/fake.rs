//! The loopback fake Telegram of the tests (`tests/fixtures/mock-telegram.mjs`): its Bot API
//! is what the bot under test polls, its `/test/*` endpoints what the user does.

use super::*;

/// The loopback fake Telegram of the tests: its `/test/*` endpoints are what the user does.
#[derive(Debug)]
pub struct Fake {
    http: reqwest::Client,
    base: String,
    chat: i64,
    bot: String,
}

impl Fake {
    /// Connects to the fake at `base` as the user of `chat`.
    ///
    /// # Errors
    /// The fake does not answer.
    pub async fn connect(base: &str, chat: i64) -> Result<Fake, TelegramError> {
        // The fake is on loopback: a proxy from the environment must not see the calls.
        let http = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(30))
            .build()
            .map_err(|e| fake_error(base, &e))?;
        let base = base.trim_end_matches('/').to_string();
        let me: Value = get(&http, &format!("{base}/test/bot")).await?;
        let bot = me["username"].as_str().unwrap_or_default().to_string();
        Ok(Fake {
            http,
            base,
            chat,
            bot,
        })
    }

    fn is_its_bot(&self, bot: &str) -> Result<(), TelegramError> {
        if same_bot(bot, &self.bot) {
            Ok(())
        } else {
            Err(TelegramError::Transport {
                what: format!("the fake Telegram at {}", self.base),
                message: format!("no bot {bot} there (its bot is @{})", self.bot),
            })
        }
    }

    async fn post(&self, path: &str, body: Value) -> Result<Value, TelegramError> {
        let url = format!("{}{path}", self.base);
        let r = self
            .http
            .post(&url)
            .json(&body)
            .send()
            .await
            .map_err(|e| fake_error(&url, &e))?;
        let status = r.status();
        let v: Value = r.json().await.map_err(|e| fake_error(&url, &e))?;
        if !status.is_success() {
            return Err(TelegramError::Transport {
                what: format!("POST {url}"),
                message: format!("{status}: {v}"),
            });
        }
        Ok(v)
    }
}

fn fake_error(what: &str, e: &reqwest::Error) -> TelegramError {
    TelegramError::Transport {
        what: what.to_string(),
        message: e.to_string(),
    }
}

async fn get(http: &reqwest::Client, url: &str) -> Result<Value, TelegramError> {
    let r = http
        .get(url)
        .send()
        .await
        .map_err(|e| fake_error(url, &e))?;
    let status = r.status();
    let v: Value = r.json().await.map_err(|e| fake_error(url, &e))?;
    if !status.is_success() {
        return Err(TelegramError::Transport {
            what: format!("GET {url}"),
            message: format!("{status}: {v}"),
        });
    }
    Ok(v)
}

/// A Bot API message as the fake stores it, as a [`Message`].
fn from_bot_api(m: &Value) -> Message {
    let buttons = m["reply_markup"]["inline_keyboard"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|row| {
                    row.as_array()
                        .into_iter()
                        .flatten()
                        .map(|b| Button {
                            text: b["text"].as_str().unwrap_or_default().to_string(),
                            data: b["callback_data"].as_str().map(str::to_string),
                        })
                        .collect()
                })
                .collect()
        })
        .unwrap_or_default();
    Message {
        id: m["message_id"].as_i64().unwrap_or_default(),
        from_bot: m["from"]["is_bot"].as_bool().unwrap_or(false),
        text: m["text"].as_str().unwrap_or_default().to_string(),
        buttons,
    }
}

impl Transport for Fake {
    async fn chat(&mut self, bot: &str) -> Result<Vec<Message>, TelegramError> {
        self.is_its_bot(bot)?;
        let v = get(
            &self.http,
            &format!("{}/test/messages?chat_id={}", self.base, self.chat),
        )
        .await?;
        Ok(v.as_array()
            .into_iter()
            .flatten()
            .map(from_bot_api)
            .collect())
    }

    async fn send(&mut self, bot: &str, text: &str) -> Result<(), TelegramError> {
        self.is_its_bot(bot)?;
        self.post("/test/reply", json!({"chat_id": self.chat, "text": text}))
            .await
            .map(drop)
    }

    async fn press(
        &mut self,
        bot: &str,
        id: i64,
        data: &str,
        timeout: Duration,
    ) -> Result<bool, TelegramError> {
        self.is_its_bot(bot)?;
        let pressed = self
            .post(
                "/test/press",
                json!({"chat_id": self.chat, "message_id": id, "data": data}),
            )
            .await?;
        let query = pressed["callback_query_id"].clone();
        // The user's app shows a spinner until the bot answers the query, or gives up.
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let sent = get(&self.http, &format!("{}/test/sent", self.base)).await?;
            let answered = sent.as_array().into_iter().flatten().any(|s| {
                s["method"].as_str() == Some("answerCallbackQuery")
                    && s["callback_query_id"] == query
            });
            if answered {
                return Ok(true);
            }
            if tokio::time::Instant::now() >= deadline {
                return Ok(false);
            }
            tokio::time::sleep(self.poll_every()).await;
        }
    }

    fn poll_every(&self) -> Duration {
        Duration::from_millis(100)
    }
}
