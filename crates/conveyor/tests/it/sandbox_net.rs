//! The sandbox's way out (issue 34): the daemon's proxy on a Unix socket, the API forward, and
//! `conveyord bridge` piping the sandbox's loopback to them; at the end the whole path with
//! `bwrap --unshare-net`, curl, and the real CLI against the mock. Real sockets on 127.0.0.1
//! only: nothing here needs a network outside the machine (a refused name is never resolved).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use conveyor::clock::ManualClock;
use conveyor::sandbox::{ApiForward, Egress, ProxyBuilder, Refusal};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UnixStream};
use tokio_util::sync::CancellationToken;

use crate::support::{Mock, claude_bin, cli_env};

const RUN: i64 = 42;
const AT_MS: i64 = 1_764_806_400_000;

// ---------------------------------------------------------------------------------------------
// Servers the proxy connects to

/// A loopback HTTP/1.1 server that answers every request with `hello <path>` and keeps the
/// connection for more, unless the request said `Connection: close` (as real servers do).
/// It keeps every request head it read and counts connections.
struct Web {
    port: u16,
    heads: Arc<Mutex<Vec<String>>>,
    conns: Arc<Mutex<usize>>,
}

impl Web {
    async fn start() -> Web {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let heads = Arc::new(Mutex::new(Vec::new()));
        let conns = Arc::new(Mutex::new(0));
        let (h, c) = (heads.clone(), conns.clone());
        tokio::spawn(async move {
            loop {
                let (mut s, _) = listener.accept().await.unwrap();
                *c.lock().unwrap() += 1;
                let h = h.clone();
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    loop {
                        let Some(end) = read_until_blank_line(&mut s, &mut buf).await else {
                            return;
                        };
                        let head = String::from_utf8(buf.drain(..end).collect()).unwrap();
                        h.lock().unwrap().push(head.clone());
                        let path = head.split(' ').nth(1).unwrap().to_string();
                        let body = format!("hello {path}");
                        let reply = format!(
                            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n{body}",
                            body.len()
                        );
                        s.write_all(reply.as_bytes()).await.unwrap();
                        if head
                            .to_ascii_lowercase()
                            .contains("\r\nconnection: close\r\n")
                        {
                            return;
                        }
                    }
                });
            }
        });
        Web { port, heads, conns }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }

    fn conns(&self) -> usize {
        *self.conns.lock().unwrap()
    }
}

/// Reads into `buf` until it holds a blank line; the index after it. `None` at EOF first.
async fn read_until_blank_line<R: AsyncReadExt + Unpin>(
    r: &mut R,
    buf: &mut Vec<u8>,
) -> Option<usize> {
    loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            return Some(i + 4);
        }
        if r.read_buf(buf).await.ok()? == 0 {
            return None;
        }
    }
}

/// A loopback server that sends back every byte it gets.
async fn echo_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let (s, _) = listener.accept().await.unwrap();
            tokio::spawn(async move {
                let (mut r, mut w) = s.into_split();
                let _ = tokio::io::copy(&mut r, &mut w).await;
                let _ = w.shutdown().await;
            });
        }
    });
    port
}

// ---------------------------------------------------------------------------------------------
// The proxy under test

/// A run's proxy in a temp folder, its refusals collected, its clock standing at [`AT_MS`].
struct Net {
    dir: tempfile::TempDir,
    socket: PathBuf,
    refusals: Arc<Mutex<Vec<Refusal>>>,
    cancel: CancellationToken,
    served: Option<tokio::task::JoinHandle<()>>,
}

impl Net {
    async fn start(api: &str, allow: &[&str]) -> Net {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("proxy.sock");
        let refusals = Arc::new(Mutex::new(Vec::new()));
        let r = refusals.clone();
        let proxy = ProxyBuilder::new(
            RUN,
            Egress::new(Some(api), allow).unwrap(),
            Arc::new(ManualClock::new(AT_MS)),
        )
        .on_refusal(move |refusal| r.lock().unwrap().push(refusal))
        .bind(&socket)
        .unwrap();
        let cancel = CancellationToken::new();
        let served = tokio::spawn(proxy.serve(cancel.clone()));
        Net {
            dir,
            socket,
            refusals,
            cancel,
            served: Some(served),
        }
    }

    fn refusals(&self) -> Vec<Refusal> {
        self.refusals.lock().unwrap().clone()
    }

