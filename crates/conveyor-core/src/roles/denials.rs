//! What a checking run's denied tool calls are (the judge's, the tester's, the reviewer's,
//! the skeptic's, an extra role's). A checker only reads and writes its verdict, so most of
//! what it is denied is its own mistake: a tool its role does not have, or a write its guard
//! (`conveyord hook only-write`) refuses because the one file it writes is its verdict. Those
//! are the daemon's business: recorded on the line with the run, counted against the run
//! ([`TOLERATED`]), never a question for Anton. What the never-autonomous guard denied it is
//! different: an attempt at something irreversible (publishing, a foreign push, production),
//! whoever made it — a checker talked into it by what it read is as much Anton's to hear of
//! as an executor — so those still go to Anton.

use std::collections::HashMap;

use conveyor_api::StepKind;
use serde_json::Value;

use crate::guard::NEVER;

/// Whether a step of `kind` runs to check (the judge and the checking roles), not to work.
pub fn checking(kind: StepKind) -> bool {
    kind == StepKind::Judge || super::CHECKERS.contains(&kind)
}

/// How many of its own mistakes a checking run may make and keep its verdict: a checker that
/// tries once or twice to fix what it checks, is told no and goes on, still checked; one that
/// keeps trying is a failed run (its verdict is not taken; it runs again, within its step's
/// attempts).
pub const TOLERATED: usize = 2;

/// A checking run's denials, sorted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Denials {
    /// What the never-autonomous guard denied: Anton is asked about each.
    pub for_anton: Vec<Value>,
    /// How many were the checker's own mistakes.
    pub mistakes: usize,
}

/// Whether a checking run with `mistakes` of its own kept trying what its role does not have
/// ([`TOLERATED`]).
pub fn kept_trying(mistakes: usize) -> bool {
    mistakes > TOLERATED
}

/// Sorts a checking run's `permission_denials` by why each was denied, read from the run's
/// stream-json `log` (the `tool_result` of the denied `tool_use_id` carries the hook's
/// reason). A denial whose reason is not in the log is Anton's: the old behaviour, never a
/// guard's denial lost. `never(tool, input)` is the never-autonomous guard's own check: when
/// both it and the role's guard deny a call (a checker writing `.npmrc`), the CLI reports
/// whichever hook answered first, so the reason alone does not tell.
pub fn sort(denied: &[Value], log: &str, never: &dyn Fn(&str, &Value) -> bool) -> Denials {
    let reasons = reasons(log);
    let mut out = Denials::default();
    for d in denied {
        let mistake = d["tool_use_id"]
            .as_str()
            .and_then(|id| reasons.get(id))
            .is_some_and(|why| !why.contains(NEVER))
            && !never(
                d["tool_name"].as_str().unwrap_or_default(),
                &d["tool_input"],
            );
        if mistake {
            out.mistakes += 1;
        } else {
            out.for_anton.push(d.clone());
        }
    }
    out
}

/// The text of every tool call's result in a stream-json log, by `tool_use_id`.
fn reasons(log: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for line in log.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if v["type"] != "user" {
            continue;
        }
        for b in v["message"]["content"].as_array().into_iter().flatten() {
            if let (Some("tool_result"), Some(id)) = (b["type"].as_str(), b["tool_use_id"].as_str())
            {
                out.insert(id.to_string(), b["content"].to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn denied(id: &str) -> Value {
        json!({"tool_name": "Write", "tool_use_id": id, "tool_input": {"file_path": "/w/x"}})
    }

    fn result(id: &str, content: Value) -> String {
        json!({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": content, "is_error": true}]}})
        .to_string()
    }

    #[test]
    fn the_judge_and_the_roles_check_the_authors_work() {
        assert!(checking(StepKind::Judge) && checking(StepKind::Tester));
        assert!(!checking(StepKind::Executor) && !checking(StepKind::Fixer));
    }

    #[test]
    fn only_the_never_guards_denials_and_the_unexplained_go_to_anton() {
        let log = [
            r#"{"type":"system","subtype":"init"}"#.to_string(),
            result(
                "own",
                json!("PreToolUse:Write hook error: this run only checks; the one file it writes is its verdict"),
            ),
            result(
                "never",
                json!([{"type": "text", "text": "never done autonomously (publish): npm publish"}]),
            ),
            "not json (a log cut by a kill)".to_string(),
        ]
        .join("\n");
        let all = [denied("own"), denied("never"), denied("unknown")];
        let d = sort(&all, &log, &|_, _| false);
        assert_eq!(d.mistakes, 1);
        assert_eq!(d.for_anton, [denied("never"), denied("unknown")]);
        // Denied by both guards, reported with the role's reason: still Anton's.
        let d = sort(&all, &log, &|_, input| input["file_path"] == "/w/x");
        assert_eq!(d.mistakes, 0);
        assert!(!kept_trying(d.mistakes));
    }

    #[test]
    fn more_mistakes_than_tolerated_is_a_run_that_kept_trying() {
        let ids: Vec<String> = (0..=TOLERATED).map(|i| format!("w{i}")).collect();
        let log: Vec<String> = ids
            .iter()
            .map(|id| result(id, json!("only checks")))
            .collect();
        let all: Vec<Value> = ids.iter().map(|id| denied(id)).collect();
        let d = sort(&all[..TOLERATED], &log.join("\n"), &|_, _| false);
        assert!(!kept_trying(d.mistakes));
        let d = sort(&all, &log.join("\n"), &|_, _| false);
        assert_eq!((d.mistakes, kept_trying(d.mistakes)), (TOLERATED + 1, true));
        assert!(d.for_anton.is_empty());
    }
}
