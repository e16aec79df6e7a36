//! The chain of roles with the real `claude` against the scripted mock, real git and SQLite:
//! the project's own reviewer in a session of its own and its `rework` answered by a fixer in
//! the line's session; the level the diff forces; clicks; three red rounds; the before-deploy
//! boundary and a project's hook; a verdict without work; a test red on main too.

use conveyor_api::{
    JournalKind, Level, LineDetail, LineState, ReasonCode, RoleCall, StepKind, StepState,
};
use serde_json::{Value, json};

use crate::support::*;

fn plan(level: &str, steps: &[(&str, &str)]) -> Value {
    let steps: Vec<Value> = steps
        .iter()
        .map(|(title, check)| json!({"title": title, "task": title, "checks": [{"cmd": check}]}))
        .collect();
    json!({"level": level, "steps": steps})
}

fn kinds(l: &LineDetail) -> Vec<StepKind> {
    l.line.steps.iter().map(|s| s.kind).collect()
}

/// A checking role's turn writing its verdict where its prompt says (the mock reads the path
/// from the prompt).
fn verdict(v: &Value) -> Value {
    json!({"tool": "Write", "input": {
        "file_path": "{{prompt:\\$CONVEYOR_VERDICT \\(([^)]+)\\)}}",
        "content": v.to_string()}})
}

/// A journal entry appended through the real Bash tool.
fn journal(entry: &Value) -> String {
    format!("echo '{entry}' >> \"$CONVEYOR_JOURNAL\"")
}

