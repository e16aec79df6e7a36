//! The never-autonomous guard with the real `claude` against the mock: an agent that tries to
//! publish and to push to a foreign remote, and a subagent of it that tries to publish too;
//! an agent that reaches production through the environment. Nothing runs, the denials are on
//! the line, and Anton is asked.

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

/// Production reached through the agent's environment, as the project's `[production]` says
/// it: a declared variable, and an undeclared one whose value (seen by the hook in the agent's
/// environment, never written to the context file) holds a declared host.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn production_reached_through_the_environment_is_denied() {
    let checklist =
        "[production]\nenv = [\"PROD_DATABASE_URL\"]\nhosts = [\"db.prod.example.com\"]\n";
    let d = Daemon::builder()
        .files(&[("a.txt", "a\n"), (".conveyor.toml", checklist)])
        .config(
            "[agent_env]\nPROD_DATABASE_URL = \"postgres://app@db.prod.example.com/app\"\nAPP_DB = \"postgres://app:pw@db.prod.example.com:5432/app\"\n",
        )
        .mock()
        .start()
        .await;
    let (c, mock) = (d.client(), d.mock());
    let l = d.line("fix", "fix the users table").await;
    let plan = json!({"level": "light", "steps": [{"title": "fix", "task": "fix", "checks": [{"cmd": "test -f done.txt"}]}]});
    mock.script_line(
        &l.id,
        "planner",
        json!({"*": [write_plan(&plan), text("planned")]}),
    )
    .await;
    mock.script_line(
        &l.id,
        "executor",
        json!({"2": [
            bash("touch declared.sentinel; psql \"$PROD_DATABASE_URL\" -c 'drop table users'"),
            bash("touch value.sentinel; psql \"$APP_DB\" -c 'select 1'"),
            bash("echo \"$HOME\" > local.txt"),
            write("done.txt", "done\n"),
            text("done what I may"),
        ]}),
    )
    .await;

    let waiting = wait_state(c, &l.id, LineState::WaitingAnswer, 240).await;
    let wt = d.worktree(&l.id);
    for s in ["declared.sentinel", "value.sentinel"] {
        assert!(!wt.join(s).exists(), "{s}: a denied command ran");
    }
    assert!(
        wt.join("local.txt").exists(),
        "a command that reaches no production ran"
    );
    let commands: Vec<&str> = waiting
        .line
        .denials
        .iter()
        .map(|d| d.input["command"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(commands.len(), 2, "{commands:#?}");
    let log = mock.log().await;
    let told: Vec<&str> = log
        .iter()
        .filter(|e| e["line"] == l.id.as_str())
        .filter_map(|e| e["after"].as_str())
        .filter(|a| a.contains("never done autonomously (production)"))
        .collect();
    assert!(
        told.iter().any(|a| a.contains("$PROD_DATABASE_URL"))
            && told
                .iter()
                .any(|a| a.contains("$APP_DB") && a.contains("db.prod.example.com")),
        "{told:#?}"
    );
    // The guard's context names what is production, never its values.
    let context =
        std::fs::read_to_string(d.data().join("lines").join(&l.id).join("guard.json")).unwrap();
    assert!(
        context.contains("PROD_DATABASE_URL") && !context.contains("pw@"),
        "{context}"
    );
}
