//! The heads of HTTP/1 messages the daemon's proxy reads. A client in the sandbox asks the
//! proxy either for a tunnel (`CONNECT host:port HTTP/1.1`, every `https://` URL) or for a
//! plain request in absolute form (`GET http://host:port/path HTTP/1.1`, every `http://` URL,
//! the CLI's loopback base URL in the tests among them). [`RequestHead::parse`] reads which
//! destination is asked for, so [`super::net::admit`] can answer before anything is resolved.
//!
//! A plain request is sent on as one request per connection: its head is rewritten to origin
//! form with `Connection: close` ([`RequestHead::origin_form`]), and so is the response's head
//! ([`ResponseHead::closing`]). The proxy then only pipes bytes and never has to find where a
//! body ends to read a second request, and a keep-alive client (the CLI's) sees the close and
//! opens a new connection for its next request. `Host` is rewritten from the request's URL, as
//! RFC 9112 asks of a proxy: the agent cannot name one server in the URL and another in
//! `Host` to reach a virtual host that was never admitted.

use super::net::{EgressError, Target, parse_authority, split_host_port};

/// The most a head may take, request line and headers; a longer one is refused.
pub const MAX_HEAD: usize = 64 * 1024;

/// The headers that concern one connection, not the message (RFC 9110 §7.6.1), dropped when
/// a message crosses the proxy. `host` is set anew from the URL.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authorization",
    "proxy-authenticate",
    "te",
    "upgrade",
    "host",
];

/// What is wrong with a message head.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HeadError {
    /// No blank line within [`MAX_HEAD`] bytes.
    #[error("the head is longer than {MAX_HEAD} bytes")]
    TooLong,
    /// The request or status line is not `A B C` with single spaces, or not ASCII.
    #[error("malformed first line {0:?}")]
    FirstLine(String),
    /// Not `HTTP/1.0` or `HTTP/1.1`.
    #[error("unsupported version {0:?}")]
    Version(String),
    /// A method that is not an HTTP token.
    #[error("malformed method {0:?}")]
    Method(String),
    /// A request target that is neither `host:port` after CONNECT nor an absolute `http://`
    /// URL: an origin-form `/path` (the client did not know it spoke to a proxy), `https://`
    /// (a proxy is asked for TLS with CONNECT), a user part, a fragment.
    #[error("request target {target:?} {why}")]
    Target { target: String, why: &'static str },
    /// The host or port in the target does not read.
    #[error(transparent)]
    Authority(#[from] EgressError),
    /// A header line without a colon, with a name that is not a token, or folded.
    #[error("malformed header line {0:?}")]
    Header(String),
    /// A status that is not three digits.
    #[error("malformed status {0:?}")]
    Status(String),
}

/// A request as the proxy reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestHead {
    pub method: String,
    /// Where the request asks to go.
    pub destination: Target,
    /// The host as the request wrote it, without brackets: what a refusal records.
    pub host: String,
    /// For a plain request, the origin-form target (`/path?query`); `None` for CONNECT.
    pub path: Option<String>,
    /// `HTTP/1.0` or `HTTP/1.1`.
    pub version: String,
    headers: Vec<(String, Vec<u8>)>,
}

/// A response as the proxy reads it from the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseHead {
    pub version: String,
    pub status: u16,
    pub reason: Vec<u8>,
    headers: Vec<(String, Vec<u8>)>,
}

/// Where the head in `buf` ends (the index after its blank line), if it is complete. A bare
/// `\n` ends a line too (RFC 9112 §2.2 lets a recipient accept it).
///
/// # Errors
/// [`HeadError::TooLong`] when no blank line comes within [`MAX_HEAD`] bytes.
pub fn head_end(buf: &[u8]) -> Result<Option<usize>, HeadError> {
    let mut prev_newline = false;
    for (i, &b) in buf.iter().enumerate().take(MAX_HEAD) {
        match b {
            b'\n' if prev_newline => return Ok(Some(i + 1)),
            b'\n' => prev_newline = true,
            b'\r' => {}
            _ => prev_newline = false,
        }
    }
    if buf.len() >= MAX_HEAD {
        Err(HeadError::TooLong)
    } else {
        Ok(None)
    }
}

