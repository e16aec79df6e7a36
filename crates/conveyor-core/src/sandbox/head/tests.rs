//! The heads the proxy reads and writes: absolute URLs, CONNECT, IPv6, the rewritten heads,
//! and a typed error for each malformed form.

use super::*;
use crate::sandbox::net::Host;

fn req(head: &str) -> Result<RequestHead, HeadError> {
    RequestHead::parse(head.as_bytes())
}

fn text(b: Vec<u8>) -> String {
    String::from_utf8(b).unwrap()
}

#[test]
fn an_absolute_url_reads_as_host_port_and_path() {
    let r = req("POST http://127.0.0.1:43767/v1/messages?beta=true HTTP/1.1\r\nHost: 127.0.0.1:43767\r\n\r\n").unwrap();
    assert_eq!(r.method, "POST");
    assert_eq!(r.destination.to_string(), "127.0.0.1:43767");
    assert_eq!(r.host, "127.0.0.1");
    assert_eq!(r.path.as_deref(), Some("/v1/messages?beta=true"));
    assert_eq!(r.version, "HTTP/1.1");
    assert!(!r.is_connect());
}

#[test]
fn an_absolute_url_without_port_or_path_means_80_and_slash() {
    let r = req("GET http://Example.COM HTTP/1.0\r\n\r\n").unwrap();
    assert_eq!(r.destination.host, Host::Name("example.com".into()));
    assert_eq!(r.destination.port, 80);
    assert_eq!(r.host, "Example.COM");
    assert_eq!(r.path.as_deref(), Some("/"));
    let r = req("GET http://example.com?q=1 HTTP/1.1\r\n\r\n").unwrap();
    assert_eq!(r.path.as_deref(), Some("/?q=1"));
}

#[test]
fn connect_reads_as_host_and_port_without_path() {
    let r = req("CONNECT api.anthropic.com:443 HTTP/1.1\r\nHost: api.anthropic.com:443\r\n\r\n")
        .unwrap();
    assert_eq!(r.method, "CONNECT");
    assert_eq!(r.destination.to_string(), "api.anthropic.com:443");
    assert_eq!(r.path, None);
    assert!(r.is_connect());
    assert!(r.origin_form().is_none());
}

#[test]
fn ipv6_literals_read_in_brackets() {
    let r = req("CONNECT [::1]:8080 HTTP/1.1\r\n\r\n").unwrap();
    assert_eq!(r.destination.host, Host::Ip("::1".parse().unwrap()));
    assert_eq!(r.destination.port, 8080);
    assert_eq!(r.host, "::1");
    let r = req("GET http://[2001:db8::1]/x HTTP/1.1\r\n\r\n").unwrap();
    assert_eq!(r.destination.to_string(), "[2001:db8::1]:80");
    assert_eq!(r.host, "2001:db8::1");
    assert!(req("CONNECT ::1:8080 HTTP/1.1\r\n\r\n").is_err());
}

#[test]
fn a_trailing_dot_and_case_keep_the_host_as_written() {
    let r = req("CONNECT GitHub.COM.:443 HTTP/1.1\r\n\r\n").unwrap();
    assert_eq!(r.host, "GitHub.COM.");
    assert_eq!(r.destination.host, Host::Name("github.com".into()));
}

#[test]
fn ports_out_of_range_are_errors() {
    for head in [
        "CONNECT example.com:0 HTTP/1.1\r\n\r\n",
        "CONNECT example.com:65536 HTTP/1.1\r\n\r\n",
        "CONNECT example.com:99999999999 HTTP/1.1\r\n\r\n",
        "CONNECT example.com:-1 HTTP/1.1\r\n\r\n",
        "CONNECT example.com: HTTP/1.1\r\n\r\n",
        "CONNECT example.com HTTP/1.1\r\n\r\n",
        "GET http://example.com:70000/ HTTP/1.1\r\n\r\n",
        "GET http://[::1]:abc/ HTTP/1.1\r\n\r\n",
    ] {
        assert!(
            matches!(req(head), Err(HeadError::Authority(EgressError::Port(_)))),
            "{head:?}: {:?}",
            req(head)
        );
    }
}

fn kind(e: &HeadError) -> &'static str {
    match e {
        HeadError::TooLong => "too_long",
        HeadError::FirstLine(_) => "first_line",
        HeadError::Version(_) => "version",
        HeadError::Method(_) => "method",
        HeadError::Target { .. } => "target",
        HeadError::Authority(EgressError::Host(_)) => "host",
        HeadError::Authority(EgressError::Port(_)) => "port",
        HeadError::Authority(_) => "authority",
        HeadError::Header(_) => "header",
        HeadError::Status(_) => "status",
    }
}

