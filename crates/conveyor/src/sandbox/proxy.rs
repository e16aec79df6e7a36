//! One run's way out of its network namespace: an HTTP forward proxy on a Unix socket the
//! sandbox gets bound in ([`Proxy`]), and for a loopback API base URL a second socket whose
//! connections go straight to the API ([`ApiForward`]).
//!
//! The proxy reads a request's head, asks [`conveyor_core::sandbox::admit`] and only then
//! resolves or connects anything, so a refused name (`example.invalid`) costs no DNS query. A
//! refusal is a `403` whose body names the host and port, and a [`Refusal`] handed to the
//! caller's callback with the caller's clock's time. An admitted name is resolved here, not in
//! the sandbox (which has no DNS), and its addresses are checked again: a listed name that
//! resolves to `127.0.0.1` or a private address is refused like the address itself. The API's
//! own name is exempt: the run's environment named it.
//!
//! `CONNECT` gets a tunnel that carries bytes both ways untouched (TLS, the CLI's keep-alive
//! inside it). A plain `http://` request goes on in origin form with `Connection: close` both
//! ways, one request per connection ([`conveyor_core::sandbox::head`] says why); a client that
//! keeps its connection for a second request finds it closed after the first response and
//! opens a new one.
//!
//! The API forward trusts nothing the client sends: the socket itself is the destination. Its
//! connections are piped to the API's address without reading a byte, so a forged `Host` header
//! reaches the API and nothing else.
//!
//! Both stop when their `CancellationToken` is cancelled: open connections are dropped and the
//! socket file is removed.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use conveyor_core::sandbox::head::{self, RequestHead, ResponseHead};
use conveyor_core::sandbox::net::{self, Admission, Egress, Host, Target};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
#[cfg(unix)]
use tokio::net::{UnixListener, UnixStream};

#[cfg(not(unix))]
use super::no_unix::{UnixListener, UnixStream};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::clock::Clock;
use crate::error::{Error, Result};

/// How long a client may take to send its request head.
const REQUEST_HEAD_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a server may take to start its response: a non-streamed API answer comes only
/// when the model is done, and the CLI itself waits 600 s (`X-Stainless-Timeout`).
const RESPONSE_HEAD_TIMEOUT: Duration = Duration::from_secs(600);
/// How long resolving and connecting to a destination may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// A destination the proxy refused: what the daemon records on the run's line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub run_id: i64,
    /// As the request wrote it (an IPv6 address without brackets).
    pub host: String,
    pub port: u16,
    /// The caller's clock at the refusal, milliseconds since the epoch.
    pub at_ms: i64,
    /// `CONNECT`, `GET`, `POST`…
    pub method: String,
}

type OnRefusal = Arc<dyn Fn(Refusal) + Send + Sync>;

/// The options of a [`Proxy`].
pub struct ProxyBuilder {
    run_id: i64,
    egress: Egress,
    clock: Arc<dyn Clock>,
    on_refusal: OnRefusal,
}

impl std::fmt::Debug for ProxyBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxyBuilder")
            .field("run_id", &self.run_id)
            .field("egress", &self.egress)
            .finish_non_exhaustive()
    }
}

/// A run's proxy, listening on its socket; [`Proxy::serve`] answers.
#[derive(Debug)]
pub struct Proxy {
    listener: UnixListener,
    socket: PathBuf,
    run: Arc<ProxyBuilder>,
}

impl ProxyBuilder {
    /// The proxy of run `run_id` with these destinations, its refusals timed by `clock`.
    pub fn new(run_id: i64, egress: Egress, clock: Arc<dyn Clock>) -> ProxyBuilder {
        ProxyBuilder {
            run_id,
            egress,
            clock,
            on_refusal: Arc::new(|_| {}),
        }
    }

    /// Called with every refusal, from the connection's task: keep it short (send it on a
    /// channel).
    pub fn on_refusal(mut self, f: impl Fn(Refusal) + Send + Sync + 'static) -> ProxyBuilder {
        self.on_refusal = Arc::new(f);
        self
    }

    /// Listens on `socket` (a file a killed daemon left there is replaced). The socket exists
    /// when this returns, so the sandbox can bind it in at once. Needs a tokio runtime.
    ///
    /// # Errors
    /// [`Error::Io`] naming the socket.
    pub fn bind(self, socket: &Path) -> Result<Proxy> {
        Ok(Proxy {
            listener: bind(socket)?,
            socket: socket.to_path_buf(),
            run: Arc::new(self),
        })
    }
}

impl Proxy {
    /// Answers connections until `cancel`, then removes the socket.
    pub async fn serve(self, cancel: CancellationToken) {
        let run = self.run;
        accept_until(self.listener, &self.socket, cancel, move |conn| {
            proxy_one(conn, run.clone())
        })
        .await;
    }
}

