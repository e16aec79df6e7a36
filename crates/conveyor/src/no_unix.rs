//! The sandbox is Linux's (bubblewrap, network namespaces, Unix sockets between them). pult
//! embeds the daemon on Windows too, where the sandbox is `off` by default (the preflight
//! warns): there these stand in for Unix sockets so the daemon compiles, and binding one fails
//! with a clear error instead of a run going out unconfined. A leaf: it reaches no other module
//! of the crate, so the sandbox and the Telegram checks can both use it without a circle.

use std::path::Path;

/// Never connected: [`UnixListener::bind`] fails first.
pub(crate) type UnixStream = tokio::net::TcpStream;

#[derive(Debug)]
pub(crate) struct UnixListener;

impl UnixListener {
    pub(crate) fn bind(_socket: &Path) -> std::io::Result<UnixListener> {
        Err(unsupported())
    }

    pub(crate) async fn accept(&self) -> std::io::Result<(UnixStream, ())> {
        std::future::pending().await
    }
}

pub(crate) fn unsupported() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "the sandbox's network needs Linux (Unix sockets, bubblewrap); set sandbox = \"off\" here",
    )
}
