//! An OpenAI-compatible chat endpoint (`POST {base_url}/chat/completions`): Ollama, the
//! DeepSeek API and the like. The endpoint is stateless, so the transport keeps the message
//! history and sends all of it every step.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::contract::{Transport, TransportError};
use crate::config::OpenAiConfig;
use crate::exec::Cancel;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
struct Message {
    role: String,
    content: String,
}

#[derive(Serialize)]
struct ChatRequest<'a> {
    model: &'a str,
    messages: &'a [Message],
    stream: bool,
}

#[derive(Deserialize)]
struct ChatResponse {
    choices: Vec<Choice>,
}

#[derive(Deserialize)]
struct Choice {
    message: Message,
}

/// The HTTP transport with its conversation so far.
#[derive(Debug)]
pub struct OpenAi {
    config: OpenAiConfig,
    agent: ureq::Agent,
    history: Vec<Message>,
}

impl OpenAi {
    /// A transport with an empty history.
    pub fn new(config: OpenAiConfig) -> OpenAi {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(config.timeout))
            .timeout_connect(Some(Duration::from_secs(10)))
            .http_status_as_error(false)
            .build()
            .into();
        OpenAi {
            config,
            agent,
            history: Vec::new(),
        }
    }

    fn url(&self) -> String {
        format!("{}/chat/completions", self.config.base_url)
    }
}

impl OpenAi {
    /// One request with the given conversation; the history is not touched.
    fn complete(&self, url: &str, messages: &[Message]) -> Result<String, TransportError> {
        let unreachable = |e: ureq::Error| TransportError::Unreachable {
            url: url.to_owned(),
            message: e.to_string(),
        };
        let bad = |message: String| TransportError::BadResponse {
            url: url.to_owned(),
            message,
        };
        let body = ChatRequest {
            model: &self.config.model,
            messages,
            stream: false,
        };
        let mut req = self
            .agent
            .post(url)
            .header("Content-Type", "application/json");
        if let Some(var) = &self.config.api_key_env
            && let Ok(key) = std::env::var(var)
        {
            req = req.header("Authorization", format!("Bearer {key}"));
        }
        let reply = req.send_json(&body).map_err(unreachable)?;
        let status = reply.status().as_u16();
        let text = reply.into_body().read_to_string().map_err(unreachable)?;
        if !(200..300).contains(&status) {
            let body = crate::exec::tail(text.as_bytes(), 500);
            return Err(TransportError::Http {
                url: url.to_owned(),
                status,
                body,
            });
        }
        let parsed: ChatResponse = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        let answer = parsed
            .choices
            .into_iter()
            .next()
            .ok_or_else(|| bad("no choices".into()))?
            .message
            .content;
        if answer.trim().is_empty() {
            return Err(bad("empty answer".into()));
        }
        Ok(answer)
    }
}

impl Transport for OpenAi {
    fn send(
        &mut self,
        _n: usize,
        message: &str,
        cancel: &Cancel,
    ) -> Result<String, TransportError> {
        if cancel.is_cancelled() {
            return Err(TransportError::Cancelled);
        }
        let mut messages = self.history.clone();
        messages.push(Message {
            role: "user".into(),
            content: message.to_owned(),
        });
        let answer = self.complete(&self.url(), &messages)?;
        messages.push(Message {
            role: "assistant".into(),
            content: answer.clone(),
        });
        self.history = messages;
        Ok(answer)
    }
}
