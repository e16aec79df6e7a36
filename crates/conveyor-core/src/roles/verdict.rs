//! A checking role's verdict file (`$CONVEYOR_VERDICT`): `{"verdict": "pass" | "rework",
//! "findings": [{"path"?, "line"?, "text"}]}`. One parser serves the run's Stop hook
//! (`conveyord hook role-verdict`, so the role can mend its file within its run) and the daemon
//! after the run, which trusts only its own reading.

use conveyor_api::{RoleCall, RoleVerdict};

/// What is wrong with a role's verdict file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RoleVerdictError {
    #[error("no verdict was written to $CONVEYOR_VERDICT")]
    Missing,
    #[error("the verdict is not valid JSON of the expected shape: {0}")]
    Shape(String),
    #[error("a `rework` verdict needs at least one finding saying what to fix")]
    ReworkWithoutFindings,
    #[error("finding {0} has no text")]
    EmptyFinding(usize),
}

/// Parses and checks a verdict.
///
/// # Errors
/// [`RoleVerdictError`]: what to mend.
pub fn check(text: &str) -> Result<RoleVerdict, RoleVerdictError> {
    if text.trim().is_empty() {
        return Err(RoleVerdictError::Missing);
    }
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct File {
        verdict: RoleCall,
        #[serde(default)]
        findings: Vec<conveyor_api::Finding>,
    }
    let f: File = serde_json::from_str(text).map_err(|e| RoleVerdictError::Shape(e.to_string()))?;
    if let Some(i) = f.findings.iter().position(|x| x.text.trim().is_empty()) {
        return Err(RoleVerdictError::EmptyFinding(i + 1));
    }
    if f.verdict == RoleCall::Rework && f.findings.is_empty() {
        return Err(RoleVerdictError::ReworkWithoutFindings);
    }
    Ok(RoleVerdict {
        verdict: f.verdict,
        findings: f.findings,
    })
}

/// The Stop hook's answer: `None` lets the run end, else the JSON that blocks it.
pub fn hook_answer(text: Option<&str>) -> Option<String> {
    let e = check(text.unwrap_or_default()).err()?;
    let reason = format!(
        "The verdict file is not right yet: {e}. Write $CONVEYOR_VERDICT as \
         {{\"verdict\": \"pass\" | \"rework\", \"findings\": [{{\"path\"?, \"line\"?, \"text\"}}]}}."
    );
    Some(serde_json::json!({"decision": "block", "reason": reason}).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_is_pass_or_rework_with_findings() {
        let v = check(r#"{"verdict": "pass", "findings": []}"#).unwrap();
        assert_eq!(v.verdict, RoleCall::Pass);
        let v = check(r#"{"verdict": "pass"}"#).unwrap();
        assert!(v.findings.is_empty());
        let v = check(
            r#"{"verdict": "rework", "findings": [{"path": "src/a.rs", "line": 3, "text": "unwrap on user input"}]}"#,
        )
        .unwrap();
        assert_eq!(v.findings[0].line, Some(3));
        assert_eq!(check(""), Err(RoleVerdictError::Missing));
        assert_eq!(
            check(r#"{"verdict": "rework", "findings": []}"#),
            Err(RoleVerdictError::ReworkWithoutFindings)
        );
        assert_eq!(
            check(r#"{"verdict": "rework", "findings": [{"text": " "}]}"#),
            Err(RoleVerdictError::EmptyFinding(1))
        );
        assert!(matches!(
            check(r#"{"verdict": "maybe"}"#),
            Err(RoleVerdictError::Shape(_))
        ));
        assert!(hook_answer(Some(r#"{"verdict": "pass"}"#)).is_none());
        let block = hook_answer(None).unwrap();
        assert!(block.contains("\"decision\":\"block\""), "{block}");
        assert!(block.contains("no verdict"), "{block}");
    }
}
