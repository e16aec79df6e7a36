//! The API against its own document, under a fuzzer: schemathesis (pinned in
//! `tests/fuzz/requirements.txt`, configured by `tests/fuzz/schemathesis.toml`) runs every
//! operation with every check — server errors, status codes, content types, headers and bodies
//! against the schemas, valid requests accepted and invalid ones refused, auth — on a fixed seed.
//! Any failure fails the suite, with schemathesis' report (and its `curl` reproductions).

use std::path::PathBuf;
use std::process::Stdio;

use conveyor_api::{LineState, ReasonCode};

use crate::support::{Daemon, TOKEN, repo_root};

/// Test cases per operation and phase: with the seed below, enough for every operation to reach
/// past its 404s and 400s (the run fails on `missing_test_data`), and well under two minutes.
/// `FUZZ_EXAMPLES` and `FUZZ_SEED` override them for a longer run by hand.
const EXAMPLES: &str = "60";
const SEED: &str = "20261202";

fn setting(var: &str, default: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| default.to_string())
}

/// The fuzzer: `$SCHEMATHESIS`, else the `.venv` the test command installs it into.
fn schemathesis() -> PathBuf {
    if let Some(p) = std::env::var_os("SCHEMATHESIS") {
        return PathBuf::from(p);
    }
    let venv = repo_root().join(".venv");
    let st = if cfg!(windows) {
        venv.join("Scripts").join("st.exe")
    } else {
        venv.join("bin").join("st")
    };
    assert!(
        st.exists(),
        "schemathesis is not installed at {}: run the test command (npm test), or \
         `python3 -m venv .venv && .venv/bin/pip install -r tests/fuzz/requirements.txt`",
        st.display()
    );
    st
}