const REVIEWER: &str = "---\nname: code-reviewer\ndescription: Reviews the line's code\ntools: Read, Grep, Glob, Bash\n---\nYou are the PROJECT-REVIEWER-FROM-MAIN. Review the diff.\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_medium_line_is_reviewed_by_the_projects_agent_and_its_rework_goes_to_a_fixer() {
    let d = Daemon::builder()
        .files(&[
            ("a.txt", "a\n"),
            (".claude/agents/code-reviewer.md", REVIEWER),
        ])
        .mock()
        .start()
        .await;
    let (c, mock) = (d.client(), d.mock());
    let l = d.line("greet", "write a greeting").await;
    mock.script(
        &l.session_id,
        json!({
            "1": [write_plan(&plan("medium", &[("greet", "test -f hello.txt")])), text("planned")],
            "2": [write("hello.txt", "helo\n"), text("written")],
            // The fixer, after the reviewer's rework (step 3 is the tester, 4 the reviewer).
            "5": [write("hello.txt", "hello\n"), text("fixed the typo")],
        }),
    )
    .await;
    mock.script_line(
        &l.id,
        "reviewer",
        json!({
            "4": [bash("git diff --stat HEAD~1"),
                  verdict(&json!({"verdict": "rework", "findings": [{"path": "hello.txt", "line": 1, "text": "typo: helo should be hello"}]})),
                  text("sent back")],
            "7": [bash("cat hello.txt"), verdict(&json!({"verdict": "pass", "findings": []})), text("good")],
        }),
    )
    .await;

    let done = wait_state(c, &l.id, LineState::AwaitingAcceptance, 240).await;
    assert_eq!(
        kinds(&done),
        [
            StepKind::Planner,
            StepKind::Executor,
            StepKind::Tester,
            StepKind::Reviewer,
            StepKind::Fixer,
            StepKind::Tester,
            StepKind::Reviewer
        ]
    );
    assert_eq!(done.line.level, Some(Level::Medium));
    let steps = &done.line.steps;
    // The reviewer ran as the project's agent, in sessions of its own, never the line's.
    for r in [&steps[3], &steps[6]] {
        assert_eq!(r.agent.as_deref(), Some("code-reviewer"), "{r:#?}");
        let s = r.session_id.as_deref().unwrap();
        assert_ne!(s, l.session_id);
    }
    assert_ne!(steps[3].session_id, steps[6].session_id);
    // The tester had no agent of the project's: the built-in prompt.
    assert_eq!(steps[2].agent, None);
    let first = steps[3].verdict.as_ref().unwrap();
    assert_eq!(first.verdict, RoleCall::Rework);
    assert_eq!(first.findings[0].path.as_deref(), Some("hello.txt"));
    assert_eq!(steps[6].verdict.as_ref().unwrap().verdict, RoleCall::Pass);

    // As the mock saw it: the reviewer's requests came in the reviewer's sessions with the
    // agent's own prompt as the system prompt (`--agent` with the definition from main).
    let log = mock.log().await;
    let reviewed: Vec<&Value> = log
        .iter()
        .filter(|e| e["step_kind"] == "reviewer" && e["line"] == l.id.as_str())
        .collect();
    assert!(!reviewed.is_empty());
    for e in &reviewed {
        assert_ne!(e["session"], l.session_id.as_str());
        assert!(
            e["system_tail"]
                .as_str()
                .unwrap()
                .contains("PROJECT-REVIEWER-FROM-MAIN"),
            "{e:#?}"
        );
    }
    let tester = log
        .iter()
        .find(|e| e["step_kind"] == "tester" && e["line"] == l.id.as_str())
        .unwrap();
    assert!(
        !tester["system_tail"]
            .as_str()
            .unwrap()
            .contains("PROJECT-REVIEWER"),
        "{tester:#?}"
    );
    // The fixer ran in the line's session with the reviewer's finding.
    let fixer = mock
        .requests(&l.session_id)
        .await
        .into_iter()
        .find(|e| e["step"] == 5)
        .unwrap();
    assert!(
        fixer["conversation"]
            .as_str()
            .unwrap()
            .contains("hello.txt:1: typo: helo should be hello"),
        "{fixer:#?}"
    );
    assert_eq!(done.line.rounds, 0, "rounds reset once the line merged");
    assert_eq!(
        git(d.repo(), &["show", "main:hello.txt"]),
        "hello\n",
        "the fixed file merged"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_migration_makes_a_light_line_full_journaled_and_a_skeptic_runs() {
    let d = Daemon::builder()
        .files(&[("a.txt", "a\n")])
        .mock()
        .start()
        .await;
    let (c, mock) = (d.client(), d.mock());
    let l = d.line("schema", "add a column").await;
    mock.script(
        &l.session_id,
        json!({
            "1": [write_plan(&plan("light", &[("schema", "true")])), text("planned")],
            "2": [write("db/migrations/0002_add.sql", "ALTER TABLE t ADD c INT;\n"), text("migrated")],
        }),
    )
    .await;
    let done = wait_state(c, &l.id, LineState::AwaitingAcceptance, 240).await;
    assert_eq!(done.line.level, Some(Level::Full));
    let why = done.line.level_why.clone().unwrap();
    assert!(why.contains("db/migrations/0002_add.sql"), "{why}");
    assert_eq!(
        &kinds(&done)[2..],
        [StepKind::Tester, StepKind::Reviewer, StepKind::Skeptic]
    );
    // The raise over the planner's choice is journaled as the daemon's decision (the
    // planner's own choice is its own fork).
    let raised: Vec<_> = done
        .journal
        .iter()
        .filter(|e| {
            e.kind == Some(JournalKind::Decided)
                && e.text
                    .as_deref()
                    .is_some_and(|t| t.starts_with("conveyor: the level is"))
        })
        .collect();
    assert_eq!(raised.len(), 1, "{raised:#?}");
    assert!(
        raised
            .iter()
            .any(|e| e.text.as_deref().is_some_and(|t| t.ends_with("full"))
                && e.why.as_deref().is_some_and(|w| w.contains("a migration")))
    );
    // Every checker passed by really looking: each ran a command before its verdict.
    for s in &done.line.steps[2..] {
        assert_eq!(
            s.verdict.as_ref().unwrap().verdict,
            RoleCall::Pass,
            "{s:#?}"
        );
    }

    // Anton may raise a level, never lower it.
    let e = c.raise_level(&l.id, Level::Light).await.unwrap_err();
    assert_eq!(e.code(), Some(conveyor_api::ErrorCode::InvalidState), "{e}");
    let other = d.line("other", "something else").await;
    let raised = c.raise_level(&other.id, Level::Medium).await.unwrap();
    assert_eq!(
        (raised.level, raised.level_why.as_deref()),
        (Some(Level::Medium), Some("Anton raised it"))
    );
    let e = c.raise_level(&other.id, Level::Light).await.unwrap_err();
    assert_eq!(e.code(), Some(conveyor_api::ErrorCode::LevelLower), "{e}");
    c.cancel(&other.id).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ui_without_scenarios_needs_anton_and_a_red_click_is_a_fixer_round() {
    let d = Daemon::builder()
        .files(&[
            ("a.txt", "a\n"),
            (".conveyor.toml", "ui_paths = [\"web/**\"]\n"),
        ])
        .mock()
        .start()
        .await;
    let (c, mock) = (d.client(), d.mock());
    let q = d
        .add_project(
            "q",
            &[(
                ".conveyor.toml",
                // Green on main (no page yet), red once the page exists unclicked.
                "ui_paths = [\"web/**\"]\nui_scenarios = \"test ! -f web/index.html || test -f web/clicked\"\n",
            )],
        )
        .await;
    let bare = d.line("page", "a page").await;
    let clicked = d.line_in(&q, "page", "a page", 0).await;
    for l in [&bare, &clicked] {
        mock.script(
            &l.session_id,
            json!({
                "1": [write_plan(&plan("light", &[("page", "true")])), text("planned")],
                "2": [write("web/index.html", "<p>hi</p>\n"), text("page written")],
                "3": [write("web/clicked", "yes\n"), text("the scenario passes now")],
            }),
        )
        .await;
    }
    let stopped = wait_state(c, &bare.id, LineState::NeedsHuman, 240).await;
    assert_eq!(stopped.line.reason_code, Some(ReasonCode::NoUiScenarios));
    assert!(
        stopped
            .line
            .reason
            .as_deref()
            .unwrap()
            .contains("web/index.html"),
        "{:?}",
        stopped.line.reason
    );
    // No fixer can cure it: Anton at once, and the question is on the morning page.
    assert_eq!(kinds(&stopped), [StepKind::Planner, StepKind::Executor]);
    let review = c.review().await.unwrap();
    assert!(
        review
            .projects
            .iter()
            .flat_map(|p| &p.questions)
            .any(|x| x.line_id == bare.id && x.text.contains("ui_scenarios")),
        "{review:#?}"
    );

    let done = wait_state(c, &clicked.id, LineState::AwaitingAcceptance, 240).await;
    assert_eq!(
        kinds(&done),
        [
            StepKind::Planner,
            StepKind::Executor,
            StepKind::Fixer,
            StepKind::Tester
        ]
    );
    let fixer = mock
        .requests(&clicked.session_id)
        .await
        .into_iter()
        .find(|e| e["step"] == 3)
        .unwrap();
    assert!(
        fixer["conversation"]
            .as_str()
            .unwrap()
            .contains("`test ! -f web/index.html || test -f web/clicked` exited 1"),
        "{fixer:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_red_rounds_need_anton_with_a_question_saying_what_fails_and_what_was_tried() {
    let d = Daemon::builder()
        .files(&[
            ("a.txt", "a\n"),
            (
                ".conveyor.toml",
                "checklist = [{ cmd = \"test ! -f broken.txt\" }]\n",
            ),
        ])
        .mock()
        .start()
        .await;
    let (c, mock) = (d.client(), d.mock());
    let l = d.line("stubborn", "break it").await;
    mock.script(
        &l.session_id,
        json!({
            "1": [write_plan(&plan("light", &[("break", "true")])), text("planned")],
            "2": [write("broken.txt", "x\n"), text("done")],
            "3": [write("note1.txt", "tried\n"), text("tried once")],
            "4": [write("note2.txt", "tried\n"), text("tried twice")],
        }),
    )
    .await;
    let stopped = wait_state(c, &l.id, LineState::NeedsHuman, 240).await;
    assert_eq!(stopped.line.reason_code, Some(ReasonCode::GateFailed));
    assert_eq!(stopped.line.rounds, 3);
    assert_eq!(
        kinds(&stopped),
        [
            StepKind::Planner,
            StepKind::Executor,
            StepKind::Fixer,
            StepKind::Fixer
        ]
    );
    let review = c.review().await.unwrap();
    let q = review
        .projects
        .iter()
        .flat_map(|p| &p.questions)
        .find(|x| x.line_id == l.id)
        .expect("the stopped line's question is on the morning page");
    assert!(q.text.contains("cannot pass the check"), "{}", q.text);
    assert!(q.text.contains("test ! -f broken.txt"), "{}", q.text);
    assert!(q.text.contains("tried 2 fixer rounds"), "{}", q.text);
    assert!(!q.options.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn before_deploy_a_change_needs_a_test_or_an_uncovered_entry_and_a_project_hook_can_block() {
    let d = Daemon::builder()
        .files(&[
            ("a.txt", "a\n"),
            ("tests/a.test", "ok\n"),
            (
                ".conveyor.toml",
                "tests_paths = [\"tests/**\"]\n[hooks]\nbefore_deploy = \"test -f approved || { echo 'no approval file in the worktree'; exit 1; }\"\n",
            ),
        ])
        .mock()
        .start()
        .await;
    let (c, mock) = (d.client(), d.mock());
    // Untested, then an `uncovered` entry, then the hook's approval.
    let untested = d.line("untested", "change the code").await;
    mock.script(
        &untested.session_id,
        json!({
            "1": [write_plan(&plan("light", &[("code", "true")])), text("planned")],
            "2": [write("code.txt", "x\n"), text("changed")],
            "4": [bash(&journal(&json!({"kind": "uncovered", "text": "code.txt: checked by hand with cat", "why": "no test harness for it"}))), text("said how")],
            "6": [write("approved", "yes\n"), text("approved")],
        }),
    )
    .await;
    let done = wait_state(c, &untested.id, LineState::AwaitingAcceptance, 300).await;
    assert_eq!(
        kinds(&done),
        [
            StepKind::Planner,
            StepKind::Executor,
            StepKind::Tester,
            StepKind::Fixer,
            StepKind::Tester,
            StepKind::Fixer,
            StepKind::Tester
        ]
    );
    let asked = mock.requests(&untested.session_id).await;
    let said = |n: i64| {
        asked.iter().find(|e| e["step"] == n).unwrap()["conversation"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(
        said(4).contains("no test changed (tests_paths: tests/**)"),
        "{}",
        said(4)
    );
    // The project's hook blocked with what it printed.
    assert!(
        said(6).contains("no approval file in the worktree"),
        "{}",
        said(6)
    );
    assert!(said(6).contains("before_deploy"), "{}", said(6));

    // A line that changes a test passes the boundary at once (the hook's approval aside).
    let tested = d.line("tested", "change the code with its test").await;
    mock.script(
        &tested.session_id,
        json!({
            "1": [write_plan(&plan("light", &[("code", "true")])), text("planned")],
            "2": [write("tests/code.test", "covers code\n"), write("approved", "yes\n"), text("changed")],
        }),
    )
    .await;
    let done = wait_state(c, &tested.id, LineState::AwaitingAcceptance, 240).await;
    assert_eq!(
        kinds(&done),
        [StepKind::Planner, StepKind::Executor, StepKind::Tester]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reviewer_verdict_written_without_any_work_is_a_failed_run() {
    let d = Daemon::builder()
        .files(&[("a.txt", "a\n")])
        .mock()
        .start()
        .await;
    let (c, mock) = (d.client(), d.mock());
    let l = d.line("lazy", "a change").await;
    mock.script(
        &l.session_id,
        json!({
            "1": [write_plan(&plan("medium", &[("change", "true")])), text("planned")],
            "2": [write("b.txt", "b\n"), text("changed")],
        }),
    )
    .await;
    // Step 3 is the tester (unscripted: it passes); step 4 the reviewer.
    mock.script_line(
        &l.id,
        "reviewer",
        json!({
            "4.1": [verdict(&json!({"verdict": "pass", "findings": []})), text("looks fine")],
            "4": [bash("cat b.txt"), verdict(&json!({"verdict": "pass", "findings": []})), text("checked")],
        }),
    )
    .await;
    let done = wait_state(c, &l.id, LineState::AwaitingAcceptance, 240).await;
    let reviewer = &done.line.steps[3];
    assert_eq!(
        (reviewer.kind, reviewer.state, reviewer.attempts),
        (StepKind::Reviewer, StepState::Done, 2)
    );
    // The first run's verdict was not taken; the second, after real work, was.
    let runs: Vec<Value> = mock
        .log()
        .await
        .into_iter()
        .filter(|e| e["step_kind"] == "reviewer" && e["line"] == l.id.as_str())
        .collect();
    let attempts: std::collections::BTreeSet<i64> = runs
        .iter()
        .map(|e| e["attempt"].as_i64().unwrap())
        .collect();
    assert_eq!(attempts, [1, 2].into());
    // Two sessions: every run of a checker is fresh.
    let sessions: std::collections::BTreeSet<&str> = runs
        .iter()
        .map(|e| e["session"].as_str().unwrap())
        .collect();
    assert_eq!(sessions.len(), 2, "{sessions:?}");
    assert_eq!(reviewer.verdict.as_ref().unwrap().verdict, RoleCall::Pass);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_projects_before_question_hook_sends_a_question_back_with_what_it_said() {
    let d = Daemon::builder()
        .files(&[
            ("a.txt", "a\n"),
            (
                ".conveyor.toml",
                "[hooks]\nbefore_question = \"test -f asked-ops || { echo 'ask the ops channel before Anton'; exit 1; }\"\n",
            ),
        ])
        .mock()
        .start()
        .await;
    let (c, mock) = (d.client(), d.mock());
    let l = d.line("ask", "a change that asks").await;
    mock.script(
        &l.session_id,
        json!({
            "1": [write_plan(&plan("light", &[("change", "true")])), text("planned")],
            "2": [bash(&journal(&json!({"kind": "question", "text": "Restart the cache servers?", "options": ["now", "tonight"], "default": "tonight", "why": "it drops sessions", "reversible": true, "expensive": false}))), text("asked")],
            // The rework the hook asked for (step 3 is the judge).
            "4": [write("asked-ops", "ops said: ask Anton\n"), text("asked ops")],
        }),
    )
    .await;
    mock.script_line(
        &l.id,
        "judge",
        json!({"*": [judge_verdict(&[("cache servers", "validated", None)]), text("judged")]}),
    )
    .await;
    let waiting = wait_state(c, &l.id, LineState::WaitingAnswer, 240).await;
    assert_eq!(
        kinds(&waiting),
        [
            StepKind::Planner,
            StepKind::Executor,
            StepKind::Judge,
            StepKind::Rework,
            StepKind::Judge
        ]
    );
    let q = &waiting.questions[0];
    assert_eq!(
        (q.status, q.reworks),
        (conveyor_api::QuestionStatus::Validated, 1)
    );
    let rework = mock
        .requests(&l.session_id)
        .await
        .into_iter()
        .find(|e| e["step"] == 4)
        .unwrap();
    let said = rework["conversation"].as_str().unwrap();
    assert!(
        said.contains("ask the ops channel before Anton") && said.contains("before_question"),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_red_on_fresh_main_too_does_not_hold_the_line_and_is_reported() {
    let d = Daemon::builder()
        .files(&[
            ("a.txt", "a\n"),
            (
                ".conveyor.toml",
                "checklist = [{ cmd = \"test -f fixture.db\" }]\n",
            ),
        ])
        .mock()
        .start()
        .await;
    let (c, mock) = (d.client(), d.mock());
    let l = d.line("innocent", "a change").await;
    mock.script(
        &l.session_id,
        json!({
            "1": [write_plan(&plan("light", &[("change", "true")])), text("planned")],
            "2": [write("b.txt", "b\n"), text("changed")],
        }),
    )
    .await;
    let done = wait_state(c, &l.id, LineState::AwaitingAcceptance, 240).await;
    assert_eq!(
        kinds(&done),
        [StepKind::Planner, StepKind::Executor, StepKind::Tester],
        "no fixer for someone else's red"
    );
    let note = done
        .journal
        .iter()
        .filter_map(|e| e.text.as_deref())
        .find(|t| t.contains("red on fresh main too"))
        .expect("reported in the journal");
    assert!(note.contains("test -f fixture.db"), "{note}");
    let decisions = c.decisions(None, None).await.unwrap();
    assert!(
        decisions
            .iter()
            .any(|x| x.text.contains("test -f fixture.db")
                && x.source == conveyor_api::DecisionSource::Daemon),
        "{decisions:#?}"
    );
}
