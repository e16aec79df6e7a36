//! The loop over the bridge transport: invocation, messages, stop reasons, bridge failures.

use std::time::Duration;

use serde_json::json;

use crate::support::*;

/// The sample of Anton's `ollama_orchestro` used by the seed's live runs: the answer
/// (`waitForAnswer` in `ask.mjs`) is reachable only through the tools.
const ASK_MJS: &str = "\
// ask.mjs: the bridge (sample)
import fs from 'node:fs';

const chats = JSON.parse(fs.readFileSync('chats.json', 'utf8'));

async function waitForAnswer(page) {
  let streaming = true;
  while (streaming) {
    const state = await page.state();
    if (state.finish_reason === 'stop') streaming = false;
    if (state.stop_reason) break;
  }
  return 'done';
}

async function main() {
  const page = await open(chats.think);
  await page.send(process.argv[2]);
  const text = await waitForAnswer(page);
  console.log(text);
}

main();
";

fn orchestro() -> Project {
    let p = Project::named("ollama_orchestro");
    p.write("ask.mjs", ASK_MJS)
        .write(
            "ui.html",
            "<!doctype html>\n<title>orchestro</title>\n<button id=send>Send</button>\n",
        )
        .write(
            "chats.json",
            "{\"think\": {\"url\": \"https://chat.deepseek.com/\"}}\n",
        )
        .write("README.md", "# orchestro\nA bridge to the web chat.\n");
    p
}

const FIVE_FINDS: &str = "I need to look at the code first.\n\n```\n=== FIND: waitForAnswer ===\n=== FIND: streaming ===\n=== FIND: done ===\n=== FIND: stop_reason ===\n=== FIND: finish_reason ===\n```\n";
const FINAL_ANSWER: &str =
    "The answer is complete when `waitForAnswer` in ask.mjs (line 6) sees finish_reason stop.";

/// The seed's run through the control panel: five FINDs at once, then NEED ask.mjs, then the answer.
#[test]
fn live_run_find_need_answer() {
    let p = orchestro();
    let before = p.files_under("");
    let b = Bridge::answers(&[FIVE_FINDS, "=== NEED: ask.mjs ===", FINAL_ANSWER]);
    let question = "какая функция решает, что ответ дописан?";
    let out = deepwork()
        .dir(&p)
        .bridge(&b)
        .arg("--json")
        .arg(question)
        .run();
    out.expect_code(0);
    let v = out.json();

    assert_eq!(v["stop_reason"], "no_requests", "{v:#}");
    assert_eq!(v["answer"].as_str().unwrap().trim(), FINAL_ANSWER);
    let st = steps(&v);
    assert_eq!(st.len(), 3, "{v:#}");
    for (i, s) in st.iter().enumerate() {
        assert_eq!(s["n"], i + 1, "{s:#}");
        assert_eq!(s["new"], i > 0, "step {} new flag: {s:#}", i + 1);
    }
    let finds = requests(&st[0]);
    let args: Vec<&str> = finds.iter().map(|r| r["arg"].as_str().unwrap()).collect();
    assert_eq!(
        args,
        [
            "waitForAnswer",
            "streaming",
            "done",
            "stop_reason",
            "finish_reason"
        ]
    );
    let hits: Vec<u64> = finds.iter().map(|r| r["hits"].as_u64().unwrap()).collect();
    assert_eq!(hits, [2, 3, 1, 1, 1], "{:#}", st[0]);
    assert!(
        finds
            .iter()
            .all(|r| r["kind"] == "FIND" && r["truncated"] == false),
        "{:#}",
        st[0]
    );
    let need = requests(&st[1]);
    assert_eq!(need.len(), 1);
    assert_eq!(need[0]["kind"], "NEED");
    assert_eq!(need[0]["arg"], "ask.mjs");
    assert_eq!(need[0]["hits"], 1);
    assert!(requests(&st[2]).is_empty());

    // Bridge invocations: step 1 edits the first message, steps 2.. send with --new.
    let calls = b.calls();
    assert_eq!(calls.len(), 3);
    for (i, c) in calls.iter().enumerate() {
        let argv = b.argv(i);
        assert_eq!(c["chat"], "think");
        assert_eq!(c["quiet"], true);
        let mut expected: Vec<String> = vec!["ask".into(), "--chat".into(), "think".into()];
        if i > 0 {
            expected.push("--new".into());
        }
        expected.extend([
            "--file".into(),
            c["file"].as_str().unwrap().into(),
            "--out".into(),
            c["out"].as_str().unwrap().into(),
            "--quiet".into(),
        ]);
        assert_eq!(argv, expected, "call {}", i + 1);
        assert_eq!(c["new"], i > 0, "call {}", i + 1);
    }

    let inputs = b.inputs();
    assert!(
        inputs[0].trim_end().ends_with(question),
        "question must be last:\n{}",
        clip(&inputs[0])
    );
    let m2 = &inputs[1];
    assert_contains(m2, "ask.mjs:6: async function waitForAnswer(page) {");
    assert_contains(m2, "ask.mjs:19: ");
    for line in [7, 8, 10] {
        assert_contains(m2, &format!("ask.mjs:{line}: ")); // streaming
    }
    assert_contains(m2, "ask.mjs:13: "); // done
    assert_contains(m2, "ask.mjs:11: "); // stop_reason
    assert_contains(m2, "if (state.stop_reason) break;");
    assert_not_contains(m2, "ui.html:");
    assert_contains(&inputs[2], ASK_MJS);

    // Nothing was written into the project.
    assert_eq!(p.files_under(""), before);
}