/// A socket whose every connection goes to the API's address, unread.
#[derive(Debug)]
pub struct ApiForward {
    listener: UnixListener,
    socket: PathBuf,
    api: Target,
}

impl ApiForward {
    /// Listens on `socket` for connections to `api` (`Egress::api`).
    ///
    /// # Errors
    /// [`Error::Io`] naming the socket.
    pub fn bind(socket: &Path, api: Target) -> Result<ApiForward> {
        Ok(ApiForward {
            listener: bind(socket)?,
            socket: socket.to_path_buf(),
            api,
        })
    }

    /// Pipes connections until `cancel`, then removes the socket.
    pub async fn serve(self, cancel: CancellationToken) {
        let api = Arc::new(self.api);
        accept_until(self.listener, &self.socket, cancel, move |mut conn| {
            let api = api.clone();
            async move {
                match connect(&api, true).await {
                    Ok(mut up) => {
                        let _ = tokio::io::copy_bidirectional(&mut conn, &mut up).await;
                    }
                    Err(e) => tracing::warn!(api = %api, error = %e, "the API forward cannot reach the API"),
                }
            }
        })
        .await;
    }
}

fn bind(socket: &Path) -> Result<UnixListener> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        // Only a socket is replaced: a path that names anything else is the caller's mistake.
        if std::fs::symlink_metadata(socket).is_ok_and(|m| m.file_type().is_socket()) {
            std::fs::remove_file(socket).map_err(|e| Error::io(socket, e))?;
        }
    }
    UnixListener::bind(socket).map_err(|e| Error::io(socket, e))
}

// Off Unix the listener is a stand-in with nothing to close (see `crate::no_unix`).
#[cfg_attr(not(unix), allow(clippy::drop_non_drop))]
async fn accept_until<F, Fut>(
    listener: UnixListener,
    socket: &Path,
    cancel: CancellationToken,
    handle: F,
) where
    F: Fn(UnixStream) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            () = cancel.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((conn, _)) => {
                    conns.spawn(handle(conn));
                }
                Err(e) => {
                    // Out of file descriptors and the like: the next accept may work.
                    tracing::warn!(socket = %socket.display(), error = %e, "accept failed");
                }
            },
            Some(_) = conns.join_next() => {}
        }
    }
    conns.shutdown().await;
    drop(listener);
    if let Err(e) = std::fs::remove_file(socket) {
        tracing::debug!(socket = %socket.display(), error = %e, "removing the proxy socket");
    }
}

/// Why a destination could not be reached.
#[derive(Debug, thiserror::Error)]
enum Unreachable {
    /// The name resolves to an address of the host's machine or network.
    #[error("{0} is a local address")]
    Local(std::net::IpAddr),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("no answer within {} s", CONNECT_TIMEOUT.as_secs())]
    Timeout,
}

/// Resolves (here, outside the sandbox) and connects. `trusted`: the API, whose addresses are
/// not checked.
async fn connect(t: &Target, trusted: bool) -> std::result::Result<TcpStream, Unreachable> {
    let attempt = async {
        let addrs: Vec<std::net::SocketAddr> = match &t.host {
            Host::Ip(ip) => vec![(*ip, t.port).into()],
            Host::Name(name) => tokio::net::lookup_host((name.as_str(), t.port))
                .await?
                .collect(),
        };
        // One local address among several refuses the name: the rest may be a decoy.
        if !trusted && let Some(a) = addrs.iter().find(|a| net::is_local(a.ip())) {
            return Err(Unreachable::Local(a.ip()));
        }
        let mut last = std::io::Error::other("the name has no address");
        for a in addrs {
            match TcpStream::connect(a).await {
                Ok(s) => return Ok(s),
                Err(e) => last = e,
            }
        }
        Err(last.into())
    };
    tokio::time::timeout(CONNECT_TIMEOUT, attempt)
        .await
        .unwrap_or(Err(Unreachable::Timeout))
}

