//! Where an agent's run may connect (DESIGN.md, "Containment"). The run has its own network
//! namespace; its only way out is the daemon's proxy, which asks [`admit`] about every
//! destination before it resolves or connects anything. Two things may pass: the Anthropic
//! API's own host and port (from the run's `ANTHROPIC_BASE_URL`, or [`DEFAULT_API`]) and the
//! project's `[sandbox] allow_hosts`. Everything else is refused, and so is every address of
//! the host's own machine or network (loopback, private, link-local, unspecified) even when a
//! project lists it: the proxy runs outside the sandbox, so a loopback destination would be
//! the daemon's machine, its API and databases, not the agent's. The one exception is the API
//! itself at exactly its host and port, which is a loopback mock in the tests.
//!
//! An `allow_hosts` entry is `host` (any port), `host:port`, `*.suffix` or `*.suffix:port`. A
//! bare host admits every port, as Claude Code's own sandbox (`sandbox-runtime`) does with its
//! `allowedDomains`, which carry no port at all; a project that wants less writes the port. A
//! wildcard matches the names under the suffix, not the suffix itself (`*.npmjs.org` admits
//! `registry.npmjs.org`, not `npmjs.org`: list both), and needs two labels after `*.`, so
//! `*.com` is refused when the list is read; both rules are sandbox-runtime's too.
//!
//! Names are compared the way DNS does: case-insensitive, one trailing dot ignored. A name is
//! not resolved here; the proxy resolves an admitted name and checks the addresses with
//! [`is_local`] again (unless it is the API's), so a name that points at `127.0.0.1`, or one
//! the resolver reads as an address (`127.1`), does not open the host's loopback.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The API the CLI talks to when `ANTHROPIC_BASE_URL` is unset or empty.
pub const DEFAULT_API: &str = "https://api.anthropic.com";

/// A destination host as the policy compares it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Host {
    /// A DNS name, lowercase, without a trailing dot.
    Name(String),
    Ip(IpAddr),
}

/// A host and a port: the API's address, or what a request asked for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Target {
    pub host: Host,
    pub port: u16,
}

/// What is wrong with a host, an `allow_hosts` entry or the API's base URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EgressError {
    /// Neither an address nor a DNS name (empty, a space, a `/`, a label over 63 bytes…).
    #[error("{0:?} is not a host name or an IP address")]
    Host(String),
    /// A port that is not a number from 1 to 65535.
    #[error("{0:?} is not a port (1-65535)")]
    Port(String),
    /// An `allow_hosts` entry of another shape than `host`, `host:port`, `*.suffix[:port]`.
    #[error("{entry:?} {why} (write `host`, `host:port`, `*.example.com` or `[::1]:8080`)")]
    Entry { entry: String, why: &'static str },
    /// `ANTHROPIC_BASE_URL` that is not an `http` or `https` URL with a host.
    #[error("ANTHROPIC_BASE_URL {url:?} {why}")]
    BaseUrl { url: String, why: &'static str },
}

/// The destinations of one run: the API's address and the project's allow-list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Egress {
    api: Target,
    rules: Vec<Rule>,
}

/// The answer about one destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// The Anthropic API at exactly its host and port. What its name resolves to is trusted:
    /// the run's own environment named it.
    Api,
    /// On the project's `allow_hosts`. A name's addresses must still not be local.
    Listed,
    Refused(Refused),
}

/// Why a destination is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The host's own machine or network: loopback, private, link-local or unspecified
    /// addresses, and `localhost` names.
    Local,
    /// Not the API and not on `allow_hosts`.
    NotListed,
    /// Not a host name or an address at all.
    BadHost,
    /// Port 0.
    BadPort,
}

impl Admission {
    pub fn is_admitted(self) -> bool {
        !matches!(self, Admission::Refused(_))
    }
}

/// One `allow_hosts` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    pattern: Pattern,
    /// `None`: every port.
    port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Pattern {
    Exact(Host),
    /// `*.suffix`: names ending in `.suffix` (the suffix stored without the dot).
    Under(String),
}

impl Egress {
    /// The API's address from the run's `ANTHROPIC_BASE_URL` (`None` or empty: the default)
    /// and the project's `allow_hosts`.
    ///
    /// # Errors
    /// [`EgressError`] naming the base URL or the first entry that does not read.
    pub fn new<S: AsRef<str>>(
        api_base_url: Option<&str>,
        allow_hosts: &[S],
    ) -> Result<Egress, EgressError> {
        let api = api_target(
            api_base_url
                .filter(|u| !u.trim().is_empty())
                .unwrap_or(DEFAULT_API),
        )?;
        let rules = allow_hosts
            .iter()
            .map(|e| Rule::parse(e.as_ref()))
            .collect::<Result<_, _>>()?;
        Ok(Egress { api, rules })
    }