#[test]
fn plain_output_answer_on_stdout_step_log_on_stderr() {
    let p = orchestro();
    let b = Bridge::answers(&["=== NEED: ask.mjs ===", FINAL_ANSWER]);
    let out = deepwork()
        .dir(&p)
        .bridge(&b)
        .arg("where is the end decided?")
        .run();
    out.expect_code(0);
    assert_eq!(out.stdout.trim(), FINAL_ANSWER, "{}", out.dump());
    let step_lines: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.trim_start().starts_with("step "))
        .collect();
    assert!(
        step_lines
            .iter()
            .any(|l| l.trim_start().starts_with("step 1")),
        "{}",
        out.dump()
    );
    assert!(
        step_lines
            .iter()
            .any(|l| l.trim_start().starts_with("step 2")),
        "{}",
        out.dump()
    );
    assert!(
        !out.stdout.contains("step 1"),
        "step log leaked to stdout\n{}",
        out.dump()
    );
}

fn prompts_dir(files: &[(&str, &str)]) -> tempfile::TempDir {
    let d = tempfile::Builder::new()
        .prefix("dw-prompts")
        .tempdir()
        .unwrap();
    for (name, text) in files {
        write(d.path(), name, text);
    }
    d
}

#[test]
fn first_message_layout_with_overridden_prompts() {
    let prompts = prompts_dir(&[
        ("prefix.txt", "PREFIX-MARKER use the tools\n"),
        ("tail_reminder.txt", "TAIL-MARKER\n"),
        ("step_reminder.txt", "STEP-MARKER\n"),
    ]);
    let p = Project::new();
    p.write("alpha.txt", "ALPHA-CONTENT\n")
        .write("beta.md", "BETA-CONTENT\n")
        .write("deep/nested/gamma.js", "GAMMA-CONTENT\n");
    let b = Bridge::answers(&["=== NEED: deep/nested/gamma.js ===", "done."]);
    let question = "QUESTION-MARKER what does gamma do?";
    let out = deepwork()
        .config(json!({ "prompts": prompts.path() }))
        .dir(&p)
        .bridge(&b)
        .args(["--files", "alpha.txt,beta.md", "--json", question])
        .run();
    out.expect_code(0);
    let inputs = b.inputs();
    assert_eq!(inputs.len(), 2);
    let m1 = &inputs[0];
    assert!(
        m1.trim_start().starts_with("PREFIX-MARKER"),
        "first message must start with the prefix:\n{}",
        clip(m1)
    );
    let tree = pos(m1, "gamma.js");
    let alpha = pos(m1, "ALPHA-CONTENT");
    let beta = pos(m1, "BETA-CONTENT");
    let tail = pos(m1, "TAIL-MARKER");
    let q = pos(m1, "QUESTION-MARKER");
    assert!(pos(m1, "PREFIX-MARKER") < tree, "tree after prefix");
    assert!(
        tree < alpha && tree < beta,
        "ticked files after the tree:\n{}",
        clip(m1)
    );
    assert!(
        alpha < tail && beta < tail,
        "tail reminder after the files:\n{}",
        clip(m1)
    );
    assert!(tail < q, "tail reminder right before the question");
    assert!(
        m1.trim_end().ends_with(question),
        "question must be the last thing:\n{}",
        clip(m1)
    );
    assert_not_contains(m1, "GAMMA-CONTENT"); // not ticked
    assert_not_contains(m1, "STEP-MARKER");
    // Nothing but whitespace between the tail reminder and the question.
    let between = &m1[tail + "TAIL-MARKER".len()..q];
    assert!(
        between.trim().is_empty(),
        "text between tail reminder and question: {between:?}"
    );

    let m2 = &inputs[1];
    assert_contains(m2, "GAMMA-CONTENT");
    assert_contains(m2, "STEP-MARKER");
    assert_not_contains(m2, "PREFIX-MARKER");
}

