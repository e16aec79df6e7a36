//! How a message reaches the model and its answer comes back.
//!
//! Two transports: Anton's Node bridge to the web chat (run as a subprocess with the flags it
//! already has) and an OpenAI-compatible HTTP endpoint (Ollama, the DeepSeek API). Both keep
//! the conversation: the bridge through the chat itself, the HTTP transport by resending the
//! history.

mod bridge;
mod contract;
mod openai;

pub use bridge::Bridge;
pub use contract::{Transport, TransportError};
pub use openai::OpenAi;

use crate::config::TransportConfig;

/// Builds the configured transport.
///
/// # Errors
/// [`TransportError::Io`] when the bridge's working folder cannot be made.
pub fn from_config(config: &TransportConfig) -> Result<Box<dyn Transport + Send>, TransportError> {
    Ok(match config {
        TransportConfig::Bridge(b) => Box::new(Bridge::new(b.clone())?),
        TransportConfig::OpenAi(o) => Box::new(OpenAi::new(o.clone())),
    })
}