    /// Stops the proxy and waits until it has.
    async fn stop(&mut self) {
        self.cancel.cancel();
        if let Some(s) = self.served.take() {
            s.await.unwrap();
        }
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

fn refusal(host: &str, port: u16, method: &str) -> Refusal {
    Refusal {
        run_id: RUN,
        host: host.into(),
        port,
        at_ms: AT_MS,
        method: method.into(),
    }
}

/// Sends `request` on a new connection to `socket` and reads until the other side closes
/// (within 10 s: a proxy that keeps the connection open fails the test).
async fn exchange(socket: &Path, request: &str) -> String {
    let mut s = UnixStream::connect(socket).await.unwrap();
    s.write_all(request.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out))
        .await
        .expect("the connection was not closed after the response")
        .unwrap();
    String::from_utf8(out).unwrap()
}

fn get(url: &str) -> String {
    format!("GET {url} HTTP/1.1\r\nHost: x\r\nProxy-Connection: keep-alive\r\n\r\n")
}

const FORBIDDEN: &str = "HTTP/1.1 403 Forbidden\r\n";

#[tokio::test]
async fn the_proxy_admits_the_api_and_refuses_other_loopback_ports_and_unlisted_names() {
    let api = Web::start().await;
    let other = Web::start().await;
    let mut net = Net::start(&api.url(), &["registry.npmjs.org"]).await;

    let ok = exchange(&net.socket, &get(&format!("{}/v1/models?x=1", api.url()))).await;
    assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
    assert!(ok.ends_with("\r\n\r\nhello /v1/models?x=1"), "{ok}");
    let head = &api.heads()[0];
    assert!(
        head.starts_with("GET /v1/models?x=1 HTTP/1.1\r\n"),
        "{head}"
    );
    assert!(
        head.contains(&format!("\r\nHost: 127.0.0.1:{}\r\n", api.port)),
        "{head}"
    );
    assert!(
        !head.to_ascii_lowercase().contains("proxy-connection"),
        "{head}"
    );

    let other_port = other.port;
    for (request, host, port, method) in [
        (
            get(&format!("{}/", other.url())),
            "127.0.0.1",
            other_port,
            "GET",
        ),
        (
            format!("CONNECT 127.0.0.1:{other_port} HTTP/1.1\r\n\r\n"),
            "127.0.0.1",
            other_port,
            "CONNECT",
        ),
        (
            format!("CONNECT localhost:{} HTTP/1.1\r\n\r\n", api.port),
            "localhost",
            api.port,
            "CONNECT",
        ),
        (
            "CONNECT example.invalid:443 HTTP/1.1\r\n\r\n".into(),
            "example.invalid",
            443,
            "CONNECT",
        ),
        (
            get("http://example.invalid/x"),
            "example.invalid",
            80,
            "GET",
        ),
        (
            "CONNECT [::1]:8080 HTTP/1.1\r\n\r\n".into(),
            "::1",
            8080,
            "CONNECT",
        ),
    ] {
        let answer = exchange(&net.socket, &request).await;
        assert!(answer.starts_with(FORBIDDEN), "{request}: {answer}");
        let shown = if host.contains(':') {
            format!("[{host}]")
        } else {
            host.to_string()
        };
        assert!(
            answer.ends_with(&format!(
                "\r\n\r\nconveyor: {shown}:{port} is not allowed for this project"
            )),
            "{answer}"
        );
        assert_eq!(net.refusals().last(), Some(&refusal(host, port, method)));
    }
    assert_eq!(net.refusals().len(), 6);
    assert_eq!(other.conns(), 0, "a refused destination was connected to");
    assert_eq!(api.conns(), 1);

    let bad = exchange(&net.socket, "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n").await;
    assert!(bad.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{bad}");
    assert_eq!(net.refusals().len(), 6, "a malformed request is no refusal");

    net.stop().await;
    assert!(!net.socket.exists(), "the socket file is left behind");
    assert!(UnixStream::connect(&net.socket).await.is_err());
}

#[tokio::test]
async fn a_listed_name_that_resolves_to_loopback_is_refused() {
    let api = Web::start().await;
    // The resolver reads `127.1` as 127.0.0.1 (inet_aton's short form), as a DNS name pointing
    // at loopback would; listed, it passes the policy and must fail at its addresses.
    let net = Net::start(&api.url(), &["127.1"]).await;
    let answer = exchange(&net.socket, &get(&format!("http://127.1:{}/", api.port))).await;
    assert!(answer.starts_with(FORBIDDEN), "{answer}");
    assert_eq!(net.refusals(), vec![refusal("127.1", api.port, "GET")]);
    assert_eq!(api.conns(), 0);
}

#[tokio::test]
async fn connect_tunnels_bytes_both_ways_unchanged() {
    let port = echo_server().await;
    let net = Net::start(&format!("http://127.0.0.1:{port}"), &[]).await;
    let mut s = UnixStream::connect(&net.socket).await.unwrap();
    // Every byte value, and more than a socket buffer holds, so both directions run at once.
    let data: Vec<u8> = (0..(1 << 20)).map(|i: u32| (i % 251) as u8).collect();
    // The first bytes follow the head in the same write: they must not be lost.
    let mut first =
        format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n").into_bytes();
    first.extend_from_slice(&data[..1000]);
    s.write_all(&first).await.unwrap();
    let (mut r, mut w) = s.into_split();
    let rest = data[1000..].to_vec();
    let writer = tokio::spawn(async move {
        w.write_all(&rest).await.unwrap();
        w.shutdown().await.unwrap();
    });
    let mut got = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), r.read_to_end(&mut got))
        .await
        .expect("the tunnel did not end after the client's")
        .unwrap();
    writer.await.unwrap();
    let established = b"HTTP/1.1 200 Connection established\r\n\r\n";
    assert!(
        got.starts_with(established),
        "{:?}",
        String::from_utf8_lossy(&got[..60.min(got.len())])
    );
    assert!(
        got[established.len()..] == data[..],
        "the bytes came back changed"
    );
    assert!(net.refusals().is_empty());
}

