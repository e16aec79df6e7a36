//! The judge's pure parts: the rules the daemon applies before any run ([`rules`]), what a
//! step read ([`reads`]), the prompt ([`prompt`]) and the verdict file ([`verdict`]); and how
//! a judge run is hooked. Its place in a line's flow is `line::judge`.

pub mod prompt;

pub use conveyor_core::judge::{reads, rules, verdict};

use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::hook::quote;

/// The built-in tools a judge run has (`--tools`): it reads, and writes its verdict.
pub const TOOLS: &str = "Read,Grep,Glob,Write";

/// The tools its guard looks at (a `PreToolUse` matcher): only a `Write` of the verdict file
/// passes.
pub const GUARDED_TOOLS: &str = "Write|Edit|MultiEdit|NotebookEdit|Bash";

/// The `conveyord` binary that runs a judge's hooks: `hook_bin` from the config, else the
/// running binary when it is `conveyord`, else one beside it (a build's `target/debug`), else
/// the one the desktop app's package carries (`../lib/pult/conveyord`), else one on `PATH`.
pub fn hook_bin(cfg: &Config) -> Option<PathBuf> {
    if let Some(b) = &cfg.hook_bin {
        return Some(b.clone());
    }
    let exe = std::env::current_exe().ok()?;
    if exe.file_stem().is_some_and(|n| n == "conveyord") {
        return Some(exe);
    }
    let beside = exe.with_file_name("conveyord");
    if beside.is_file() {
        return Some(beside);
    }
    if let Some(packaged) = exe
        .parent()
        .and_then(Path::parent)
        .map(|prefix| prefix.join("lib/pult/conveyord"))
        .filter(|p| p.is_file())
    {
        return Some(packaged);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("conveyord"))
            .find(|p| p.is_file())
    })
}

/// A judge run's hook command lines.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeHooks {
    /// Stop: blocks while the verdict does not parse or misses an id.
    pub stop: String,
    /// PreToolUse: denies every write but the verdict's. None without a hook binary.
    pub guard: Option<String>,
}

/// The hooks of a judge run.
pub fn hook_commands(
    bin: Option<&Path>,
    verdict: &Path,
    given: &Path,
    state: &Path,
    rounds: u32,
) -> JudgeHooks {
    let q = |p: &Path| quote(&p.to_string_lossy());
    verdict_hooks(
        bin,
        &format!(
            "verdict --file {} --given {} --state {} --rounds {rounds}",
            q(verdict),
            q(given),
            q(state)
        ),
        verdict,
    )
}

/// The hooks of a run that writes a verdict (a judge's, a checker's): `conveyord hook
/// <stop_args>` as its Stop hook, and a guard that lets only `verdict` be written. Without a
/// `conveyord` to run them, the Stop hook only says so in the log and lets the run end: the
/// daemon's own check after the run still decides.
pub fn verdict_hooks(bin: Option<&Path>, stop_args: &str, verdict: &Path) -> JudgeHooks {
    let q = |p: &Path| quote(&p.to_string_lossy());
    match bin {
        Some(b) => JudgeHooks {
            stop: format!("{} hook {stop_args}", q(b)),
            guard: Some(format!("{} hook only-write {}", q(b), q(verdict))),
        },
        None => JudgeHooks {
            stop: "cat >/dev/null; echo 'conveyor: no conveyord binary to check the verdict' >&2"
                .into(),
            guard: None,
        },
    }
}

/// `conveyord hook verdict`: the Stop hook's answer (`None`: let the run end), counting its
/// blocks in `state` and giving up after `rounds`.
pub fn stop_hook(verdict: &Path, given: &Path, state: &Path, rounds: u32) -> Option<String> {
    let given: serde_json::Value = std::fs::read_to_string(given)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let list = |k: &str| -> Vec<String> {
        given[k]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let text = std::fs::read_to_string(verdict).ok();
    let answer = verdict::hook_answer(text.as_deref(), &list("ids"), &list("open"));
    crate::hook::count_round(state, rounds, answer)
}

/// `conveyord hook only-write <file>`: the guard's answer to one `PreToolUse` input (`None`:
/// allowed) — only a `Write` of `allowed` passes.
pub fn only_write(input: &str, allowed: &Path) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(input).unwrap_or_default();
    let tool = v["tool_name"].as_str().unwrap_or_default();
    let path = v["tool_input"]["file_path"].as_str().unwrap_or_default();
    if tool == "Write" && Path::new(path) == allowed {
        return None;
    }
    let why = format!(
        "this run only checks; the one file it writes is its verdict, {}",
        allowed.display()
    );
    Some(
        serde_json::json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "deny", "permissionDecisionReason": why}})
        .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guard_lets_only_the_verdict_be_written() {
        let v = Path::new("/d/lines/L/verdict-1.json");
        let write = |p: &str| {
            serde_json::json!({"tool_name": "Write", "tool_input": {"file_path": p, "content": "{}"}})
                .to_string()
        };
        assert_eq!(only_write(&write("/d/lines/L/verdict-1.json"), v), None);
        let denied = only_write(&write("/w/src/main.rs"), v).unwrap();
        assert!(denied.contains("\"deny\""), "{denied}");
        let bash = serde_json::json!({"tool_name": "Bash", "tool_input": {"command": "rm -rf ."}});
        assert!(only_write(&bash.to_string(), v).is_some());
    }

    #[test]
    fn the_stop_hook_blocks_at_most_rounds_times() {
        let d = tempfile::tempdir().unwrap();
        let (v, g, s) = (d.path().join("v"), d.path().join("g"), d.path().join("s"));
        std::fs::write(&g, r#"{"ids": ["q1"], "open": []}"#).unwrap();
        assert!(stop_hook(&v, &g, &s, 2).unwrap().contains("q1"));
        assert!(stop_hook(&v, &g, &s, 2).is_some());
        assert_eq!(stop_hook(&v, &g, &s, 2), None, "gives up after two blocks");
        std::fs::write(&s, "").unwrap();
        std::fs::write(
            &v,
            r#"{"entries": [{"id": "q1", "verdict": "decided", "why": "ok"}]}"#,
        )
        .unwrap();
        assert_eq!(stop_hook(&v, &g, &s, 2), None);
        assert_eq!(std::fs::read_to_string(&s).unwrap(), "pass\n");
    }
}