#[test]
fn prompts_folder_may_override_a_subset() {
    let prompts = prompts_dir(&[("tail_reminder.txt", "ONLY-TAIL-MARKER\n")]);
    let p = Project::new();
    p.write("a.txt", "A\n");
    let b = Bridge::answers(&["ok"]);
    let out = deepwork()
        .config(json!({ "prompts": prompts.path() }))
        .dir(&p)
        .bridge(&b)
        .arg("Q-LAST")
        .run();
    out.expect_code(0);
    let m1 = &b.inputs()[0];
    let tail = pos(m1, "ONLY-TAIL-MARKER");
    assert!(m1.trim_end().ends_with("Q-LAST"));
    // The built-in prefix is still there and describes the request forms.
    let need = pos(m1, "=== NEED:");
    assert!(
        need < tail,
        "built-in prefix before the overridden tail reminder:\n{}",
        clip(m1)
    );
    assert_contains(m1, "=== LIST:");
    assert_contains(m1, "=== FIND:");
}

#[test]
fn default_prompts_repeat_the_tools_before_the_question() {
    let p = Project::new();
    p.write(
        "big.txt",
        format!("{}TICKED-END\n", "filler line\n".repeat(2000)),
    );
    let b = Bridge::answers(&["ok"]);
    let out = deepwork()
        .dir(&p)
        .bridge(&b)
        .args(["--files", "big.txt", "what now?"])
        .run();
    out.expect_code(0);
    let m1 = &b.inputs()[0];
    for form in ["=== NEED:", "=== LIST:", "=== FIND:"] {
        let first = pos(m1, form);
        let last = m1.rfind(form).unwrap();
        assert!(
            first < pos(m1, "big.txt"),
            "{form} in the prefix, before the tree"
        );
        assert!(
            last > pos(m1, "TICKED-END"),
            "{form} repeated after the ticked files (tail reminder)"
        );
    }
    assert!(m1.trim_end().ends_with("what now?"));
}

#[test]
fn steps_1_returns_marked_answer() {
    let p = Project::new();
    p.write("a.txt", "A\n");
    let b = Bridge::answers(&["Let me see.\n=== NEED: a.txt ===\n"]);
    let out = deepwork()
        .dir(&p)
        .bridge(&b)
        .args(["--steps", "1", "--json", "q"])
        .run();
    out.expect_code(0);
    let v = out.json();
    assert_eq!(v["stop_reason"], "steps_exhausted");
    assert_eq!(steps(&v).len(), 1);
    let answer = v["answer"].as_str().unwrap();
    assert_contains(answer, "steps exhausted");
    assert_contains(answer, "Let me see.");
    assert_eq!(b.calls().len(), 1);

    // Without --json the marked answer goes to stdout.
    let b = Bridge::answers(&["Let me see.\n=== NEED: a.txt ===\n"]);
    let out = deepwork()
        .dir(&p)
        .bridge(&b)
        .args(["--steps", "1", "q"])
        .run();
    out.expect_code(0);
    assert_contains(&out.stdout, "steps exhausted");
    assert_eq!(b.calls().len(), 1);
}

#[test]
fn default_is_four_steps() {
    let p = Project::new();
    p.write("a.txt", "A\n")
        .write("b.txt", "B\n")
        .write("c.txt", "C\n")
        .write("d.txt", "D\n");
    let b = Bridge::answers(&[
        "=== NEED: a.txt ===",
        "=== NEED: b.txt ===",
        "=== NEED: c.txt ===",
        "=== NEED: d.txt ===",
        "=== LIST: *.txt ===",
    ]);
    let out = deepwork().dir(&p).bridge(&b).args(["--json", "q"]).run();
    out.expect_code(0);
    let v = out.json();
    assert_eq!(v["stop_reason"], "steps_exhausted", "{v:#}");
    assert_eq!(b.calls().len(), 4);
    assert_eq!(steps(&v).len(), 4);
}