/// The head's lines without their ends, the blank one excluded.
fn lines(head: &[u8]) -> impl Iterator<Item = &[u8]> {
    head.split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .take_while(|l| !l.is_empty())
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn is_token(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(is_tchar)
}

fn headers<'a>(lines: impl Iterator<Item = &'a [u8]>) -> Result<Vec<(String, Vec<u8>)>, HeadError> {
    let lossy = |l: &[u8]| String::from_utf8_lossy(l).into_owned();
    lines
        .map(|l| {
            if l.starts_with(b" ") || l.starts_with(b"\t") {
                return Err(HeadError::Header(lossy(l)));
            }
            let colon = l
                .iter()
                .position(|&b| b == b':')
                .ok_or_else(|| HeadError::Header(lossy(l)))?;
            let name = std::str::from_utf8(&l[..colon])
                .ok()
                .filter(|n| is_token(n))
                .ok_or_else(|| HeadError::Header(lossy(l)))?;
            let value = l[colon + 1..].trim_ascii();
            // A lone CR or a NUL in a value reads differently to different servers.
            if value.iter().any(|&b| b == b'\r' || b == 0) {
                return Err(HeadError::Header(lossy(l)));
            }
            Ok((name.to_string(), value.to_vec()))
        })
        .collect()
}

/// Splits a first line into its three parts, single spaces between.
fn three(line: &[u8]) -> Result<(&str, &str, &str), HeadError> {
    let bad = || HeadError::FirstLine(String::from_utf8_lossy(line).into_owned());
    let text = std::str::from_utf8(line).map_err(|_| bad())?;
    let mut parts = text.splitn(3, ' ');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(a), Some(b), Some(c)) if !a.is_empty() && !b.is_empty() && !c.is_empty() => {
            Ok((a, b, c))
        }
        _ => Err(bad()),
    }
}

fn version(v: &str) -> Result<String, HeadError> {
    match v {
        "HTTP/1.1" | "HTTP/1.0" => Ok(v.to_string()),
        _ => Err(HeadError::Version(v.to_string())),
    }
}

impl RequestHead {
    /// Reads a proxy request's head (up to and including its blank line, or only its lines).
    ///
    /// # Errors
    /// [`HeadError`] naming what does not read.
    pub fn parse(head: &[u8]) -> Result<RequestHead, HeadError> {
        let mut ls = lines(head);
        let first = ls.next().unwrap_or_default();
        let (method, target, v) = three(first)?;
        let version = version(v)?;
        if !is_token(method) {
            return Err(HeadError::Method(method.to_string()));
        }
        let bad = |why| HeadError::Target {
            target: target.to_string(),
            why,
        };
        let (authority, path) = if method.eq_ignore_ascii_case("CONNECT") {
            if target.contains(['/', '@', '?', '#']) {
                return Err(bad("is not `host:port`"));
            }
            (target, None)
        } else {
            let (scheme, rest) = match target.split_once("://") {
                Some(split) => split,
                None if target.starts_with('/') => {
                    return Err(bad("is a path: the proxy takes absolute URLs"));
                }
                None => return Err(bad("is not an absolute http:// URL")),
            };
            if scheme.eq_ignore_ascii_case("https") {
                return Err(bad("is https: ask for a tunnel with CONNECT"));
            }
            if !scheme.eq_ignore_ascii_case("http") {
                return Err(bad("is not an http:// URL"));
            }
            let end = rest.find(['/', '?']).unwrap_or(rest.len());
            let (authority, path) = rest.split_at(end);
            if authority.contains('@') {
                return Err(bad("carries a user name"));
            }
            if path.contains('#') {
                return Err(bad("carries a fragment"));
            }
            let path = match path.strip_prefix('?') {
                Some(_) => format!("/{path}"),
                None if path.is_empty() => "/".to_string(),
                None => path.to_string(),
            };
            (authority, Some(path))
        };
        let destination = parse_authority(authority, path.as_ref().map(|_| 80))?;
        let host = split_host_port(authority).0;
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        Ok(RequestHead {
            method: method.to_string(),
            destination,
            host: host.to_string(),
            path,
            version,
            headers: headers(ls)?,
        })
    }