#[tokio::test(flavor = "multi_thread")]
async fn the_api_keeps_to_its_document_under_a_fuzzer() {
    let st = schemathesis();
    // Lines are queued, not run: the fuzzer tests the API's contract, and hundreds of lines
    // starting agents would only slow it.
    // A night that ends now: it is day, so the seeded question is decided by default by the
    // daemon's rules, and a decided question takes an answer.
    let now = chrono::Utc::now();
    let night = format!(
        "{}-{}",
        (now - chrono::Duration::hours(2)).format("%H:%M:%S"),
        (now - chrono::Duration::minutes(1)).format("%H:%M:%S")
    );
    let d = Daemon::builder()
        .config(&format!(
            "run_lines = false\nnight = \"{night}\"\ntimezone = \"UTC\""
        ))
        .start()
        .await;
    // What the fuzzer is given ids of (tests/fuzz/schemathesis.toml), so that every operation
    // is fuzzed past "not found": the sample project (a real repository); a line needing Anton
    // with an open question; a line awaiting acceptance; a queued line to cancel; queued lines
    // to reorder.
    let shared = d.handle().shared();
    let asking = d.line("asking", "a line with a question").await;
    let journal = shared.agent_dir(&asking.id).join("journal.jsonl");
    std::fs::create_dir_all(journal.parent().unwrap()).unwrap();
    std::fs::write(
        &journal,
        "{\"kind\":\"question\",\"text\":\"Which DB?\",\"options\":[\"sqlite\",\"pg\"],\"default\":\"sqlite\"}\n",
    )
    .unwrap();
    conveyor::line::ingest_journal(shared, &asking.id, None)
        .await
        .unwrap();
    shared
        .set_line_state(
            &asking.id,
            LineState::NeedsHuman,
            Some((ReasonCode::StepFailed, "seeded")),
            None,
        )
        .await
        .unwrap();
    conveyor::line::judge_by_rules(shared, &asking.id)
        .await
        .unwrap();
    let question = d.client().review().await.unwrap().projects[0].decided[0]
        .id
        .clone();
    // A run of that line with a short stream-json log, for its runs and its transcript.
    let run_id = {
        let data = shared.agent_dir(&asking.id);
        let data = data.ancestors().nth(3).unwrap();
        let log = data.join("seeded-run.jsonl");
        std::fs::write(
            &log,
            "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"hello\"}]}}\n",
        )
        .unwrap();
        let url = format!("sqlite://{}", data.join("conveyor.db").display());
        let mut c = <sqlx::SqliteConnection as sqlx::Connection>::connect(&url)
            .await
            .unwrap();
        let step = "seeded-step";
        sqlx::query(
            "INSERT INTO steps (id, line_id, n, kind, title, task, state) VALUES (?, ?, 1, 'planner', 'plan', 'plan', 'done')",
        )
        .bind(step)
        .bind(&asking.id)
        .execute(&mut c)
        .await
        .unwrap();
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO runs (step_id, line_id, kind, attempt, resumed, started_at, outcome, estimate_usd, log_path)
             VALUES (?, ?, 'planner', 1, 0, 0, 'finished', 0.1, ?) RETURNING id",
        )
        .bind(step)
        .bind(&asking.id)
        .bind(log.display().to_string())
        .fetch_one(&mut c)
        .await
        .unwrap();
        id
    };
    let done = d.line("done", "a line awaiting acceptance").await;
    shared
        .set_line_state(&done.id, LineState::AwaitingAcceptance, None, None)
        .await
        .unwrap();
    let queued = d.line("queued", "a line to cancel").await;
    let mut ordered = Vec::new();
    for n in 1..=3 {
        ordered.push(
            d.line(&format!("ordered {n}"), "a line to reorder")
                .await
                .id,
        );
    }

    // Its cache and any report go to a folder of its own, not the crate's; so does its
    // configuration: the suite's, and the ids of a whole valid order, which the environment
    // cannot carry (a list).
    let cwd = tempfile::tempdir().unwrap();
    let config = cwd.path().join("schemathesis.toml");
    let mut toml = std::fs::read_to_string(repo_root().join("tests/fuzz/schemathesis.toml"))
        .expect("tests/fuzz/schemathesis.toml");
    toml.push_str(&format!(
        "\n[[operations]]\ninclude-operation-id = \"reorder_lines\"\nparameters = {{ \"body.line_ids\" = {} }}\n",
        serde_json::to_string(&ordered).unwrap()
    ));
    std::fs::write(&config, toml).unwrap();
    let out = tokio::process::Command::new(&st)
        .current_dir(cwd.path())
        .arg("--config-file")
        .arg(&config)
        .args(["run", &format!("{}/api/openapi.json", d.url())])
        .args(["--checks", "all"])
        .args(["--seed", &setting("FUZZ_SEED", SEED)])
        .args(["--max-examples", &setting("FUZZ_EXAMPLES", EXAMPLES)])
        .args(["--no-color", "--generation-database", "none"])
        .env("CONVEYOR_TOKEN", TOKEN)
        .env("CONVEYOR_PROJECT_ID", d.project().await)
        .env("CONVEYOR_QUESTION_ID", &question)
        .env("CONVEYOR_LINE_ID", &asking.id)
        .env("CONVEYOR_RUN_ID", run_id.to_string())
        .env("CONVEYOR_AWAITING_LINE_ID", &done.id)
        .env("CONVEYOR_QUEUED_LINE_ID", &queued.id)
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", st.display()));
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "schemathesis failed ({}):\n{report}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    // Every operation of the document was fuzzed (none filtered out or skipped as broken) but
    // the one that serves the document, which schemathesis leaves out on purpose.
    let doc: serde_json::Value = reqwest::get(format!("{}/api/openapi.json", d.url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let n: usize = doc["paths"]
        .as_object()
        .unwrap()
        .values()
        .map(|item| item.as_object().unwrap().len())
        .sum::<usize>()
        - 1;
    assert!(
        report.contains(&format!("Tested: {n}\n")),
        "not all {n} operations were tested:\n{report}"
    );
    // The stateful phase ran and walked the document's links (a run whose links all broke, or
    // that never reached them, would pass every check it made and test no sequence at all).
    let covered: usize = report
        .lines()
        .find_map(|l| l.trim().strip_prefix("API Links:"))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no stateful phase in the report:\n{report}"));
    assert!(covered > 0, "no link was followed:\n{report}");
}
