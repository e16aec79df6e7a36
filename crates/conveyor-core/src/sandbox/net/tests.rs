//! Every rule of `net.rs`, one test each: the API's address, the allow-list's forms, the local
//! addresses, the names and ports that do not read.

use super::*;

fn egress(base: Option<&str>, allow: &[&str]) -> Egress {
    Egress::new(base, allow).unwrap()
}

fn refused(why: Refused) -> Admission {
    Admission::Refused(why)
}

#[test]
fn the_default_api_is_anthropic_on_443() {
    for base in [None, Some(""), Some("  ")] {
        let e = egress(base, &[]);
        assert_eq!(e.api().to_string(), "api.anthropic.com:443");
        assert_eq!(admit(&e, "api.anthropic.com", 443), Admission::Api);
        assert_eq!(
            admit(&e, "api.anthropic.com", 80),
            refused(Refused::NotListed)
        );
        assert_eq!(admit(&e, "anthropic.com", 443), refused(Refused::NotListed));
    }
}

#[test]
fn the_api_comes_from_the_base_url() {
    let cases = [
        ("https://api.anthropic.com", "api.anthropic.com:443"),
        ("http://api.example.org", "api.example.org:80"),
        (
            "https://gw.example.org:8443/anthropic/v1?x=1",
            "gw.example.org:8443",
        ),
        ("HTTP://127.0.0.1:43767", "127.0.0.1:43767"),
        ("http://[::1]:9000/", "[::1]:9000"),
        ("https://API.Example.ORG./", "api.example.org:443"),
    ];
    for (url, want) in cases {
        assert_eq!(api_target(url).unwrap().to_string(), want, "{url}");
    }
}

#[test]
fn a_base_url_that_does_not_read_is_an_error() {
    for url in [
        "api.anthropic.com",
        "ftp://api.anthropic.com",
        "https://",
        "https://:443",
        "https://user:pw@api.anthropic.com",
        "http://127.0.0.1:0",
        "http://127.0.0.1:65536",
        "http://127.0.0.1:x",
        "http://::1:80/",
        "http://[::1/",
        "http://exa mple.com/",
    ] {
        assert!(
            matches!(api_target(url), Err(EgressError::BaseUrl { .. })),
            "{url}: {:?}",
            api_target(url)
        );
    }
}

#[test]
fn the_api_on_loopback_passes_at_exactly_its_port() {
    let e = egress(Some("http://127.0.0.1:43767"), &[]);
    assert_eq!(admit(&e, "127.0.0.1", 43767), Admission::Api);
    assert_eq!(admit(&e, "127.0.0.1", 43768), refused(Refused::Local));
    assert_eq!(admit(&e, "localhost", 43767), refused(Refused::Local));
    assert_eq!(
        admit(&e, "::ffff:127.0.0.1", 43767),
        refused(Refused::Local)
    );
    let e = egress(Some("http://[::1]:8080"), &[]);
    assert_eq!(admit(&e, "[::1]", 8080), Admission::Api);
    assert_eq!(admit(&e, "::1", 8080), Admission::Api);
    assert_eq!(admit(&e, "[::1]", 8081), refused(Refused::Local));
}

#[test]
fn a_bare_host_admits_every_port() {
    let e = egress(None, &["registry.npmjs.org"]);
    for port in [80, 443, 8080, 65535] {
        assert_eq!(admit(&e, "registry.npmjs.org", port), Admission::Listed);
    }
    assert_eq!(admit(&e, "npmjs.org", 443), refused(Refused::NotListed));
    assert_eq!(
        admit(&e, "x.registry.npmjs.org", 443),
        refused(Refused::NotListed)
    );
}

#[test]
fn a_host_with_a_port_admits_that_port_only() {
    let e = egress(
        None,
        &["pypi.org:443", "[2001:db8::1]:8443", "203.0.113.7:22"],
    );
    assert_eq!(admit(&e, "pypi.org", 443), Admission::Listed);
    assert_eq!(admit(&e, "pypi.org", 80), refused(Refused::NotListed));
    assert_eq!(admit(&e, "[2001:db8::1]", 8443), Admission::Listed);
    assert_eq!(admit(&e, "2001:db8:0::1", 8443), Admission::Listed);
    assert_eq!(admit(&e, "[2001:db8::1]", 443), refused(Refused::NotListed));
    assert_eq!(admit(&e, "203.0.113.7", 22), Admission::Listed);
    assert_eq!(admit(&e, "203.0.113.7", 23), refused(Refused::NotListed));
}

#[test]
fn a_wildcard_admits_names_under_the_suffix_not_the_suffix() {
    let e = egress(None, &["*.npmjs.org", "*.example.com:443"]);
    assert_eq!(admit(&e, "registry.npmjs.org", 443), Admission::Listed);
    assert_eq!(admit(&e, "a.b.npmjs.org", 8080), Admission::Listed);
    assert_eq!(admit(&e, "npmjs.org", 443), refused(Refused::NotListed));
    assert_eq!(admit(&e, "evilnpmjs.org", 443), refused(Refused::NotListed));
    assert_eq!(
        admit(&e, "npmjs.org.evil.net", 443),
        refused(Refused::NotListed)
    );
    assert_eq!(admit(&e, "api.example.com", 443), Admission::Listed);
    assert_eq!(
        admit(&e, "api.example.com", 80),
        refused(Refused::NotListed)
    );
}