#[test]
fn steps_from_config_and_flag_overrides_config() {
    let p = Project::new();
    p.write("a.txt", "A\n")
        .write("b.txt", "B\n")
        .write("c.txt", "C\n");
    let answers = [
        "=== NEED: a.txt ===",
        "=== NEED: b.txt ===",
        "=== NEED: c.txt ===",
        "=== NEED: a.txt ===",
    ];

    let b = Bridge::answers(&answers);
    let out = deepwork()
        .config(json!({ "steps": 2 }))
        .dir(&p)
        .bridge(&b)
        .args(["--json", "q"])
        .run();
    out.expect_code(0);
    assert_eq!(out.json()["stop_reason"], "steps_exhausted");
    assert_eq!(b.calls().len(), 2, "config steps = 2");

    let b = Bridge::answers(&answers);
    let out = deepwork()
        .config(json!({ "steps": 2 }))
        .dir(&p)
        .bridge(&b)
        .args(["--steps", "3", "--json", "q"])
        .run();
    out.expect_code(0);
    assert_eq!(b.calls().len(), 3, "--steps 3 overrides config steps = 2");
}

#[test]
fn repeated_requests_stop_as_loop() {
    let p = Project::new();
    p.write("a.txt", "A-CONTENT\n");
    let b = Bridge::answers(&[
        "=== NEED: a.txt ===",
        "I still need it:\n=== NEED: a.txt ===\n",
        "final",
    ]);
    let out = deepwork().dir(&p).bridge(&b).args(["--json", "q"]).run();
    out.expect_code(0);
    let v = out.json();
    assert_eq!(v["stop_reason"], "loop", "{v:#}");
    assert_eq!(
        b.calls().len(),
        2,
        "the repeated request must not be sent again"
    );
    assert_eq!(steps(&v).len(), 2);
}

#[test]
fn same_request_not_in_a_row_is_not_a_loop() {
    let p = Project::new();
    p.write("a.txt", "A\n").write("b.txt", "B\n");
    let b = Bridge::answers(&[
        "=== NEED: a.txt ===",
        "=== NEED: b.txt ===",
        "=== NEED: a.txt ===",
        "final",
    ]);
    let out = deepwork().dir(&p).bridge(&b).args(["--json", "q"]).run();
    out.expect_code(0);
    let v = out.json();
    assert_eq!(v["stop_reason"], "no_requests", "{v:#}");
    assert_eq!(b.calls().len(), 4);
}

#[test]
fn missing_file_is_reported_and_the_loop_goes_on() {
    let p = Project::new();
    p.write("here.txt", "HERE-CONTENT\n");
    let b = Bridge::answers(&["=== NEED: nope.txt, here.txt ===", "final answer"]);
    let out = deepwork().dir(&p).bridge(&b).args(["--json", "q"]).run();
    out.expect_code(0);
    let v = out.json();
    assert_eq!(v["stop_reason"], "no_requests");
    assert_eq!(
        requests(&steps(&v)[0])[0]["hits"],
        1,
        "one of two files sent"
    );
    let m2 = &b.inputs()[1];
    assert_contains(m2, "file not found: nope.txt");
    assert_contains(m2, "HERE-CONTENT");
    assert_eq!(v["answer"].as_str().unwrap().trim(), "final answer");
}

#[test]
fn chat_flag_and_config_chat() {
    let p = Project::new();
    p.write("a.txt", "A\n");
    let b = Bridge::answers(&["=== NEED: a.txt ===", "ok"]);
    let out = deepwork()
        .dir(&p)
        .bridge(&b)
        .args(["--chat", "deep-chat", "q"])
        .run();
    out.expect_code(0);
    let calls = b.calls();
    assert_eq!(calls.len(), 2);
    assert!(calls.iter().all(|c| c["chat"] == "deep-chat"), "{calls:#?}");

    // Config gives the bridge and the chat; the flag wins over the config.
    let b = Bridge::answers(&["ok"]);
    let dw = deepwork();
    let cfg = json!({ "bridge": fake_bridge_path(), "chat": "from-config" });
    let out = dw
        .xdg_config_text(&cfg.to_string())
        .dir(&p)
        .bridge_env(&b)
        .arg("q")
        .run();
    out.expect_code(0);
    assert_eq!(
        b.calls()[0]["chat"],
        "from-config",
        "XDG config must be read"
    );

    let b = Bridge::answers(&["ok"]);
    let out = deepwork()
        .xdg_config_text(&cfg.to_string())
        .dir(&p)
        .bridge_env(&b)
        .args(["--chat", "from-flag", "q"])
        .run();
    out.expect_code(0);
    assert_eq!(b.calls()[0]["chat"], "from-flag");
}