#[tokio::test]
async fn a_plain_request_is_answered_with_close_and_the_connection_ends() {
    let api = Web::start().await;
    let net = Net::start(&api.url(), &[]).await;
    let one = exchange(&net.socket, &get(&format!("{}/one", api.url()))).await;
    assert!(one.contains("\r\nConnection: close\r\n"), "{one}");
    assert!(!one.contains("Keep-Alive"), "{one}");
    assert!(one.ends_with("hello /one"), "{one}");
    let heads = api.heads();
    assert!(heads[0].contains("\r\nConnection: close\r\n"), "{heads:?}");
    assert!(!heads[0].contains("keep-alive"), "{heads:?}");

    // A client that waits for the first response, then sends its second on the same
    // connection, finds it closed after the first: it reconnects, and that one works.
    let mut s = UnixStream::connect(&net.socket).await.unwrap();
    s.write_all(get(&format!("{}/three", api.url())).as_bytes())
        .await
        .unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out))
        .await
        .expect("the proxy kept the connection")
        .unwrap();
    assert!(String::from_utf8_lossy(&out).ends_with("hello /three"));
    let again = s
        .write_all(get(&format!("{}/four", api.url())).as_bytes())
        .await;
    let mut more = Vec::new();
    let read = s.read_to_end(&mut more).await;
    assert!(
        again.is_err() || read.is_err() || more.is_empty(),
        "answered on a closed connection"
    );
    let four = exchange(&net.socket, &get(&format!("{}/four", api.url()))).await;
    assert!(four.ends_with("hello /four"), "{four}");
    assert_eq!(api.conns(), 3);
    assert_eq!(api.heads().len(), 3);
}