#[test]
fn names_are_compared_without_case_and_trailing_dot() {
    let e = egress(None, &["GitHub.com.", "*.Crates.IO"]);
    assert_eq!(admit(&e, "github.com", 443), Admission::Listed);
    assert_eq!(admit(&e, "GITHUB.COM.", 443), Admission::Listed);
    assert_eq!(admit(&e, "Static.CRATES.io.", 443), Admission::Listed);
    assert_eq!(admit(&e, "API.ANTHROPIC.COM.", 443), Admission::Api);
    assert_eq!(admit(&e, "github.com..", 443), refused(Refused::BadHost));
}

#[test]
fn local_addresses_are_refused_even_when_listed() {
    let e = egress(
        None,
        &[
            "127.0.0.1",
            "10.0.0.1",
            "[::1]:8080",
            "localhost",
            "192.168.1.5:80",
        ],
    );
    for (host, port) in [
        ("127.0.0.1", 80),
        ("127.8.9.10", 443),
        ("10.0.0.1", 443),
        ("172.16.0.1", 443),
        ("172.31.255.255", 443),
        ("192.168.1.5", 80),
        ("169.254.169.254", 80),
        ("100.64.0.1", 443),
        ("0.0.0.0", 80),
        ("0.1.2.3", 80),
        ("255.255.255.255", 80),
        ("[::1]", 8080),
        ("::1", 8080),
        ("[::]", 80),
        ("[fe80::1]", 80),
        ("[fc00::1]", 80),
        ("[fd12:3456::1]", 80),
        ("[fec0::1]", 80),
        ("[::ffff:127.0.0.1]", 80),
        ("[::ffff:10.1.2.3]", 80),
        ("[::127.0.0.1]", 80),
        ("[64:ff9b::192.168.0.1]", 80),
        ("localhost", 80),
        ("LOCALHOST.", 80),
        ("db.localhost", 5432),
    ] {
        assert_eq!(
            admit(&e, host, port),
            refused(Refused::Local),
            "{host}:{port}"
        );
    }
}

#[test]
fn public_addresses_are_not_local() {
    for ip in [
        "1.1.1.1",
        "172.32.0.1",
        "100.128.0.1",
        "192.169.0.1",
        "2606:4700::1111",
        "::ffff:8.8.8.8",
        "64:ff9b::8.8.8.8",
    ] {
        assert!(!is_local(ip.parse().unwrap()), "{ip}");
    }
}

#[test]
fn what_is_not_listed_is_refused() {
    let e = egress(None, &["github.com"]);
    assert_eq!(
        admit(&e, "example.invalid", 80),
        refused(Refused::NotListed)
    );
    assert_eq!(admit(&e, "8.8.8.8", 53), refused(Refused::NotListed));
    assert_eq!(
        admit(&e, "gist.github.com", 443),
        refused(Refused::NotListed)
    );
}

#[test]
fn hosts_and_ports_that_do_not_read_are_refused() {
    let e = egress(None, &["github.com"]);
    for host in [
        "",
        ".",
        "a..b",
        "exa mple.com",
        "a/b",
        "[::1",
        "[github.com]",
        "fe80::1%eth0",
    ] {
        assert_eq!(admit(&e, host, 443), refused(Refused::BadHost), "{host:?}");
    }
    assert_eq!(
        admit(&e, &format!("{}.com", "a".repeat(64)), 443),
        refused(Refused::BadHost)
    );
    assert_eq!(admit(&e, "github.com", 0), refused(Refused::BadPort));
}

#[test]
fn allow_entries_that_do_not_read_are_errors() {
    for entry in [
        "",
        "https://github.com",
        "github.com/path",
        "user@github.com",
        "*",
        "*.com",
        "*.",
        "a.*.com",
        "git*hub.com",
        "github.com:0",
        "github.com:65536",
        "github.com:https",
        "[::1]x",
        "*.[::1]",
    ] {
        assert!(
            matches!(Egress::new(None, &[entry]), Err(EgressError::Entry { .. })),
            "{entry:?}: {:?}",
            Egress::new(None, &[entry])
        );
    }
}

#[test]
fn a_refusal_names_host_and_port() {
    assert_eq!(
        refusal_text("example.invalid", 80),
        "conveyor: example.invalid:80 is not allowed for this project"
    );
    assert_eq!(
        refusal_text("::1", 8080),
        "conveyor: [::1]:8080 is not allowed for this project"
    );
}

#[test]
fn ports_read_as_decimal_from_1_to_65535() {
    assert_eq!(parse_port("1"), Ok(1));
    assert_eq!(parse_port("65535"), Ok(65535));
    for p in [
        "0", "65536", "99999", "123456", "-1", "+80", " 80", "0x50", "",
    ] {
        assert!(parse_port(p).is_err(), "{p:?}");
    }
}

#[test]
fn authorities_read_with_brackets_for_ipv6() {
    let t = parse_authority("[::1]:8080", None).unwrap();
    assert_eq!(t.host, Host::Ip("::1".parse().unwrap()));
    assert_eq!(t.port, 8080);
    assert_eq!(t.to_string(), "[::1]:8080");
    assert_eq!(
        parse_authority("Example.COM.:443", None)
            .unwrap()
            .to_string(),
        "example.com:443"
    );
    assert_eq!(parse_authority("example.com", Some(80)).unwrap().port, 80);
    assert!(parse_authority("example.com", None).is_err());
    assert!(parse_authority("::1:8080", None).is_err());
    assert!(parse_authority("[::1]:", None).is_err());
    assert!(parse_authority("example.com:70000", None).is_err());
}
