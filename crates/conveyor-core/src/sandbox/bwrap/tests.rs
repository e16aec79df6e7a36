use super::*;

fn plan(mounts: Vec<Mount>) -> Plan {
    Plan {
        bwrap: "/usr/bin/bwrap".into(),
        bridge: "/opt/conveyord".into(),
        mounts,
        proxy_socket: "/var/lib/conveyor/run/7/proxy.sock".into(),
        forward: None,
        telegram_socket: None,
        chdir: "/var/lib/conveyor/worktrees/L1".into(),
    }
}

fn words(p: &Plan) -> Vec<String> {
    p.prefix()
        .unwrap()
        .into_iter()
        .map(|w| w.into_string().unwrap())
        .collect()
}

/// The position of `op path` (an option and its destination, the last word of the mount).
fn at(w: &[String], op: &str, path: &str) -> usize {
    w.windows(2)
        .position(|p| p[0] == op && p[1] == path)
        .or_else(|| w.windows(3).position(|p| p[0] == op && p[2] == path))
        .unwrap_or_else(|| panic!("{op} {path} not in {w:?}"))
}

#[test]
fn parents_are_mounted_before_their_children_whatever_the_order_given() {
    let p = plan(vec![
        Mount::ReadOnly("/var/lib/conveyor/worktrees/L1/.git".into()),
        Mount::Writable("/var/lib/conveyor/worktrees/L1".into()),
        Mount::HideDir("/var/lib/conveyor".into()),
        Mount::ReadOnly("/var/lib/conveyor/lines/L1".into()),
        Mount::Writable("/var/lib/conveyor/lines/L1/agent".into()),
    ]);
    let w = words(&p);
    let hide = at(&w, "--tmpfs", "/var/lib/conveyor");
    let wt = at(&w, "--bind", "/var/lib/conveyor/worktrees/L1");
    let dotgit = at(&w, "--ro-bind", "/var/lib/conveyor/worktrees/L1/.git");
    let line = at(&w, "--ro-bind", "/var/lib/conveyor/lines/L1");
    let agent = at(&w, "--bind", "/var/lib/conveyor/lines/L1/agent");
    // The hidden folder is made read-only once everything below it is mounted.
    let ro = at(&w, "--remount-ro", "/var/lib/conveyor");
    assert!(ro > agent && ro > dotgit, "{w:?}");
    assert!(hide < wt && wt < dotgit, "{w:?}");
    assert!(hide < line && line < agent, "{w:?}");
    // The system comes first, read-only, and /tmp and /run are fresh before anything.
    assert!(at(&w, "--ro-bind", "/") < hide);
    assert!(at(&w, "--tmpfs", "/run") < hide);
}

#[test]
fn the_run_is_contained_and_capabilities_dropped() {
    let w = words(&plan(Vec::new()));
    for flag in ["--die-with-parent", "--unshare-all", "--new-session"] {
        assert!(w.contains(&flag.to_string()), "{flag} missing: {w:?}");
    }
    let cap = w
        .iter()
        .position(|x| x == "--cap-drop")
        .expect("--cap-drop");
    assert_eq!(w[cap + 1], "ALL");
    // Never a way back to the host's network namespace or a shared one.
    assert!(!w.iter().any(|x| x == "--share-net"), "{w:?}");
}

#[test]
fn a_hidden_file_is_bound_to_dev_null_and_a_bind_of_the_same_path_wins() {
    let p = plan(vec![
        Mount::HideFile("/etc/conveyor/token".into()),
        Mount::HideDir("/root/.claude".into()),
        Mount::HideDir("/root/.aws".into()),
        Mount::ReadOnly("/root/.cargo".into()),
        Mount::Writable("/root/.claude".into()),
    ]);
    let w = words(&p);
    let t = at(&w, "--ro-bind", "/etc/conveyor/token");
    assert_eq!(w[t + 1], "/dev/null");
    assert!(
        !w.windows(2)
            .any(|p| p[0] == "--tmpfs" && p[1] == "/root/.claude"),
        "{w:?}"
    );
    at(&w, "--bind", "/root/.claude");
    // Nor is it made read-only at the end, as a hidden folder is.
    assert!(
        !w.windows(2)
            .any(|p| p[0] == "--remount-ro" && p[1] == "/root/.claude"),
        "{w:?}"
    );
    at(&w, "--remount-ro", "/root/.aws");
}

#[test]
fn the_bridge_runs_inside_with_the_sockets_bound_in_and_ends_with_a_double_dash() {
    let mut p = plan(Vec::new());
    p.forward = Some((
        "/var/lib/conveyor/run/7/api.sock".into(),
        Forward { port: 4242 },
    ));
    let w = words(&p);
    let sep = w.iter().position(|x| x == "--").unwrap();
    assert_eq!(&w[sep + 1..sep + 3], ["/opt/conveyord", "bridge"]);
    assert_eq!(w.last().unwrap(), "--");
    let s = at(&w, "--ro-bind", PROXY_SOCKET);
    assert_eq!(w[s + 1], "/var/lib/conveyor/run/7/proxy.sock");
    at(&w, "--ro-bind", API_SOCKET);
    let bridge = &w[sep..];
    assert!(
        bridge
            .windows(2)
            .any(|p| p == ["--forward", "127.0.0.1:4242"]),
        "{bridge:?}"
    );
    assert!(
        bridge.windows(2).any(|p| p == ["--listen", PROXY_LISTEN]),
        "{bridge:?}"
    );
    let cd = at(&w, "--chdir", "/var/lib/conveyor/worktrees/L1");
    assert!(cd < sep);
    // Without a forward, no API socket and no forward port; without Telegram, no check socket.
    let w = words(&plan(Vec::new()));
    assert!(
        !w.iter()
            .any(|x| x == API_SOCKET || x == "--forward" || x == TELEGRAM_SOCKET),
        "{w:?}"
    );
}

#[test]
fn a_testers_telegram_socket_is_bound_in_read_only() {
    let mut p = plan(Vec::new());
    p.telegram_socket = Some("/var/lib/conveyor/run/7/telegram.sock".into());
    let w = words(&p);
    let s = at(&w, "--ro-bind", TELEGRAM_SOCKET);
    assert_eq!(w[s + 1], "/var/lib/conveyor/run/7/telegram.sock");
    assert!(s < w.iter().position(|x| x == "--").unwrap());
}

#[test]
fn relative_paths_and_the_root_are_refused() {
    let p = plan(vec![Mount::Writable("worktrees/L1".into())]);
    assert_eq!(
        p.prefix().unwrap_err(),
        PlanError::Relative("worktrees/L1".into())
    );
    let p = plan(vec![Mount::HideDir("/".into())]);
    assert_eq!(p.prefix().unwrap_err(), PlanError::Root("/".into()));
}

#[test]
fn the_proxy_environment_names_the_bridge_in_both_spellings_and_keeps_loopback_inside() {
    let env: std::collections::BTreeMap<_, _> = proxy_env().into_iter().collect();
    for k in ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"] {
        assert_eq!(env[k], format!("http://{PROXY_LISTEN}"), "{k}");
    }
    assert!(env["NO_PROXY"].split(',').any(|h| h == "127.0.0.1"));
}