    /// Where the API is: what a forwarded API connection goes to.
    pub fn api(&self) -> &Target {
        &self.api
    }
}

/// May the run connect to `host` (as written in a request: any case, a trailing dot, an IPv6
/// address with or without brackets) at `port`?
pub fn admit(egress: &Egress, host: &str, port: u16) -> Admission {
    let Ok(host) = Host::parse(host) else {
        return Admission::Refused(Refused::BadHost);
    };
    if port == 0 {
        return Admission::Refused(Refused::BadPort);
    }
    if egress.api.host == host && egress.api.port == port {
        return Admission::Api;
    }
    if host.is_local() {
        return Admission::Refused(Refused::Local);
    }
    if egress.rules.iter().any(|r| r.matches(&host, port)) {
        Admission::Listed
    } else {
        Admission::Refused(Refused::NotListed)
    }
}

/// What a refused client reads (the 403's body): the CLI shows it in its error, so the daemon
/// can tell its own proxy's refusal from the API's. `host` as the request wrote it.
pub fn refusal_text(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("conveyor: [{host}]:{port} {REFUSAL_TAIL}")
    } else {
        format!("conveyor: {host}:{port} {REFUSAL_TAIL}")
    }
}

/// The end of every [`refusal_text`].
pub const REFUSAL_TAIL: &str = "is not allowed for this project";

/// Is this address the host's own machine or network? Loopback, unspecified (`0.0.0.0/8`
/// reaches the host's own services on Linux), private (RFC 1918, IPv6 unique local and the
/// old site-local), shared (`100.64.0.0/10`, carrier NAT and many VPNs), link-local (cloud
/// metadata at `169.254.169.254`) and broadcast. An IPv6 address that carries an IPv4 one
/// (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`) is judged by
/// the IPv4 one, or `[::ffff:127.0.0.1]` would be a way round.
pub fn is_local(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_local_v4(v4),
        IpAddr::V6(v6) => is_local_v6(v6),
    }
}

fn is_local_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    a == 0
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || (a == 100 && (64..128).contains(&b))
}

fn is_local_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    if s[..5] == [0; 5] && (s[5] == 0 || s[5] == 0xffff) {
        // `::/96` (compatible; `::` and `::1` among them) and `::ffff:0:0/96` (mapped).
        return is_local_v4(embedded_v4(&s));
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return is_local_v4(embedded_v4(&s));
    }
    let first = s[0];
    (first & 0xfe00) == 0xfc00 // fc00::/7 unique local
        || (first & 0xffc0) == 0xfe80 // fe80::/10 link-local
        || (first & 0xffc0) == 0xfec0 // fec0::/10 site-local
}

fn embedded_v4(s: &[u16; 8]) -> Ipv4Addr {
    let [a, b] = s[6].to_be_bytes();
    let [c, d] = s[7].to_be_bytes();
    Ipv4Addr::new(a, b, c, d)
}

impl Host {
    /// Reads a host: an IPv4 address, an IPv6 address (brackets optional), or a DNS name
    /// (letters, digits, `-`, `_`; labels of 1 to 63 bytes; one trailing dot ignored;
    /// lowercased).
    ///
    /// # Errors
    /// [`EgressError::Host`].
    pub fn parse(s: &str) -> Result<Host, EgressError> {
        let bad = || EgressError::Host(s.to_string());
        if let Some(inner) = s.strip_prefix('[') {
            let inner = inner.strip_suffix(']').ok_or_else(bad)?;
            return inner
                .parse::<Ipv6Addr>()
                .map(|ip| Host::Ip(IpAddr::V6(ip)))
                .map_err(|_| bad());
        }
        if let Ok(ip) = s.parse::<IpAddr>() {
            return Ok(Host::Ip(ip));
        }
        let name = s.strip_suffix('.').unwrap_or(s).to_ascii_lowercase();
        if name.is_empty() || name.len() > 253 || !name.split('.').all(label) {
            return Err(bad());
        }
        Ok(Host::Name(name))
    }

    /// `localhost`, a name under it (RFC 6761: they never leave the machine) or a local
    /// address ([`is_local`]).
    pub fn is_local(&self) -> bool {
        match self {
            Host::Name(n) => n == "localhost" || n.ends_with(".localhost"),
            Host::Ip(ip) => is_local(*ip),
        }
    }
}

fn label(l: &str) -> bool {
    !l.is_empty()
        && l.len() <= 63
        && l.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Name(n) => f.write_str(n),
            Host::Ip(ip) => write!(f, "{ip}"),
        }
    }
}

impl fmt::Display for Target {
    /// `host:port`, an IPv6 address in brackets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.host {
            Host::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]:{}", self.port),
            _ => write!(f, "{}:{}", self.host, self.port),
        }
    }
}

