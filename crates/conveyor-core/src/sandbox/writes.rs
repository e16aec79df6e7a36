//! Which writes a run was refused, read from its stream-json: the sandbox makes everything but
//! the run's own folders read-only, so a refused write is a tool result that says so (`EROFS`
//! from the CLI's own tools, "Read-only file system" from a shell). What the agent tried is
//! recorded on its line; the attempt itself changed nothing.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

static REFUSED: LazyLock<[Regex; 3]> = LazyLock::new(|| {
    [
        // The CLI's Write/Edit (Node): `EROFS: read-only file system, open '/x.tmp.2.ab12'`.
        Regex::new(r"EROFS: read-only file system, \w+ '([^']+)'").expect("regex"),
        // coreutils, git: `touch: cannot touch '/x': Read-only file system`.
        Regex::new(r"'([^'\n]+)': Read-only file system").expect("regex"),
        // A shell's redirect: `/bin/bash: line 1: ../x: Read-only file system`, dash's
        // `sh: 1: cannot create /x: Read-only file system`.
        Regex::new(r"(?:: |cannot create )([^\s:'\x22]+): Read-only file system").expect("regex"),
    ]
});

/// The paths one stream-json event's tool results say could not be written, in order, each
/// once. The CLI's Write tool writes `<file>.tmp.<pid>.<random>` and renames it: the file meant
/// is named, not its temporary. Git's `packed-refs.lock` is left out: every commit in a
/// worktree tries it after the commit has landed (docs/conveyor.md), so it says nothing of
/// what the agent wanted.
pub fn refused_writes(event: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let Some(content) = event["message"]["content"].as_array() else {
        return out;
    };
    for block in content.iter().filter(|b| b["type"] == "tool_result") {
        for text in texts(&block["content"]) {
            for re in REFUSED.iter() {
                for c in re.captures_iter(text) {
                    let path = without_temp_suffix(&c[1]);
                    if !path.ends_with("packed-refs.lock") && !out.iter().any(|p| *p == path) {
                        out.push(path.to_string());
                    }
                }
            }
        }
    }
    out
}

/// A tool result's text: a string, or blocks of which the text ones count.
fn texts(content: &Value) -> Vec<&str> {
    match content {
        Value::String(s) => vec![s.as_str()],
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
        _ => Vec::new(),
    }
}

/// `/x/README.md.tmp.2.9e55b1f2e2cd` → `/x/README.md`.
fn without_temp_suffix(path: &str) -> &str {
    static TEMP: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\.tmp\.\d+\.[0-9a-f]+$").expect("regex"));
    TEMP.find(path).map_or(path, |m| &path[..m.start()])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(text: Value) -> Value {
        json!({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "t1", "is_error": true, "content": text}
        ]}})
    }

    #[test]
    fn the_cli_tools_shells_and_coreutils_are_read() {
        let e = result(json!(
            "EROFS: read-only file system, open '/work/main/README.md.tmp.2.9e55b1f2e2cd'"
        ));
        assert_eq!(refused_writes(&e), ["/work/main/README.md"]);
        let e = result(json!([{"type": "text",
            "text": "/bin/bash: line 1: ../x: Read-only file system\ntouch: cannot touch '/root/.bashrc': Read-only file system"}]));
        assert_eq!(refused_writes(&e), ["/root/.bashrc", "../x"]);
        let e = result(json!(
            "sh: 1: cannot create /srv/p/x: Read-only file system"
        ));
        assert_eq!(refused_writes(&e), ["/srv/p/x"]);
    }

    #[test]
    fn the_harmless_packed_refs_lock_and_other_events_are_not_refusals() {
        let e = result(json!(
            "[line/L1 abc] x\nerror: Unable to create '/p/.git/packed-refs.lock': Read-only file system"
        ));
        assert!(refused_writes(&e).is_empty());
        let assistant = json!({"type": "assistant", "message": {"content": [
            {"type": "text", "text": "'/x': Read-only file system"}]}});
        assert!(refused_writes(&assistant).is_empty());
        assert!(refused_writes(&result(json!("all good"))).is_empty());
    }

    #[test]
    fn a_path_said_twice_is_one_refusal() {
        let e = result(json!(
            "'/a': Read-only file system\n'/a': Read-only file system"
        ));
        assert_eq!(refused_writes(&e), ["/a"]);
    }
}
