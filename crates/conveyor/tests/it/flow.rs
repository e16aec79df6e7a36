//! The gate's loop (a merge conflict with fresh main → a fixer step in the same session → merge)
//! and cancelling a running line.

use conveyor_api::{Client, Level, LineState, NewLine, NewProject, StepKind, StepState};
use serde_json::json;

use crate::support::*;

async fn setup(
    tmp: &std::path::Path,
    files: &[(&str, &str)],
) -> (
    Mock,
    conveyor::ServerHandle,
    Client,
    String,
    std::path::PathBuf,
) {
    let repo = tmp.join("repo");
    make_repo(&repo, files);
    let mock = Mock::start();
    let home = tmp.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let cfg = config(
        &tmp.join("data"),
        &claude_bin(),
        Some(agent_env(&mock, &home, false)),
        "",
    );
    let handle = conveyor::start(cfg).await.unwrap();
    let c = Client::new(format!("http://{}", handle.addr), Some(TOKEN.into()));
    let p = c
        .create_project(&NewProject {
            name: "p".into(),
            repo_path: repo.display().to_string(),
            main_branch: None,
        })
        .await
        .unwrap();
    (mock, handle, c, p.id, repo)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_merge_conflict_with_fresh_main_sends_the_line_to_a_fixer_step() {
    let tmp = tempfile::tempdir().unwrap();
    let (mock, handle, c, project, repo) = setup(
        tmp.path(),
        &[
            ("a.txt", "one\n"),
            (
                ".conveyor.toml",
                "regression = \"test -f a.txt\"\nfull_level_paths = [\"migrations/**\"]\n",
            ),
        ],
    )
    .await;
    let line = c
        .create_line(&NewLine {
            project_id: project,
            title: "conflict".into(),
            task: "change a.txt".into(),
            priority: None,
        })
        .await
        .unwrap();
    let s = line.session_id.clone();
    let plan = json!({"level": "light", "steps": [{"title": "edit a", "task": "x", "checks": [{"cmd": "grep -q line-version a.txt"}]}]});
    mock.script(
        &s,
        json!({
            "1": [write_plan(&plan), text("planned")],
            "2.1": [bash("echo line-version > a.txt && mkdir -p migrations && echo x > migrations/1.sql"), {"text": "done", "hold": true}],
            // The fixer resolves the conflict in the line's favour.
            "3": [bash("git -c user.name=f -c user.email=f@f merge -X ours main -m 'merge main' >/dev/null 2>&1; true"), text("merged main")],
        }),
    )
    .await;
    // While the executor works, someone moves main with a conflicting change.
    wait_for(120, "the executor's held turn", || async {
        mock.requests(&s)
            .await
            .iter()
            .any(|e| e["step"] == 2 && e["turn"] == 1)
            .then_some(())
    })
    .await;
    std::fs::write(repo.join("a.txt"), "main-version\n").unwrap();
    git(&repo, &["commit", "-qam", "someone else's change"]);
    mock.release(&s).await;

    let done = wait_state(&c, &line.id, LineState::AwaitingAcceptance, 180).await;
    let kinds: Vec<_> = done.line.steps.iter().map(|s| (s.kind, s.state)).collect();
    assert_eq!(
        kinds,
        [
            (StepKind::Planner, StepState::Done),
            (StepKind::Executor, StepState::Done),
            (StepKind::Fixer, StepState::Done)
        ]
    );
    // The fixer was told what conflicted, in the same session.
    let reqs = mock.requests(&s).await;
    let fixer = reqs.iter().find(|e| e["step"] == 3).unwrap();
    let conv = fixer["conversation"].as_str().unwrap();
    assert!(conv.contains("conflicts in: a.txt"), "{conv}");
    assert!(conv.contains("conveyor step 2 attempt 1"));
    // The migration raised the level mechanically.
    assert_eq!(done.line.level, Some(Level::Full));
    assert_eq!(
        std::fs::read_to_string(repo.join("a.txt")).unwrap(),
        "line-version\n"
    );
    assert!(git(&repo, &["log", "--format=%s", "main"]).contains("someone else's change"));
    handle.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_running_line_stops_its_agent_and_rolls_back() {
    let tmp = tempfile::tempdir().unwrap();
    let (mock, handle, c, project, _repo) = setup(tmp.path(), &[("a.txt", "a\n")]).await;
    let line = c
        .create_line(&NewLine {
            project_id: project,
            title: "cancel me".into(),
            task: "x".into(),
            priority: None,
        })
        .await
        .unwrap();
    let s = line.session_id.clone();
    mock.script(
        &s,
        json!({"1": [bash("echo junk > junk.txt"), {"text": "planned", "hold": true}]}),
    )
    .await;
    wait_for(120, "the planner's held turn", || async {
        mock.requests(&s)
            .await
            .iter()
            .any(|e| e["turn"] == 1)
            .then_some(())
    })
    .await;
    let step = c.line(&line.id).await.unwrap().line.steps[0].id.clone();
    assert!(!conveyor::exec::groups_with_env("CONVEYOR_STEP", &step).is_empty());
    let l = c.cancel(&line.id).await.unwrap();
    assert_eq!(l.state, LineState::Cancelled);
    wait_for(30, "the agent to be stopped", || async {
        conveyor::exec::groups_with_env("CONVEYOR_STEP", &step)
            .is_empty()
            .then_some(())
    })
    .await;
    let l = wait_for(30, "the step to be cancelled", || async {
        let l = c.line(&line.id).await.ok()?;
        (l.line.steps[0].state == StepState::Cancelled).then_some(l)
    })
    .await;
    assert_eq!(l.line.state, LineState::Cancelled);
    assert!(
        !tmp.path()
            .join("data/worktrees")
            .join(&line.id)
            .join("junk.txt")
            .exists()
    );
    handle.stop().await;
}
