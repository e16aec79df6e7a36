//! The planner's plan on disk: its Stop-hook check, written where the planner's hook runs it.
//! The plan's shape and rules are `conveyor_core::plan`.

pub use conveyor_core::plan::{Check, MAX_STEPS, NODE_CHECK, PlannedStep, parse};

/// Writes [`NODE_CHECK`] into `dir` and returns the planner's Stop-hook check running it on
/// `$CONVEYOR_PLAN`.
///
/// # Errors
/// [`crate::error::Error::Io`].
pub fn hook_check(dir: &std::path::Path) -> crate::error::Result<Check> {
    std::fs::create_dir_all(dir).map_err(|e| crate::error::Error::io(dir, e))?;
    let script = dir.join("check-plan.cjs");
    std::fs::write(
        &script,
        NODE_CHECK.replace("__MAX_STEPS__", &MAX_STEPS.to_string()),
    )
    .map_err(|e| crate::error::Error::io(&script, e))?;
    let quoted = format!("'{}'", script.to_string_lossy().replace('\'', "'\\''"));
    Ok(Check {
        cmd: format!("node {quoted} \"$CONVEYOR_PLAN\""),
        expect_exit: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The planner's hook check agrees with [`parse`]: a present but empty or broken plan
    /// keeps the planner from stopping.
    #[test]
    fn the_planner_hook_check_agrees_with_parse() {
        let d = tempfile::tempdir().unwrap();
        let check = hook_check(d.path()).unwrap();
        let plan = d.path().join("plan.json");
        let cases = [
            r#"{"level":"light","steps":[{"title":"t","task":"do","checks":[{"cmd":"true","expect_exit":0}]}]}"#,
            r#"{"steps":[{"title":"t","task":"do"}]}"#,
            r#"{"level":null,"steps":[{"title":"t","task":"do","checks":[]}]}"#,
            r#"{"steps":[]}"#,
            r#"{"level":"light"}"#,
            "{",
            "[]",
            r#"{"level":"huge","steps":[{"title":"t","task":"x"}]}"#,
            r#"{"steps":[{"title":" ","task":"x"}]}"#,
            r#"{"steps":[{"title":"t","task":"x","checks":[{"cmd":""}]}]}"#,
            r#"{"steps":[{"title":"t","task":"x","checks":[{"cmd":"true","expect_exit":1.5}]}]}"#,
            r#"{"steps":[{"title":"t","task":"x","extra":1}]}"#,
            r#"{"steps":[{"title":"t","task":"x"}],"extra":1}"#,
            r#"{"steps":[{"title":"t","task":"x","size":"m"},{"title":"u","task":"y","size":null}]}"#,
            r#"{"steps":[{"title":"t","task":"x","size":"huge"}]}"#,
            r#"{"steps":[{"title":"t","task":"x","size":3}]}"#,
        ];
        for text in cases {
            std::fs::write(&plan, text).unwrap();
            let out = std::process::Command::new("sh")
                .args(["-c", &check.cmd])
                .env("CONVEYOR_PLAN", &plan)
                .output()
                .unwrap();
            let said = String::from_utf8_lossy(&out.stdout);
            assert_eq!(
                out.status.success(),
                parse(text).is_ok(),
                "{text}: hook said {said:?}, parse said {:?}",
                parse(text)
            );
        }
        std::fs::remove_file(&plan).unwrap();
        let out = std::process::Command::new("sh")
            .args(["-c", &check.cmd])
            .env("CONVEYOR_PLAN", &plan)
            .output()
            .unwrap();
        assert!(!out.status.success());
        assert!(String::from_utf8_lossy(&out.stdout).contains("no plan was written"));
    }
}
