//! `root_mode = { user = "…" }`: the daemon runs as root, the agent as a dedicated user, with
//! `bypassPermissions` and WITHOUT `IS_SANDBOX` (the CLI's root guard would refuse root).
//! CI runs the tests as root; elsewhere this test fails loudly instead of passing silently.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use conveyor_api::{LineState, StepState};
use serde_json::json;

use crate::support::*;

const USER: &str = "conveyor-it";

/// Creates the test user (home `/home/conveyor-it`) unless it exists; returns its uid and home.
fn ensure_user() -> (u32, std::path::PathBuf) {
    if conveyor::exec::lookup_user(USER).is_none() {
        let out = Command::new("useradd")
            .args(["-m", "-d", &format!("/home/{USER}"), "-s", "/bin/sh", USER])
            .output()
            .expect("useradd runs (package `passwd`)");
        // 9: created meanwhile by a parallel test process.
        assert!(
            out.status.success() || out.status.code() == Some(9),
            "useradd {USER}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let u = conveyor::exec::lookup_user(USER).expect("the user exists now");
    std::fs::create_dir_all(&u.home).unwrap();
    conveyor::exec::chown_tree(&u.home, u.uid, u.gid).unwrap();
    (u.uid, u.home)
}

/// `bin` itself when other users can reach it; otherwise the same file, hard-linked (or
/// copied) into `dir`, which is opened to them.
fn reachable_copy(bin: &Path, dir: &Path) -> std::path::PathBuf {
    let real = std::fs::canonicalize(bin).unwrap();
    if real
        .ancestors()
        .skip(1)
        .all(conveyor::exec::others_can_traverse)
    {
        return real;
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let dest = dir.join("claude");
    if std::fs::hard_link(&real, &dest).is_err() {
        std::fs::copy(&real, &dest).unwrap();
    }
    dest
}

/// Fails with a clear message when `p` (or a folder above it) is closed to other users.
fn assert_open_to_others(p: &Path, bits: u32, what: &str) {
    let real = std::fs::canonicalize(p).unwrap();
    let mode = std::fs::metadata(&real).unwrap().permissions().mode();
    assert!(
        mode & bits == bits,
        "{what} {} (mode {mode:o}) is not open to other users: the agent user cannot use it",
        real.display()
    );
    for a in real.ancestors().skip(1) {
        assert!(
            conveyor::exec::others_can_traverse(a),
            "{} above {what} cannot be traversed by other users",
            a.display()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_runs_as_the_configured_user_and_the_line_goes_end_to_end() {
    assert!(
        conveyor::exec::is_root(),
        "this test must run as root (CI does): it creates the user {USER:?} and checks that the \
         agent runs as it with root_mode = {{ user = {USER:?} }}"
    );
    let (uid, home) = ensure_user();
    // A clone under a private folder (/root) hides node_modules from the agent user: hand it
    // the same binary from a folder it can reach (a hard link, else a copy).
    let bin_dir = tempfile::tempdir().unwrap();
    let claude = reachable_copy(&claude_bin(), bin_dir.path());
    assert_open_to_others(&claude, 0o005, "the claude binary");
    assert_open_to_others(Path::new("/usr/bin/env"), 0o005, "env");

    let mut d = Daemon::builder()
        // The agent must reach the data folder and the project repository.
        .open_to_others()
        .files(&[
            ("a.txt", "a\n"),
            // The gate's and the merge's regression runs run the agent's code: as the user.
            (
                ".conveyor.toml",
                "regression = \"test -f a.txt && test \\\"$(id -u)\\\" != 0\"\n",
            ),
        ])
        .mock()
        .claude_bin(&claude)
        // No HOME (the daemon takes the user's from /etc/passwd), no IS_SANDBOX.
        .no_agent_home()
        .config(&format!(
            "root_mode = {{ user = \"{USER}\" }}\npermission_mode = \"bypassPermissions\"\n"
        ))
        .start()
        .await;
    let cfg = conveyor::Config::load(&d.config_file()).unwrap();
    assert!(!cfg.agent_env.contains_key("IS_SANDBOX"));
    let (c, mock, repo) = (d.client(), d.mock(), d.repo());
    // The sandbox's probe runs as the agent's user too, and works unprivileged.
    let p = c.preflight().await.unwrap();
    let sandbox = p
        .items
        .iter()
        .find(|i| i.code == conveyor_api::PreflightCode::Sandbox)
        .unwrap();
    assert_eq!(
        sandbox.level,
        conveyor_api::PreflightLevel::Ok,
        "{sandbox:?}"
    );
    assert!(
        sandbox
            .message
            .ends_with(&format!("works as the user {USER}")),
        "{}",
        sandbox.message
    );
    let line = d.line("as a user", "record who runs").await;
    let s = line.session_id.clone();
    let plan = json!({"level": "light", "steps": [{"title": "who", "task": "x",
        "checks": [{"cmd": "test -s uid.txt"}, {"cmd": format!("test \"$(id -u)\" = {uid}")}]}]});
    mock.script(
        &s,
        json!({
            "1": [write_plan(&plan), text("planned")],
            "2": [
                bash("id -u > uid.txt && printf '%s' \"$HOME\" > home.txt && echo '{\"kind\":\"decided\",\"text\":\"ran as a user\"}' >> \"$CONVEYOR_JOURNAL\""),
                write("written.txt", "by the Write tool\n"),
                text("done"),
            ],
        }),
    )
    .await;

    let done = wait_state(c, &line.id, LineState::AwaitingAcceptance, 240).await;
    assert!(
        done.line.steps.iter().all(|st| st.state == StepState::Done),
        "{:#?}",
        done.line.steps
    );
    // The agent's Bash ran as the user, with the user's home.
    let wt = d.worktree(&line.id);
    let got_uid = std::fs::read_to_string(wt.join("uid.txt")).unwrap();
    assert_eq!(got_uid.trim(), uid.to_string(), "the agent's uid");
    assert_ne!(got_uid.trim(), "0");
    assert_eq!(
        std::fs::read_to_string(wt.join("home.txt")).unwrap(),
        home.display().to_string()
    );
    // The session lives in the user's home, and was resumed there.
    let transcript = wait_for(10, "the transcript", || async {
        walk(&home.join(".claude/projects")).into_iter().find(|f| {
            f.file_name()
                .is_some_and(|n| n.to_string_lossy() == format!("{s}.jsonl"))
        })
    })
    .await;
    assert!(transcript.exists());
    let reqs = mock.requests(&s).await;
    let last = reqs.iter().rfind(|e| e["step"] == 2).unwrap();
    assert!(
        last["conversation"]
            .as_str()
            .unwrap()
            .contains("conveyor step 1"),
        "step 2 resumed the planner's session"
    );
    // The journal written by the agent arrived.
    assert!(
        done.journal
            .iter()
            .any(|j| j.text.as_deref() == Some("ran as a user")),
        "{:#?}",
        done.journal
    );
    // Checkpoint commits exist on the line's branch, and main got the work.
    let log = git(repo, &["log", "--format=%s", &line.branch]);
    assert!(
        log.contains(&format!("conveyor: line {} step 2: who", line.id)),
        "{log}"
    );
    assert_eq!(git(repo, &["show", "main:uid.txt"]).trim(), uid.to_string());
    assert_eq!(
        git(repo, &["show", "main:written.txt"]),
        "by the Write tool\n"
    );
    // The agent reaches its own folders, not the database.
    let db = std::fs::metadata(d.data().join("conveyor.db")).unwrap();
    assert_eq!(
        db.permissions().mode() & 0o077,
        0,
        "conveyor.db is open to others"
    );
    let line_dir = std::fs::metadata(d.data().join("lines").join(&line.id)).unwrap();
    assert_eq!(std::os::unix::fs::MetadataExt::uid(&line_dir), uid);
    d.stop().await;
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