#[test]
fn malformed_heads_are_typed_errors() {
    let cases = [
        ("", "first_line"),
        ("GET\r\n\r\n", "first_line"),
        ("GET  http://a/ HTTP/1.1\r\n\r\n", "first_line"),
        ("GET http://a/ HTTP/2\r\n\r\n", "version"),
        ("GET http://a/ HTTP/1.1 x\r\n\r\n", "version"),
        ("G(T http://a/ HTTP/1.1\r\n\r\n", "method"),
        ("GET /v1/messages HTTP/1.1\r\n\r\n", "target"),
        ("GET https://a/ HTTP/1.1\r\n\r\n", "target"),
        ("GET ftp://a/ HTTP/1.1\r\n\r\n", "target"),
        ("GET example.com HTTP/1.1\r\n\r\n", "target"),
        ("GET http://good.com@evil.com/ HTTP/1.1\r\n\r\n", "target"),
        ("GET http://a/#frag HTTP/1.1\r\n\r\n", "target"),
        ("CONNECT a.com:443/x HTTP/1.1\r\n\r\n", "target"),
        ("GET http:///x HTTP/1.1\r\n\r\n", "host"),
        ("GET http://a b/ HTTP/1.1\r\n\r\n", "version"),
        ("GET http://a/ HTTP/1.1\r\nNoColon\r\n\r\n", "header"),
        ("GET http://a/ HTTP/1.1\r\nBad Name: x\r\n\r\n", "header"),
        (
            "GET http://a/ HTTP/1.1\r\nA: b\r\n folded\r\n\r\n",
            "header",
        ),
        ("GET http://a/ HTTP/1.1\r\nA: b\rc\r\n\r\n", "header"),
    ];
    for (head, want) in cases {
        let got = req(head).map_err(|e| kind(&e));
        assert_eq!(got, Err(want), "{head:?}");
    }
    assert!(matches!(
        RequestHead::parse(b"GET http://a/\xff HTTP/1.1\r\n\r\n"),
        Err(HeadError::FirstLine(_))
    ));
}

#[test]
fn the_head_ends_at_the_blank_line_within_the_limit() {
    assert_eq!(head_end(b"GET http://a/ HTTP/1.1\r\nA: b\r\n"), Ok(None));
    let h = b"GET http://a/ HTTP/1.1\r\nA: b\r\n\r\nbody";
    assert_eq!(head_end(h), Ok(Some(h.len() - 4)));
    assert_eq!(head_end(b"GET http://a/ HTTP/1.1\n\nbody"), Ok(Some(24)));
    let long = vec![b'a'; MAX_HEAD];
    assert_eq!(head_end(&long), Err(HeadError::TooLong));
    assert_eq!(head_end(&long[..MAX_HEAD - 1]), Ok(None));
}

#[test]
fn a_plain_request_goes_on_in_origin_form_with_host_from_the_url_and_close() {
    let r = req(concat!(
        "POST http://127.0.0.1:43767/v1/messages?beta=true HTTP/1.1\r\n",
        "Host: evil.example\r\n",
        "Proxy-Connection: keep-alive\r\n",
        "Proxy-Authorization: Basic eA==\r\n",
        "Connection: keep-alive, X-Secret\r\n",
        "Keep-Alive: timeout=5\r\n",
        "X-Secret: 1\r\n",
        "Content-Length: 2\r\n",
        "x-api-key:  sk-test \r\n",
        "\r\n"
    ))
    .unwrap();
    assert_eq!(
        text(r.origin_form().unwrap()),
        concat!(
            "POST /v1/messages?beta=true HTTP/1.1\r\n",
            "Host: 127.0.0.1:43767\r\n",
            "Content-Length: 2\r\n",
            "x-api-key: sk-test\r\n",
            "Connection: close\r\n\r\n"
        )
    );
    let r = req("GET http://[::1]/ HTTP/1.0\r\n\r\n").unwrap();
    assert_eq!(
        text(r.origin_form().unwrap()),
        "GET / HTTP/1.0\r\nHost: [::1]\r\nConnection: close\r\n\r\n"
    );
}

#[test]
fn a_response_goes_back_with_close() {
    let r = ResponseHead::parse(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\nTransfer-Encoding: chunked\r\n\r\n",
    )
    .unwrap();
    assert_eq!(r.status, 200);
    assert!(!r.is_interim());
    assert_eq!(
        text(r.closing()),
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    let r = ResponseHead::parse(b"HTTP/1.1 404 \r\n\r\n").unwrap();
    assert_eq!(
        text(r.closing()),
        "HTTP/1.1 404 \r\nConnection: close\r\n\r\n"
    );
}

#[test]
fn interim_responses_are_told_apart() {
    assert!(
        ResponseHead::parse(b"HTTP/1.1 100 Continue\r\n\r\n")
            .unwrap()
            .is_interim()
    );
    assert!(
        ResponseHead::parse(b"HTTP/1.1 103 Early Hints\r\n\r\n")
            .unwrap()
            .is_interim()
    );
    assert!(
        !ResponseHead::parse(b"HTTP/1.1 101 Switching Protocols\r\n\r\n")
            .unwrap()
            .is_interim()
    );
}

#[test]
fn malformed_responses_are_typed_errors() {
    for (head, want) in [
        (&b"HTTP/1.1 20 OK\r\n\r\n"[..], "status"),
        (b"HTTP/1.1 2000 OK\r\n\r\n", "status"),
        (b"HTTP/1.1 abc OK\r\n\r\n", "status"),
        (b"HTTP/3 200 OK\r\n\r\n", "version"),
        (b"SSH-2.0-OpenSSH\r\n\r\n", "version"),
        (b"HTTP/1.1 200 OK\r\nbroken\r\n\r\n", "header"),
    ] {
        let got = ResponseHead::parse(head);
        let ok = match want {
            "status" => matches!(got, Err(HeadError::Status(_))),
            "version" => matches!(got, Err(HeadError::Version(_))),
            _ => matches!(got, Err(HeadError::Header(_))),
        };
        assert!(ok, "{:?}: {got:?}", String::from_utf8_lossy(head));
    }
}
