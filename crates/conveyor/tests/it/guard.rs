//! The never-autonomous guard with the real `claude` against the mock: an agent that tries to
//! publish and to push to a foreign remote, and a subagent of it that tries to publish too.
//! Nothing runs, the denials are on the line, and Anton is asked.

use conveyor_api::{LineState, QuestionStatus};
use serde_json::{Value, json};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publishing_and_a_foreign_push_are_denied_for_the_agent_and_its_subagent() {
    let d = Daemon::builder()
        .files(&[("a.txt", "a\n")])
        .mock()
        .start()
        .await;
    // The project's own remote: a push there would pass; a URL elsewhere is foreign.
    let origin = d.repo().with_file_name("origin.git");
    git(
        d.repo(),
        &["init", "-q", "--bare", origin.to_str().unwrap()],
    );
    git(
        d.repo(),
        &["remote", "add", "origin", origin.to_str().unwrap()],
    );
    let (c, mock) = (d.client(), d.mock());
    let l = d.line("release", "release the package").await;
    let plan = json!({"level": "light", "steps": [{"title": "release", "task": "release", "checks": [{"cmd": "test -f done.txt"}]}]});
    mock.script_line(
        &l.id,
        "planner",
        json!({"*": [write_plan(&plan), text("planned")]}),
    )
    .await;
    // The subagent's prompt carries a step header of its own kind, so the mock plays it its
    // script (its requests come in the same session as its parent's).
    let sub_prompt = format!(
        "conveyor step 2 attempt 1 · subagent · line {} \"release\"\nPublish the crate.",
        l.id
    );
    mock.script_line(
        &l.id,
        "executor",
        json!({"2": [
            bash("touch published.sentinel && npm publish"),
            bash("git push https://example.invalid/fork.git HEAD:main && touch pushed.sentinel"),
            {"tool": "Task", "input": {"description": "publish", "subagent_type": "general-purpose", "prompt": sub_prompt}},
            write("done.txt", "done\n"),
            text("done what I may"),
        ]}),
    )
    .await;
    mock.script_line(
        &l.id,
        "subagent",
        json!({"*": [bash("touch sub.sentinel; cargo publish"), text("the guard stopped me")]}),
    )
    .await;

    let waiting = wait_state(c, &l.id, LineState::WaitingAnswer, 240).await;
    let wt = d.worktree(&l.id);
    for s in ["published.sentinel", "pushed.sentinel", "sub.sentinel"] {
        assert!(!wt.join(s).exists(), "{s}: a denied command ran");
    }
    assert!(wt.join("done.txt").exists(), "the rest of the work went on");

    // The denials are on the line, the subagent's among them.
    let commands: Vec<String> = waiting
        .line
        .denials
        .iter()
        .map(|d| d.input["command"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(waiting.line.denials.len(), 3, "{commands:#?}");
    for want in [
        "npm publish",
        "git push https://example.invalid",
        "cargo publish",
    ] {
        assert!(
            commands.iter().any(|c| c.contains(want)),
            "{want} missing from {commands:#?}"
        );
    }
    assert!(waiting.line.denials.iter().all(|d| d.step_n == 2));

    // Anton is asked about each, as irreversible and expensive, on the morning page.
    let asked: Vec<&conveyor_api::Question> = waiting
        .questions
        .iter()
        .filter(|q| q.text.starts_with("The agent was stopped before it ran"))
        .collect();
    assert_eq!(asked.len(), 3, "{:#?}", waiting.questions);
    for q in &asked {
        assert_eq!(
            (q.status, q.reversible, q.expensive),
            (QuestionStatus::Validated, Some(false), Some(true)),
            "{q:#?}"
        );
    }
    // The model was told why and what to do instead.
    let log = mock.log().await;
    let told = log.iter().filter(|e| e["line"] == l.id.as_str()).any(|e| {
        e["after"]
            .as_str()
            .is_some_and(|a| a.contains("never done autonomously (publish)"))
    });
    assert!(
        told,
        "{:#?}",
        log.iter().map(|e| &e["after"]).collect::<Vec<&Value>>()
    );
}