/// Reads a message head from `r` into `buf` (which may hold more after it). `None` when the
/// peer closes first or takes too long.
async fn read_head<R: AsyncRead + Unpin>(
    r: &mut R,
    buf: &mut Vec<u8>,
    timeout: Duration,
) -> Option<std::result::Result<usize, head::HeadError>> {
    let read = async {
        loop {
            match head::head_end(buf) {
                Ok(Some(end)) => return Some(Ok(end)),
                Err(e) => return Some(Err(e)),
                Ok(None) => {}
            }
            match r.read_buf(buf).await {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
        }
    };
    tokio::time::timeout(timeout, read).await.ok().flatten()
}

/// A short plain-text answer that ends the connection.
async fn answer<W: AsyncWrite + Unpin>(w: &mut W, status: &str, body: &str) {
    let msg = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = w.write_all(msg.as_bytes()).await;
    let _ = w.shutdown().await;
}

async fn proxy_one(mut conn: UnixStream, run: Arc<ProxyBuilder>) {
    let mut buf = Vec::with_capacity(4096);
    let end = match read_head(&mut conn, &mut buf, REQUEST_HEAD_TIMEOUT).await {
        None => return,
        Some(Ok(end)) => end,
        Some(Err(e)) => {
            return answer(
                &mut conn,
                "431 Request Header Fields Too Large",
                &format!("conveyor: {e}"),
            )
            .await;
        }
    };
    let req = match RequestHead::parse(&buf[..end]) {
        Ok(r) => r,
        Err(e) => return answer(&mut conn, "400 Bad Request", &format!("conveyor: {e}")).await,
    };
    let port = req.destination.port;
    let refuse = |why: &dyn std::fmt::Display| {
        tracing::info!(run = run.run_id, host = %req.host, port, method = %req.method, %why, "refused a destination");
        (run.on_refusal)(Refusal {
            run_id: run.run_id,
            host: req.host.clone(),
            port,
            at_ms: run.clock.now_ms(),
            method: req.method.clone(),
        });
    };
    let admission = net::admit(&run.egress, &req.host, port);
    if let Admission::Refused(why) = admission {
        refuse(&format_args!("{why:?}"));
        return answer(
            &mut conn,
            "403 Forbidden",
            &net::refusal_text(&req.host, port),
        )
        .await;
    }
    let mut up = match connect(&req.destination, admission == Admission::Api).await {
        Ok(up) => up,
        Err(e @ Unreachable::Local(_)) => {
            refuse(&e);
            return answer(
                &mut conn,
                "403 Forbidden",
                &net::refusal_text(&req.host, port),
            )
            .await;
        }
        Err(e) => {
            tracing::info!(run = run.run_id, destination = %req.destination, error = %e, "cannot reach an admitted destination");
            let body = format!("conveyor: cannot reach {}: {e}", req.destination);
            return answer(&mut conn, "502 Bad Gateway", &body).await;
        }
    };
    tracing::debug!(run = run.run_id, destination = %req.destination, method = %req.method, "admitted");
    let rest = &buf[end..];
    match req.origin_form() {
        None => {
            let ok = conn
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .await;
            if ok.is_err() || up.write_all(rest).await.is_err() {
                return;
            }
            let _ = tokio::io::copy_bidirectional(&mut conn, &mut up).await;
        }
        Some(head) => {
            if up.write_all(&head).await.is_err() || up.write_all(rest).await.is_err() {
                return answer(
                    &mut conn,
                    "502 Bad Gateway",
                    "conveyor: the server closed the connection",
                )
                .await;
            }
            exchange(conn, up).await;
        }
    }
}

/// One plain request after its head went out: the body (whatever the client sends) up, the
/// response down with its head rewritten. Over when the response is: the server was told to
/// close, and a client that sends more only writes into a closing connection.
async fn exchange(conn: UnixStream, up: TcpStream) {
    let (mut cr, mut cw) = conn.into_split();
    let (mut ur, mut uw) = up.into_split();
    let upward = async {
        let _ = tokio::io::copy(&mut cr, &mut uw).await;
        let _ = uw.shutdown().await;
    };
    let downward = async {
        relay_response(&mut ur, &mut cw).await;
        let _ = cw.shutdown().await;
    };
    tokio::pin!(upward, downward);
    let mut up_done = false;
    loop {
        tokio::select! {
            () = &mut upward, if !up_done => up_done = true,
            () = &mut downward => break,
        }
    }
}

async fn relay_response<R, W>(ur: &mut R, cw: &mut W)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buf = Vec::with_capacity(4096);
    loop {
        let end = match read_head(ur, &mut buf, RESPONSE_HEAD_TIMEOUT).await {
            Some(Ok(end)) => end,
            _ => {
                return answer(
                    cw,
                    "502 Bad Gateway",
                    "conveyor: no response head from the server",
                )
                .await;
            }
        };
        let head = match ResponseHead::parse(&buf[..end]) {
            Ok(h) => h,
            Err(e) => {
                return answer(
                    cw,
                    "502 Bad Gateway",
                    &format!("conveyor: the server's response: {e}"),
                )
                .await;
            }
        };
        // `100 Continue` goes on as it came; the final head is rewritten.
        let out = if head.is_interim() {
            buf[..end].to_vec()
        } else {
            head.closing()
        };
        if cw.write_all(&out).await.is_err() {
            return;
        }
        buf.drain(..end);
        if !head.is_interim() {
            break;
        }
    }
    if cw.write_all(&buf).await.is_ok() {
        let _ = tokio::io::copy(ur, cw).await;
    }
}
