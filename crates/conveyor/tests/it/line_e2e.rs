//! A line end to end with the real `claude` binary against the scripted mock: the planner
//! writes the plan through a real tool call, executors change files through real tool calls,
//! the Stop hook blocks once on a red check and the model fixes it, journal entries arrive,
//! checkpoints are commits, the session is really resumed, costs add up as deltas; then
//! remarks add a step in the same session, and accept removes the branch and worktree.

use conveyor_api::{DecisionSource, LineState, NewLine, StepKind, StepState};
use serde_json::json;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_runs_end_to_end_with_the_real_cli() {
    let mut d = Daemon::builder()
        .repo_name("проект #1")
        .files(&[
            ("README.md", "demo\n"),
            (
                ".conveyor.toml",
                "regression = \"grep -q world hello.txt && test -f notes.txt\"\n",
            ),
        ])
        .mock()
        .start()
        .await;
    let (c, mock, repo) = (d.client(), d.mock(), d.repo());
    let mut events = c.events().await.unwrap();

    let line = c
        .create_line(&NewLine {
            project_id: d.project().await.into(),
            title: "greet".into(),
            task: "Create hello.txt saying hello world, and notes.txt.".into(),
            priority: Some(5),
            planfix_task: None,
        })
        .await
        .unwrap();
    assert_eq!(line.state, LineState::Queued);
    assert_eq!(line.branch, format!("line/{}", line.id));
    let session = line.session_id.clone();
    let plan = json!({"level": "light", "steps": [
        {"title": "hello", "task": "write hello.txt", "checks": [{"cmd": "grep -q world hello.txt", "expect_exit": 0}]},
        {"title": "notes", "task": "write notes.txt", "checks": [{"cmd": "test -f notes.txt"}]}
    ]});
    mock.script(
        &session,
        json!({
            "1": [write_plan(&plan), text("planned")],
            // A typo first: the Stop hook blocks, the model fixes it.
            "2": [write("hello.txt", "hello wrld\n"), text("done"), write("hello.txt", "hello world\n"), text("fixed")],
            "3": [bash(concat!(
                "echo notes > notes.txt && ",
                "echo '{\"kind\":\"question\",\"text\":\"Keep notes.txt?\",\"options\":[\"yes\",\"no\"],\"default\":\"yes\",\"why\":\"they may be scratch\",\"reversible\":true,\"expensive\":false}' >> \"$CONVEYOR_JOURNAL\" && ",
                "echo 'this is not json' >> \"$CONVEYOR_JOURNAL\" && ",
                "echo '{\"kind\":\"decided\",\"text\":\"notes are plain text\",\"why\":\"simplest\"}' >> \"$CONVEYOR_JOURNAL\""
            )), text("notes written")],
            // Anton's remarks, after the judge (4) and the tester (5).
            "6": [bash("echo 'more notes' >> notes.txt"), text("remarks done")],
        }),
    )
    .await;
    // Step 3's question is judged in a session of the judge's own: the default stands.
    mock.script_line(
        &line.id,
        "judge",
        json!({"*": [judge_verdict(&[("Keep notes", "decided", None)]), text("judged")]}),
    )
    .await;

    let done = wait_state(c, &line.id, LineState::AwaitingAcceptance, 180).await;
    let l = &done.line;
    assert_eq!(l.level, Some(conveyor_api::Level::Light));
    let kinds: Vec<StepKind> = l.steps.iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds,
        [
            StepKind::Planner,
            StepKind::Executor,
            StepKind::Executor,
            StepKind::Judge,
            StepKind::Tester
        ]
    );
    assert!(
        l.steps
            .iter()
            .all(|s| s.state == StepState::Done && s.attempts == 1),
        "{:#?}",
        l.steps
    );

    // Every step ran, so each has a duration.
    assert!(
        l.steps.iter().all(|s| s.duration_ms.is_some()),
        "{:#?}",
        l.steps
    );
    // The branch's diff against the main commit it forked from: its own files, still whole
    // after the merge into main.
    let diff = c.line_diff(&line.id).await.unwrap();
    let mut paths: Vec<&str> = diff.files.iter().map(|f| f.path.as_str()).collect();
    paths.sort_unstable();
    assert_eq!(paths, ["hello.txt", "notes.txt"], "{diff:#?}");
    let hello = diff.files.iter().find(|f| f.path == "hello.txt").unwrap();
    assert_eq!(hello.change, conveyor_api::FileChange::Added);
    assert!(
        hello.patch.starts_with("@@") && hello.patch.contains("+hello world"),
        "{}",
        hello.patch
    );
    assert!(
        !hello.patch.contains("hello wrld"),
        "only the net change: {}",
        hello.patch
    );

    // The session was the line's (the judge's and the tester's apart), and it was really
    // resumed: each step's first request carries the earlier steps' conversation.
    let reqs = mock.requests(&session).await;
    let all = mock.log().await;
    assert!(
        all.iter()
            .filter(|e| e["kind"] == "messages" && e["side"] != true)
            .all(|e| e["session"] == session.as_str()
                || e["step_kind"] == "judge"
                || e["step_kind"] == "tester"),
        "{all:#?}"
    );
    let first_of = |n: i64| {
        reqs.iter()
            .find(|e| e["step"] == n)
            .unwrap_or_else(|| panic!("no request for step {n}"))
            .clone()
    };
    assert!(
        first_of(2)["conversation"]
            .as_str()
            .unwrap()
            .contains("conveyor step 1 attempt 1")
    );
    assert!(
        first_of(3)["conversation"]
            .as_str()
            .unwrap()
            .contains("conveyor step 2 attempt 1")
    );

    // The Stop hook blocked once on the red check; the model saw why and fixed it.
    let step2: Vec<_> = reqs.iter().filter(|e| e["step"] == 2).collect();
    assert_eq!(step2.len(), 4, "{step2:#?}");
    let after = step2[2]["after"].as_str().unwrap();
    assert!(
        after.contains("Stop hook feedback") && after.contains("grep -q world hello.txt"),
        "{after}"
    );

    // The judge ran in a fresh session of its own, never the line's.
    let judge = l.steps.iter().find(|s| s.kind == StepKind::Judge).unwrap();
    let judge_session = judge.session_id.clone().expect("the judge's own session");
    assert_ne!(judge_session, session);
    let judged = mock.requests(&judge_session).await;
    assert!(
        judged.iter().all(|e| e["step_kind"] == "judge"),
        "{judged:#?}"
    );
    assert!(
        judged[0]["conversation"]
            .as_str()
            .unwrap()
            .contains("Keep notes.txt?")
    );
    let tester = l.steps.iter().find(|s| s.kind == StepKind::Tester).unwrap();
    let tested = mock
        .requests(
            tester
                .session_id
                .as_deref()
                .expect("the tester's own session"),
        )
        .await;
    assert_ne!(tester.session_id.as_deref(), Some(session.as_str()));
    // Costs: the CLI reports a cumulative total; each step's cost is its own requests.
    for s in &l.steps {
        let of_step = match s.kind {
            StepKind::Judge => &judged,
            StepKind::Tester => &tested,
            _ => &reqs,
        };
        let n = of_step.iter().filter(|e| e["step"] == s.n).count() as f64;
        assert!(
            (s.cost_usd - n * OPUS_REQUEST_USD).abs() < 1e-6,
            "step {} cost {} for {n} requests",
            s.n,
            s.cost_usd
        );
        assert!(s.tokens.input > 0);
    }
    assert!(
        (l.cost_usd - (reqs.len() + judged.len() + tested.len()) as f64 * OPUS_REQUEST_USD).abs()
            < 1e-6
    );
    assert!((done.budget.cost_usd - l.cost_usd).abs() < 1e-9);

    // Journal: three entries, the malformed one kept raw and flagged; the question was judged
    // and its default stands, so it is not on the review page but in the collapsed list with
    // the agent's own decision.
    assert_eq!(done.journal.len(), 3, "{:#?}", done.journal);
    let bad: Vec<_> = done.journal.iter().filter(|j| !j.valid).collect();
    assert_eq!(bad.len(), 1);
    assert_eq!(bad[0].raw, "this is not json");
    assert!(bad[0].error.is_some());
    let review = c.review().await.unwrap();
    assert_eq!(review.projects.len(), 1);
    assert!(review.projects[0].questions.is_empty(), "{review:#?}");
    assert_eq!((review.pending_judgement, review.in_rework), (0, 0));
    let decided = &review.projects[0].decided;
    assert_eq!(decided.len(), 2, "{decided:#?}");
    let by = |source| decided.iter().find(|d| d.source == source).unwrap();
    assert_eq!(by(DecisionSource::Agent).text, "notes are plain text");
    assert_eq!(by(DecisionSource::Judge).text, "Keep notes.txt?");
    assert_eq!(
        by(DecisionSource::Judge).why.as_deref(),
        Some("scripted: decided")
    );

    // Checkpoints are commits on the line's branch; main moved forward by the merge.
    let log = git(
        repo,
        &["log", "--format=%s", &format!("main..{}", l.branch)],
    );
    assert!(log.trim().is_empty(), "branch not merged: {log}");
    let subjects = git(repo, &["log", "--format=%s", "main"]);
    assert!(
        subjects.contains(&format!("line {} step 2: hello", l.id)),
        "{subjects}"
    );
    assert!(
        subjects.contains(&format!("line {} step 3: notes", l.id)),
        "{subjects}"
    );
    assert!(
        subjects.lines().next().unwrap().starts_with("Merge line/"),
        "{subjects}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("hello.txt")).unwrap(),
        "hello world\n"
    );

    // Every state change came over SSE.
    let mut seen = Vec::new();
    while !seen.contains(&"awaiting_acceptance".to_string()) {
        let ev = tokio::time::timeout(std::time::Duration::from_secs(10), events.next())
            .await
            .expect("event in time")
            .expect("stream open")
            .unwrap();
        if ev.line_id.as_deref() == Some(line.id.as_str())
            && ev.kind == conveyor_api::EventKind::Line
            && let Some(s) = ev.state
        {
            seen.push(s.as_str().to_string());
        }
    }
    for s in [
        "planning",
        "running",
        "gate",
        "merging",
        "awaiting_acceptance",
    ] {
        assert!(seen.contains(&s.to_string()), "{s} missing from {seen:?}");
    }

    // Remarks: a new step resumed in the same session; the line goes round again.
    let before = reqs.len();
    let l2 = c
        .remarks(&line.id, "Add a second line to notes.txt")
        .await
        .unwrap();
    assert_eq!(l2.state, LineState::Queued);
    let done2 = wait_state(c, &line.id, LineState::AwaitingAcceptance, 120).await;
    let tail: Vec<_> = done2.line.steps[5..]
        .iter()
        .map(|s| (s.n, s.kind, s.state))
        .collect();
    // The remarks changed the code: the tester checked it again.
    assert_eq!(
        tail,
        [
            (6, StepKind::Remarks, StepState::Done),
            (7, StepKind::Tester, StepState::Done)
        ]
    );
    let reqs = mock.requests(&session).await;
    let r4: Vec<_> = reqs.iter().skip(before).collect();
    assert!(r4.iter().all(|e| e["step"] == 6));
    assert!(
        r4[0]["conversation"]
            .as_str()
            .unwrap()
            .contains("conveyor step 3 attempt 1")
    );
    assert!(
        r4[0]["conversation"]
            .as_str()
            .unwrap()
            .contains("Add a second line to notes.txt")
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("notes.txt")).unwrap(),
        "notes\nmore notes\n"
    );

    // Accept: branch and worktree go, and with the branch its diff.

    let accepted = c.accept(&line.id).await.unwrap();
    assert_eq!(accepted.state, LineState::Accepted);
    assert!(!git(repo, &["branch", "--list", &l.branch]).contains("line/"));
    assert!(!d.worktree(&line.id).exists());
    let gone = c.line_diff(&line.id).await.unwrap();
    assert!(gone.base.is_none() && gone.files.is_empty(), "{gone:?}");
    let n = mock.requests(&session).await.len();
    d.stop().await;
    // After the line ended, nothing more was sent in its session.
    assert_eq!(d.mock().requests(&session).await.len(), n);
}
