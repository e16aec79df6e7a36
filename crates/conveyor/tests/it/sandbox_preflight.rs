//! The sandbox's preflight item (issue 34): `bwrap` missing, a `bwrap` whose namespaces the
//! kernel refuses (a fake that answers as bubblewrap 0.8.0 does), the sandbox off, and the
//! real bubblewrap of this machine.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use conveyor_api::{
    LineState, Preflight, PreflightCode, PreflightItem, PreflightLevel, PreflightScope, ReasonCode,
};

use crate::support::*;

/// bubblewrap 0.8.0 where no user namespace is left (`user.max_user_namespaces = 0`), as seen
/// in a child namespace whose limit is 0 (docs/conveyor.md, "What bubblewrap does here").
const ENOSPC: &str = "bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded (ENOSPC)";

fn sandbox_item(p: &Preflight) -> &PreflightItem {
    let mut items = p.items.iter().filter(|i| i.code == PreflightCode::Sandbox);
    let item = items.next().expect("a sandbox item");
    assert!(items.next().is_none(), "one sandbox item: {p:?}");
    assert_eq!(item.scope, PreflightScope::Daemon);
    item
}

/// A `bwrap` in `dir` that says its version and then fails every sandbox as the kernel's
/// namespace limit makes the real one fail; it writes the arguments of each call to
/// `<dir>/calls`, one call a line.
fn fake_bwrap(dir: &Path) -> PathBuf {
    let bin = dir.join("bwrap");
    let calls = dir.join("calls");
    std::fs::write(
        &bin,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nif [ \"$1\" = --version ]; then echo 'bubblewrap 0.8.0'; exit 0; fi\necho '{ENOSPC}' >&2\nexit 1\n",
            calls.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_bwrap_holds_every_line_and_names_the_package() {
    let mut d = Daemon::builder()
        .mock()
        .config("[sandbox]\nbwrap = \"/nonexistent/bwrap\"\n")
        .start()
        .await;
    let c = d.client();
    let a = d.line("a", "x").await.id;
    // Held like any blocking daemon item: queued, nothing tried, the reason says why.
    let l = wait_for(60, "line a to say why it waits", || async {
        let l = c.line(&a).await.ok()?;
        (l.line.reason_code == Some(ReasonCode::Preflight)).then_some(l)
    })
    .await;
    assert_eq!(l.line.state, LineState::Queued);
    let reason = l.line.reason.unwrap();
    assert!(
        reason.starts_with("waiting: bubblewrap is missing: /nonexistent/bwrap is not found"),
        "{reason}"
    );
    assert!(l.line.steps.iter().all(|s| s.attempts == 0));
    let p = c.preflight().await.unwrap();
    assert!(p.blocking);
    let item = sandbox_item(&p);
    assert_eq!(item.level, PreflightLevel::Blocking);
    let fix = item.fix.as_deref().unwrap();
    assert!(
        fix.contains("apt install bubblewrap") && fix.contains("[sandbox] bwrap in "),
        "{fix}"
    );
    // Only the sandbox blocks: the agent is there and logged in.
    let others: Vec<_> = p
        .items
        .iter()
        .filter(|i| i.level == PreflightLevel::Blocking && i.code != PreflightCode::Sandbox)
        .collect();
    assert!(others.is_empty(), "{others:?}");
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_user_namespaces_left_blocks_with_the_sysctl_that_gives_them_back() {
    let dir = tempfile::tempdir().unwrap();
    let bwrap = fake_bwrap(dir.path());
    let mut d = Daemon::builder()
        .config(&format!(
            "run_lines = false\n[sandbox]\nbwrap = \"{}\"\n",
            bwrap.display()
        ))
        .start()
        .await;
    let p = d.client().preflight().await.unwrap();
    let item = sandbox_item(&p);
    assert_eq!(item.level, PreflightLevel::Blocking);
    assert!(
        item.message.starts_with(&format!(
            "bubblewrap 0.8.0 cannot make a sandbox as the daemon's user (exit 1): {ENOSPC}"
        )),
        "{}",
        item.message
    );
    // The kernel's own setting is named when this kernel has it.
    if let Ok(max) = std::fs::read_to_string("/proc/sys/user/max_user_namespaces") {
        assert!(
            item.message
                .contains(&format!("user.max_user_namespaces = {}", max.trim())),
            "{}",
            item.message
        );
    }
    let fix = item.fix.as_deref().unwrap();
    assert!(
        fix.contains("sysctl -w user.max_user_namespaces=15000") && fix.contains("/etc/sysctl.d/"),
        "{fix}"
    );
    // What bwrap was asked: its version, then the probe with every namespace unshared.
    let calls = std::fs::read_to_string(dir.path().join("calls")).unwrap();
    let mut calls = calls.lines();
    assert_eq!(calls.next(), Some("--version"));
    let probe = calls.next().unwrap();
    assert!(
        probe.starts_with(
            "--die-with-parent --unshare-all --cap-drop ALL --new-session --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --tmpfs /run --dir /run/conveyor -- /"
        ) && probe.ends_with("/true"),
        "{probe}"
    );
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_off_is_a_warning_and_this_machines_bubblewrap_is_ok() {
    // Off: a warning, whatever bwrap says (it is not even looked for).
    let mut d = Daemon::builder()
        .config("run_lines = false\n[sandbox]\nmode = \"off\"\nbwrap = \"/nonexistent/bwrap\"\n")
        .start()
        .await;
    let p = d.client().preflight().await.unwrap();
    let item = sandbox_item(&p);
    assert_eq!(item.level, PreflightLevel::Warning);
    assert!(
        item.message
            .starts_with("the sandbox is off ([sandbox] mode = \"off\")"),
        "{}",
        item.message
    );
    let fix = item.fix.as_deref().unwrap();
    assert!(
        fix.starts_with("set [sandbox] mode = \"required\" in ")
            && fix.contains("apt install bubblewrap"),
        "{fix}"
    );

    // The default: required, the bwrap on PATH (installed here: scripts/test.sh).
    d.set_config("[sandbox]\nmode = \"required\"\nbwrap = \"bwrap\"\n");
    d.restart().await;
    let p = d.client().preflight().await.unwrap();
    let item = sandbox_item(&p);
    assert_eq!(
        (item.level, item.fix.as_deref()),
        (PreflightLevel::Ok, None),
        "{item:?}"
    );
    assert!(
        item.message.starts_with("agent runs go inside bubblewrap ")
            && item.message.ends_with(
                "(bwrap); a sandbox with every namespace unshared works as the daemon's user"
            ),
        "{}",
        item.message
    );
    d.stop().await;
}