/// Reads a port: decimal digits only, 1 to 65535.
///
/// # Errors
/// [`EgressError::Port`].
pub fn parse_port(s: &str) -> Result<u16, EgressError> {
    if s.is_empty() || s.len() > 5 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(EgressError::Port(s.to_string()));
    }
    match s.parse::<u16>() {
        Ok(p) if p > 0 => Ok(p),
        _ => Err(EgressError::Port(s.to_string())),
    }
}

/// Splits `host:port`, `[v6]:port`, or (when `port` may be absent) `host`, `[v6]`, a bare
/// IPv6 address. The port stays text for the caller to read.
pub(crate) fn split_host_port(s: &str) -> (&str, Option<&str>) {
    if s.starts_with('[') {
        return match s.find(']') {
            Some(end) => {
                let (host, rest) = s.split_at(end + 1);
                (
                    host,
                    rest.strip_prefix(':')
                        .or(Some(rest).filter(|r| !r.is_empty())),
                )
            }
            None => (s, None),
        };
    }
    match s.rsplit_once(':') {
        // Two colons or more without brackets: a bare IPv6 address, no port.
        Some((host, _)) if host.contains(':') => (s, None),
        Some((host, port)) => (host, Some(port)),
        None => (s, None),
    }
}

/// Reads `host:port` (the authority of a request; the port required).
///
/// # Errors
/// [`EgressError::Host`] or [`EgressError::Port`].
pub fn parse_authority(s: &str, default_port: Option<u16>) -> Result<Target, EgressError> {
    let (host, port) = split_host_port(s);
    let port = match (port, default_port) {
        (Some(p), _) => parse_port(p)?,
        (None, Some(p)) => p,
        (None, None) => return Err(EgressError::Port(String::new())),
    };
    // A bare IPv6 address cannot carry a port: `::1:80` is one address.
    if host.contains(':') && !host.starts_with('[') {
        return Err(EgressError::Host(s.to_string()));
    }
    Ok(Target {
        host: Host::parse(host)?,
        port,
    })
}

/// The API's address in `ANTHROPIC_BASE_URL`: `https://host[:port][/path]` (443 by default)
/// or `http://…` (80). A user part (`user:pw@`) is refused rather than read past, so the host
/// a reader sees is the one the proxy admits.
///
/// # Errors
/// [`EgressError::BaseUrl`].
pub fn api_target(url: &str) -> Result<Target, EgressError> {
    let err = |why| EgressError::BaseUrl {
        url: url.to_string(),
        why,
    };
    let u = url.trim();
    let (scheme, rest) = u
        .split_once("://")
        .ok_or_else(|| err("has no scheme (`https://…`)"))?;
    let default_port = match scheme.to_ascii_lowercase().as_str() {
        "https" => 443,
        "http" => 80,
        _ => return Err(err("is neither http nor https")),
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('@') {
        return Err(err("carries a user name"));
    }
    if authority.is_empty() {
        return Err(err("has no host"));
    }
    parse_authority(authority, Some(default_port)).map_err(|e| match e {
        EgressError::Port(_) => err("has a port that is not 1-65535"),
        _ => err("has a host that is neither a name nor an address"),
    })
}

impl Rule {
    fn parse(entry: &str) -> Result<Rule, EgressError> {
        let err = |why| EgressError::Entry {
            entry: entry.to_string(),
            why,
        };
        let e = entry.trim();
        if e.contains("://") || e.contains('/') || e.contains('@') {
            return Err(err("is a URL: name the host only"));
        }
        let (host, port) = split_host_port(e);
        let port = match port {
            Some(p) => Some(parse_port(p).map_err(|_| err("has a port that is not 1-65535"))?),
            None => None,
        };
        let pattern = if let Some(suffix) = host.strip_prefix("*.") {
            let Ok(Host::Name(suffix)) = Host::parse(suffix) else {
                return Err(err("has a wildcard over something that is not a name"));
            };
            if !suffix.contains('.') {
                return Err(err("is too broad: a wildcard needs two labels after `*.`"));
            }
            Pattern::Under(suffix)
        } else if host.contains('*') {
            return Err(err("has a `*` elsewhere than a leading `*.`"));
        } else {
            Pattern::Exact(Host::parse(host).map_err(|_| err("is not a host name or an address"))?)
        };
        Ok(Rule { pattern, port })
    }

    fn matches(&self, host: &Host, port: u16) -> bool {
        if self.port.is_some_and(|p| p != port) {
            return false;
        }
        match (&self.pattern, host) {
            (Pattern::Exact(h), _) => h == host,
            (Pattern::Under(suffix), Host::Name(n)) => n
                .strip_suffix(suffix.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
            (Pattern::Under(_), Host::Ip(_)) => false,
        }
    }
}

#[cfg(test)]
mod tests;