#[test]
fn working_folder_defaults_to_current_dir() {
    let p = Project::new();
    p.write("src/cwd-only.js", "const CWD_NEEDLE = 1;\n");
    let b = Bridge::answers(&["=== FIND: CWD_NEEDLE ===", "ok"]);
    let out = deepwork()
        .current_dir(&p.root)
        .bridge(&b)
        .args(["--json", "q"])
        .run();
    out.expect_code(0);
    assert_contains(&b.inputs()[1], "src/cwd-only.js:1: ");
}

#[cfg(unix)]
#[test]
fn node_binary_from_config() {
    use std::os::unix::fs::PermissionsExt;
    let p = Project::new();
    p.write("a.txt", "A\n");
    let tools = tempfile::Builder::new()
        .prefix("dw-node")
        .tempdir()
        .unwrap();
    let mark = tools.path().join("used.txt");
    let wrapper = write(
        tools.path(),
        "my node/node-wrapper",
        format!(
            "#!/bin/sh\necho used >> '{}'\nexec node \"$@\"\n",
            mark.display()
        ),
    );
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let b = Bridge::answers(&["=== NEED: a.txt ===", "ok"]);
    let out = deepwork()
        .config(json!({ "node": wrapper }))
        .dir(&p)
        .bridge(&b)
        .arg("q")
        .run();
    out.expect_code(0);
    assert_eq!(b.calls().len(), 2);
    let used = std::fs::read_to_string(&mark).expect("the configured node was not used");
    assert_eq!(used.lines().count(), 2, "one wrapper run per step");
}

// ----- bridge failures -------------------------------------------------------------------------

#[test]
fn bridge_nonzero_exit_is_a_transport_error_quoting_stderr() {
    let p = Project::new();
    let noise: String = (0..200).map(|i| format!("noise line {i}\n")).collect();
    let b = Bridge::new(json!([{
        "answer": "an answer that must not be trusted",
        "stderr": format!("{noise}BRIDGE-TAIL: tab not found\n"),
        "exit": 7
    }]));
    let out = deepwork().dir(&p).bridge(&b).arg("q").run();
    out.expect_code(3);
    assert_contains(&out.stderr, "BRIDGE-TAIL: tab not found");
    assert_not_contains(&out.stdout, "an answer that must not be trusted");
}

#[test]
fn bridge_missing_out_file_is_an_error() {
    let p = Project::new();
    p.write("a.txt", "A\n");
    // Step 1 succeeds; step 2 writes no out file (a stale out file must not be reused).
    let b = Bridge::new(json!([
        { "answer": "=== NEED: a.txt ===" },
        { "no_out": true, "stderr": "NO-OUT-TAIL\n" }
    ]));
    let out = deepwork().dir(&p).bridge(&b).arg("q").run();
    out.expect_code(3);
    assert_eq!(b.calls().len(), 2);
    assert_contains(&out.stderr, "NO-OUT-TAIL");
}

#[test]
fn bridge_empty_out_file_is_an_error() {
    let p = Project::new();
    let b = Bridge::new(json!([{ "empty": true, "stderr": "EMPTY-OUT-TAIL\n" }]));
    let out = deepwork().dir(&p).bridge(&b).arg("q").run();
    out.expect_code(3);
    assert_contains(&out.stderr, "EMPTY-OUT-TAIL");
}

#[test]
fn bridge_timeout_kills_the_bridge() {
    let p = Project::new();
    let b = Bridge::new(json!([{ "hang": true, "stderr": "HANG-TAIL: waiting for the answer\n" }]));
    let out = deepwork()
        .config(json!({ "timeout_secs": 1 }))
        .dir(&p)
        .bridge(&b)
        .arg("q")
        .run();
    out.expect_code(3);
    assert!(
        out.elapsed < Duration::from_secs(20),
        "timeout_secs: 1 took {:?}",
        out.elapsed
    );
    assert_contains(&out.stderr, "HANG-TAIL");
    let calls = b.calls();
    assert_eq!(calls.len(), 1);
    #[cfg(unix)]
    {
        let pid = calls[0]["pid"].as_u64().unwrap() as u32;
        assert!(
            wait_pid_gone(pid, Duration::from_secs(5)),
            "the hanging bridge (pid {pid}) is still running"
        );
    }
}

#[test]
fn plain_first_answer_is_one_call_without_usage_errors() {
    // The fake bridge itself rejects anything but the real bridge's flags; deepwork reports it.
    let p = Project::new();
    let b = Bridge::answers(&["ok"]);
    let out = deepwork().dir(&p).bridge(&b).arg("q").run();
    out.expect_code(0);
    assert_eq!(b.calls().len(), 1);
    assert!(
        !out.stderr.contains("fake-bridge: "),
        "fake bridge complained:\n{}",
        out.dump()
    );
}
