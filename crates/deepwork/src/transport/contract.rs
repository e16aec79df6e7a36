//! What every transport promises: [`Transport`], the one call the loop makes per step (and
//! the two hints around it), and [`TransportError`], why a message got no answer. Below the
//! transports themselves, which implement it, and the folder's door, which picks one.

use std::time::Duration;

use crate::exec::Cancel;

/// Why a message got no answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The bridge (node) could not be started.
    #[error("cannot start {program}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The bridge file does not exist.
    #[error("bridge not found: {path}")]
    BridgeMissing {
        /// The configured path.
        path: String,
    },
    /// The bridge exited with a failure.
    #[error("bridge failed with {status}; its stderr ends with:\n{stderr}")]
    Failed {
        /// Exit code or signal.
        status: String,
        /// The tail of its stderr.
        stderr: String,
    },
    /// The bridge exited cleanly but wrote no answer file.
    #[error("bridge wrote no answer to {path}; its stderr ends with:\n{stderr}")]
    NoAnswer {
        /// The `--out` file.
        path: String,
        /// The tail of its stderr.
        stderr: String,
    },
    /// The answer is empty.
    #[error("bridge returned an empty answer in {path}; its stderr ends with:\n{stderr}")]
    EmptyAnswer {
        /// The `--out` file.
        path: String,
        /// The tail of its stderr.
        stderr: String,
    },
    /// No answer within the timeout; the bridge was stopped.
    #[error("no answer within {} s; the bridge was stopped; its stderr ends with:\n{stderr}", timeout.as_secs())]
    Timeout {
        /// The timeout.
        timeout: Duration,
        /// The tail of its stderr.
        stderr: String,
    },
    /// The run was cancelled while waiting.
    #[error("cancelled")]
    Cancelled,
    /// An HTTP endpoint answered with an error status.
    #[error("{url} answered {status}: {body}")]
    Http {
        /// The URL.
        url: String,
        /// The status.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// An HTTP endpoint could not be reached or the connection broke.
    #[error("cannot reach {url}: {message}")]
    Unreachable {
        /// The URL.
        url: String,
        /// What failed.
        message: String,
    },
    /// An HTTP endpoint answered something that is not a chat completion.
    #[error("{url} answered something unexpected: {message}")]
    BadResponse {
        /// The URL.
        url: String,
        /// What is wrong.
        message: String,
    },
    /// Local I/O around the transport (temporary files).
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
}

/// Something that carries one message of a chat and brings back the answer.
pub trait Transport {
    /// Sends the message of step `n` (1-based) and returns the answer text.
    ///
    /// # Errors
    /// See [`TransportError`].
    fn send(&mut self, n: usize, message: &str, cancel: &Cancel) -> Result<String, TransportError>;

    /// Step `n`'s message is certain to be sent, but is not ready yet: the transport may get
    /// ready for it meanwhile (the bridge starts its process, see [`Bridge`](crate::Bridge)). Called at most
    /// once per step, before [`Transport::send`] of that step; nothing by default.
    fn prepare(&mut self, n: usize) {
        let _ = n;
    }

    /// The prepared step will not be sent after all (the run failed or was cancelled): undo
    /// [`Transport::prepare`]. Nothing by default.
    fn discard(&mut self) {}
}