    pub fn is_connect(&self) -> bool {
        self.path.is_none()
    }

    /// The head to send to the server of a plain request: origin form, the hop-by-hop headers
    /// dropped, `Host` from the URL, `Connection: close`. `None` for CONNECT.
    pub fn origin_form(&self) -> Option<Vec<u8>> {
        let path = self.path.as_ref()?;
        let mut out = format!("{} {path} {}\r\n", self.method, self.version).into_bytes();
        let host = match self.destination.port {
            80 => host_for_header(&self.destination),
            _ => self.destination.to_string(),
        };
        out.extend_from_slice(format!("Host: {host}\r\n").as_bytes());
        write_headers(&mut out, &self.headers);
        Some(out)
    }
}

/// The `Host` value without the default port.
fn host_for_header(t: &Target) -> String {
    let full = t.to_string();
    full.rsplit_once(':')
        .map_or(full.clone(), |(h, _)| h.to_string())
}

/// The headers that cross, those a `Connection` header names included in the drop, then
/// `Connection: close` and the blank line.
fn write_headers(out: &mut Vec<u8>, headers: &[(String, Vec<u8>)]) {
    let named: Vec<String> = headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("connection"))
        .flat_map(|(_, v)| {
            String::from_utf8_lossy(v)
                .split(',')
                .map(|t| t.trim().to_ascii_lowercase())
                .collect::<Vec<_>>()
        })
        .collect();
    for (name, value) in headers {
        let lower = name.to_ascii_lowercase();
        if HOP_BY_HOP.contains(&lower.as_str()) || named.contains(&lower) {
            continue;
        }
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"Connection: close\r\n\r\n");
}

impl ResponseHead {
    /// Reads a server's response head.
    ///
    /// # Errors
    /// [`HeadError`] naming what does not read.
    pub fn parse(head: &[u8]) -> Result<ResponseHead, HeadError> {
        let mut ls = lines(head);
        let first = ls.next().unwrap_or_default();
        // The reason may be empty (`HTTP/1.1 200 `) or hold spaces and any byte.
        let mut parts = first.splitn(3, |&b| b == b' ');
        let v = parts.next().unwrap_or_default();
        let status = parts.next().unwrap_or_default();
        let reason = parts.next().unwrap_or_default();
        let version = version(&String::from_utf8_lossy(v))?;
        let status_text = String::from_utf8_lossy(status);
        if status.len() != 3 || !status.iter().all(u8::is_ascii_digit) {
            return Err(HeadError::Status(status_text.into_owned()));
        }
        Ok(ResponseHead {
            version,
            status: status_text.parse().unwrap_or_default(),
            reason: reason.to_vec(),
            headers: headers(ls)?,
        })
    }

    /// An interim response (`100 Continue`, `103 Early Hints`): another head follows it.
    /// `101 Switching Protocols` is final: the connection is someone else's after it.
    pub fn is_interim(&self) -> bool {
        (100..200).contains(&self.status) && self.status != 101
    }

    /// The head to send to the client: the hop-by-hop headers dropped, `Connection: close`.
    pub fn closing(&self) -> Vec<u8> {
        let mut out = format!("{} {} ", self.version, self.status).into_bytes();
        out.extend_from_slice(&self.reason);
        out.extend_from_slice(b"\r\n");
        write_headers(&mut out, &self.headers);
        out
    }
}

#[cfg(test)]
mod tests;