#[tokio::test]
async fn the_api_forward_pipes_to_the_api_whatever_the_host_header_says() {
    let api = Web::start().await;
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("api.sock");
    let egress = Egress::new(Some(&api.url()), &[] as &[&str]).unwrap();
    let forward = ApiForward::bind(&socket, egress.api().clone()).unwrap();
    let cancel = CancellationToken::new();
    let served = tokio::spawn(forward.serve(cancel.clone()));
    let answer = exchange(
        &socket,
        "GET /v1/messages HTTP/1.1\r\nHost: evil.example:80\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(answer.ends_with("hello /v1/messages"), "{answer}");
    assert!(
        api.heads()[0].contains("Host: evil.example:80"),
        "the bytes were not passed as sent"
    );
    cancel.cancel();
    served.await.unwrap();
    assert!(!socket.exists());
}

// ---------------------------------------------------------------------------------------------
// conveyord bridge

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn conveyord() -> tokio::process::Command {
    let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_conveyord"));
    // The host's own NO_PROXY (often naming 127.0.0.1) would keep curl off the proxy.
    c.env("RUST_LOG", "warn")
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .kill_on_drop(true);
    c
}

#[tokio::test]
async fn the_bridge_pipes_tcp_to_the_sockets_then_runs_the_command_and_returns_its_code() {
    let api = Web::start().await;
    let net = Net::start(&api.url(), &[]).await;
    let api_socket = net.dir.path().join("api.sock");
    let egress = Egress::new(Some(&api.url()), &[] as &[&str]).unwrap();
    let forward = ApiForward::bind(&api_socket, egress.api().clone()).unwrap();
    tokio::spawn(forward.serve(net.cancel.clone()));
    let (listen, fwd) = (free_port(), free_port());
    let script = format!(
        "curl -s -x http://127.0.0.1:{listen} {api}/via-proxy; echo; \
         curl -s -x http://127.0.0.1:{listen} http://example.invalid/; echo; \
         curl -s http://127.0.0.1:{fwd}/via-forward; echo; exit 7",
        api = api.url()
    );
    let out = conveyord()
        .args([
            "bridge",
            "--listen",
            &format!("127.0.0.1:{listen}"),
            "--socket",
        ])
        .arg(&net.socket)
        .args(["--forward", &format!("127.0.0.1:{fwd}"), "--forward-socket"])
        .arg(&api_socket)
        .args(["--", "sh", "-c", &script])
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(7),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout,
        "hello /via-proxy\nconveyor: example.invalid:80 is not allowed for this project\nhello /via-forward\n"
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(net.refusals(), vec![refusal("example.invalid", 80, "GET")]);
}

#[tokio::test]
async fn the_bridge_without_a_command_serves_until_killed() {
    let api = Web::start().await;
    let net = Net::start(&api.url(), &[]).await;
    let listen = free_port();
    let mut bridge = conveyord()
        .args([
            "bridge",
            "--listen",
            &format!("127.0.0.1:{listen}"),
            "--socket",
        ])
        .arg(&net.socket)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Ready is when the port takes a connection (what a shell in the sandbox waits for).
    let mut tcp = crate::support::wait_for(10, "the bridge to listen", || async {
        TcpStream::connect(("127.0.0.1", listen)).await.ok()
    })
    .await;
    tcp.write_all(get(&format!("{}/plain", api.url())).as_bytes())
        .await
        .unwrap();
    let mut out = String::new();
    tcp.read_to_string(&mut out).await.unwrap();
    assert!(out.ends_with("hello /plain"), "{out}");
    assert!(bridge.try_wait().unwrap().is_none(), "the bridge ended");
    bridge.kill().await.unwrap();
    let mut printed = String::new();
    bridge
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut printed)
        .await
        .unwrap();
    assert_eq!(printed, "", "the bridge printed on stdout");
}

// ---------------------------------------------------------------------------------------------
// The whole path: bwrap --unshare-net

