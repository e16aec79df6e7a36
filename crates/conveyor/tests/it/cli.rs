//! `conveyord lines`, `conveyord line add | priority | cancel`, `conveyord budget` and
//! `conveyord check` against a running daemon: a table for a person, `--json` for scripts,
//! refusals that say what to fix.

use conveyor_api::{Line, LineState};

use crate::support::*;

/// Runs `conveyord <args> --url <url> --token <token>`: (exit code, stdout, stderr).
async fn conveyord(url: &str, token: &str, args: &[&str]) -> (i32, String, String) {
    let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    all.extend(["--url".into(), url.into(), "--token".into(), token.into()]);
    conveyord_with(all).await
}

/// Runs `conveyord <args>` as they are: (exit code, stdout, stderr; -1 when a signal ended it).
async fn conveyord_with(args: Vec<String>) -> (i32, String, String) {
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_conveyord"))
            .args(&args)
            .env("RUST_BACKTRACE", "0")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_queue_from_the_terminal_in_text_and_json() {
    let mut d = Daemon::builder().config("run_lines = false").start().await;
    let p = d.project().await.to_string();
    let url = d.url().to_string();

    // Added by the project's name, with a priority and a PlanFix task; --json is the API's line.
    let (code, out, err) = conveyord(
        &url,
        TOKEN,
        &[
            "line",
            "add",
            "--project",
            "p",
            "--title",
            "Fix the cart",
            "--task",
            "totals are off",
            "--priority",
            "5",
            "--planfix-task",
            "#42",
            "--json",
        ],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let cart: Line = serde_json::from_str(&out).unwrap();
    assert_eq!((cart.priority, cart.project_id.as_str()), (5, p.as_str()));
    assert_eq!(cart.planfix_task.as_deref(), Some("42"));
    // As a sentence, by the project's id, a negative priority.
    let (code, out, err) = conveyord(
        &url,
        TOKEN,
        &[
            "line",
            "add",
            "--project",
            &p,
            "--title",
            "Docs",
            "--task",
            "write them",
            "--priority",
            "-1",
        ],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("queued: Docs (priority -1, queued) "),
        "{out}"
    );

    // The table: a header, the daemon's order (highest priority first), aligned columns.
    let (code, out, _) = conveyord(&url, TOKEN, &["lines"]).await;
    assert_eq!(code, 0);
    let rows: Vec<&str> = out.lines().collect();
    assert_eq!(rows.len(), 3, "{out}");
    assert!(rows[0].starts_with("PRIO  STATE   PROJECT  TITLE"), "{out}");
    assert!(
        rows[1].starts_with("5     queued  p        Fix the cart"),
        "{out}"
    );
    assert!(rows[2].starts_with("-1    queued  p        Docs"), "{out}");
    assert!(rows[1].ends_with(&cart.id));

    // The priority changes the order; --json of the list is the API's lines.
    let id = cart.id.as_str();
    let (code, out, err) = conveyord(&url, TOKEN, &["line", "priority", id, "-5"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("priority set: Fix the cart (priority -5, queued)"),
        "{out}"
    );
    let (_, out, _) = conveyord(&url, TOKEN, &["lines", "--json"]).await;
    let lines: Vec<Line> = serde_json::from_str(&out).unwrap();
    assert_eq!(
        lines.iter().map(|l| l.title.as_str()).collect::<Vec<_>>(),
        ["Docs", "Fix the cart"]
    );

    // Cancel; then the filter by state finds it.
    let (code, out, _) = conveyord(&url, TOKEN, &["line", "cancel", id]).await;
    assert_eq!(
        (code, out.starts_with("cancelled: Fix the cart")),
        (0, true),
        "{out}"
    );
    let (_, out, _) = conveyord(&url, TOKEN, &["lines", "--state", "cancelled", "--json"]).await;
    let cancelled: Vec<Line> = serde_json::from_str(&out).unwrap();
    assert_eq!(cancelled.len(), 1);
    assert_eq!(cancelled[0].state, LineState::Cancelled);
    let (_, out, _) = conveyord(
        &url,
        TOKEN,
        &["lines", "--project", "p", "--state", "queued"],
    )
    .await;
    assert_eq!(out.lines().count(), 2, "{out}");

    // Refusals say what to fix, and the exit code says it failed.
    let (code, _, err) = conveyord(
        &url,
        TOKEN,
        &[
            "line",
            "add",
            "--project",
            "nope",
            "--title",
            "x",
            "--task",
            "y",
        ],
    )
    .await;
    assert_ne!(code, 0);
    assert!(
        err.contains("no project \"nope\"") && err.contains("the daemon has: p"),
        "{err}"
    );
    let (code, _, err) = conveyord(
        &url,
        TOKEN,
        &[
            "line",
            "add",
            "--project",
            "p",
            "--title",
            "docs",
            "--task",
            "again",
        ],
    )
    .await;
    assert_ne!(code, 0);
    assert!(err.contains("duplicate_title"), "{err}");
    let (code, _, err) = conveyord(&url, TOKEN, &["lines", "--state", "sleeping"]).await;
    assert_ne!(code, 0);
    assert!(
        err.contains("not a line state") && err.contains("awaiting_acceptance"),
        "{err}"
    );
    let (code, _, err) = conveyord(&url, "wrong", &["lines"]).await;
    assert_ne!(code, 0);
    assert!(err.contains("401"), "{err}");
    d.stop().await;
}

/// `conveyord budget` prints the running daemon's budget; with a wrong token it fails and says
/// why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conveyord_budget_prints_the_pools_kinds_and_misses() {
    let mut d = Daemon::builder().config("run_lines = false").start().await;
    let url = d.url().to_string();
    let (code, out, err) = conveyord(&url, TOKEN, &["budget"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    for want in [
        "pools:",
        "window",
        "$0.0000 of    $50.00",
        "executor",
        "misses: 0 in all",
    ] {
        assert!(out.contains(want), "{want:?} missing in:\n{out}");
    }
    let (code, _, err) = conveyord(&url, "wrong", &["budget"]).await;
    assert_ne!(code, 0);
    assert!(err.contains("401"), "{err}");
    d.stop().await;
}

/// `conveyord check` prints the preflight item by item, and its exit code says whether anything
/// blocks (2) or not (0); it reads the token from `--token-file` like any client subcommand.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conveyord_check_prints_what_blocks_and_says_so_in_its_exit_code() {
    let run = |url: String, token_file: &std::path::Path| {
        conveyord_with(vec![
            "check".into(),
            "--url".into(),
            url,
            "--token-file".into(),
            token_file.display().to_string(),
        ])
    };
    let tmp = tempfile::tempdir().unwrap();
    let token_file = tmp.path().join("token");
    std::fs::write(&token_file, format!("{TOKEN}\n")).unwrap();

    // No agent CLI: it blocks, and the fix is printed beneath.
    let mut d = Daemon::builder().config("run_lines = false").start().await;
    d.project().await;
    let (code, text, err) = run(d.url().to_string(), &token_file).await;
    assert_eq!(code, 2, "{text}\n{err}");
    assert!(
        text.contains("blocking agent_binary: the agent CLI cannot be started"),
        "{text}"
    );
    assert!(text.contains("fix: install the CLI"), "{text}");
    assert!(text.contains("ok       main_branch [project "), "{text}");
    assert!(text.ends_with("something blocks: lines it concerns wait until it is fixed\n"));
    d.stop().await;

    // The real CLI, logged in: nothing blocks.
    let mut d = Daemon::builder()
        .config("run_lines = false")
        .mock()
        .start()
        .await;
    let (code, text, _) = run(d.url().to_string(), &token_file).await;
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("ok       agent_login: claude is logged in (api_key)"),
        "{text}"
    );
    assert!(
        text.contains("ok       sandbox: agent runs go inside bubblewrap "),
        "{text}"
    );
    assert!(text.ends_with("nothing blocks\n"), "{text}");

    // The sandbox off: said loudly, with the fix, but it blocks nothing.
    d.set_config("[sandbox]\nmode = \"off\"\n");
    d.restart().await;
    let (code, text, _) = run(d.url().to_string(), &token_file).await;
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("warning  sandbox: the sandbox is off ([sandbox] mode = \"off\"): agents run without bubblewrap"),
        "{text}"
    );
    assert!(
        text.contains("         fix: set [sandbox] mode = \"required\" in "),
        "{text}"
    );
    assert!(text.ends_with("nothing blocks\n"), "{text}");

    // A refused token is an error (1), not a verdict.
    std::fs::write(&token_file, "wrong\n").unwrap();
    let (code, _, err) = run(d.url().to_string(), &token_file).await;
    assert_eq!(code, 1);
    assert!(err.contains("401"), "{err}");
    d.stop().await;
}