/// `bwrap` with the run's own network (and user and PID) namespaces, the system read-only and
/// `dir` writable. The daemon requires bubblewrap (`[sandbox] mode = "required"`), so do its
/// tests.
fn bwrap(dir: &Path) -> tokio::process::Command {
    let bin = ["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("bwrap is not installed: install bubblewrap (apt/dnf/pacman: bubblewrap)");
    let mut c = tokio::process::Command::new(bin);
    c.args([
        "--die-with-parent",
        "--unshare-all",
        "--cap-drop",
        "ALL",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
    ])
    .arg("--bind")
    .arg(dir)
    .arg(dir)
    .env_remove("NO_PROXY")
    .env_remove("no_proxy")
    .kill_on_drop(true);
    c
}

#[tokio::test]
async fn curl_in_bwrap_gets_out_through_the_bridge_only_where_admitted() {
    let api = Web::start().await;
    let net = Net::start(&api.url(), &[]).await;
    let mut bwrap = bwrap(net.dir.path());
    let api_url = api.url();
    let script = format!(
        "curl -s -x http://127.0.0.1:3128 {api_url}/inside; echo; \
         curl -s -o /dev/null -w '%{{http_code}}\\n' -x http://127.0.0.1:3128 http://example.invalid/; \
         curl -s -x http://127.0.0.1:3128 https://example.invalid/ >/dev/null; echo \"https: $?\"; \
         curl -s {api_url}/direct >/dev/null; echo \"direct: $?\""
    );
    let out = bwrap
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_conveyord"))
        .args(["bridge", "--listen", "127.0.0.1:3128", "--socket"])
        .arg(&net.socket)
        .args(["--", "sh", "-c", &script])
        .env("RUST_LOG", "warn")
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // curl 56: the proxy refused the tunnel; 7: nothing listens on the sandbox's own loopback.
    assert_eq!(stdout, "hello /inside\n403\nhttps: 56\ndirect: 7\n");
    assert_eq!(
        net.refusals(),
        vec![
            refusal("example.invalid", 80, "GET"),
            refusal("example.invalid", 443, "CONNECT")
        ]
    );
    assert_eq!(api.heads().len(), 1);
}

/// The real CLI in bwrap against the mock. `forward`: the mock's port forwarded inside and
/// loopback left out of the proxy (`NO_PROXY`), as the runner will do it; otherwise every
/// request goes through the proxy in absolute form.
async fn claude_in_bwrap(forward: bool) -> (Vec<serde_json::Value>, Vec<Refusal>, usize) {
    let mock = Mock::start();
    let net = Net::start(&mock.url(), &[]).await;
    let mut bwrap = bwrap(net.dir.path());
    // Two requests at least: a tool call, then the answer.
    mock.script(
        "*",
        serde_json::json!({"1": [crate::support::bash("echo inside"), crate::support::text("through the bridge")]}),
    )
    .await;
    let home = net.dir.path().join("home");
    let work = net.dir.path().join("work");
    let tmp = net.dir.path().join("tmp");
    for d in [&home, &work, &tmp] {
        std::fs::create_dir_all(d).unwrap();
    }
    let mock_port = mock.url().rsplit(':').next().unwrap().to_string();
    let mut bridge: Vec<String> = vec!["bridge".into(), "--listen".into(), "127.0.0.1:3128".into()];
    bridge.extend(["--socket".into(), net.socket.display().to_string()]);
    if forward {
        let api_socket = net.dir.path().join("api.sock");
        let egress = Egress::new(Some(&mock.url()), &[] as &[&str]).unwrap();
        let f = ApiForward::bind(&api_socket, egress.api().clone()).unwrap();
        tokio::spawn(f.serve(net.cancel.clone()));
        bridge.extend([
            "--forward".into(),
            format!("127.0.0.1:{mock_port}"),
            "--forward-socket".into(),
            api_socket.display().to_string(),
        ]);
    }
    bwrap
        .arg("--chdir")
        .arg(&work)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_conveyord"));
    bwrap.args(&bridge).arg("--").arg(claude_bin());
    bwrap.args([
        "-p",
        "conveyor step 1 attempt 1 · author · line sbx \"net\"\nSay something.",
        "--output-format",
        "stream-json",
        "--verbose",
        "--allowedTools",
        "Bash",
    ]);
    let proxy = "http://127.0.0.1:3128";
    bwrap
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .envs(cli_env(&mock.url(), &home))
        .env("TMPDIR", &tmp)
        .env("RUST_LOG", "warn")
        .envs(["HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"].map(|k| (k, proxy)));
    if forward {
        bwrap.envs(["NO_PROXY", "no_proxy"].map(|k| (k, "localhost,127.0.0.1,::1")));
    }
    let out = tokio::time::timeout(Duration::from_secs(120), bwrap.output())
        .await
        .expect("claude in bwrap did not finish in 120 s")
        .unwrap();
    let events: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert!(
        out.status.success(),
        "claude in bwrap ended with {}: {}\n{events:#?}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = mock
        .log()
        .await
        .into_iter()
        .filter(|e| e["kind"] == "messages")
        .count();
    (events, net.refusals(), requests)
}

fn result_of(events: &[serde_json::Value]) -> &serde_json::Value {
    events
        .iter()
        .rfind(|e| e["type"] == "result")
        .unwrap_or_else(|| panic!("no result: {events:#?}"))
}

#[tokio::test]
async fn the_real_cli_in_bwrap_reaches_the_mock_through_the_proxy() {
    let (events, refusals, requests) = claude_in_bwrap(false).await;
    let result = result_of(&events);
    assert_eq!(result["result"], "through the bridge", "{result:#}");
    assert!(requests >= 2, "the mock saw {requests} requests");
    assert_eq!(refusals, vec![]);
}

#[tokio::test]
async fn the_real_cli_in_bwrap_reaches_the_mock_through_the_api_forward() {
    let (events, refusals, requests) = claude_in_bwrap(true).await;
    let result = result_of(&events);
    assert_eq!(result["result"], "through the bridge", "{result:#}");
    assert!(requests >= 2, "the mock saw {requests} requests");
    assert_eq!(refusals, vec![]);
}
