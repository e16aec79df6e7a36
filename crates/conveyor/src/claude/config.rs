//! The CLI's own config file, `$HOME/.claude.json`, put back when a run finds it broken.
//!
//! The CLI rewrites that file in place while it runs, and every agent of the daemon shares one
//! `HOME`. A run killed in the middle of a write (the daemon's `kill -9`, a timeout, a
//! cancel), or two runs writing at once, can leave it cut or interleaved. The CLI then refuses
//! to start, every run, until a person repairs it (2.1.332, tried by hand: `Configuration
//! error in <home>/.claude.json: JSON Parse error: …` as the result's error, the broken file
//! copied to `.claude/backups/.claude.json.corrupted.<ms>`, and the advice to copy a
//! `.claude/backups/.claude.json.backup.<ms>` over it). At night nobody would: the line would
//! spend its attempts on the same error and stop. So the daemon does what the CLI advises,
//! once it has seen that error: the newest backup that reads, or, without one, the broken
//! file moved aside (the CLI starts as on a new machine; its login is in `.claude/`, not here).

use std::path::{Path, PathBuf};

use super::Report;

/// What the CLI's error begins with (then the path, `: `, the parser's words).
const CONFIG_ERROR: &str = "Configuration error in ";
/// The one file this repairs.
const CONFIG_NAME: &str = ".claude.json";

/// What was done to the config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Repair {
    /// Copied from this backup.
    Restored { from: PathBuf },
    /// No backup reads: the broken file moved here.
    MovedAside { to: PathBuf },
}

/// The broken config file a run's error names, if any.
pub fn broken_config(report: &Report) -> Option<PathBuf> {
    let r = report.result.as_ref()?;
    let texts = r.errors.iter().flatten().chain(r.result.iter());
    texts
        .filter_map(|t| {
            let rest = &t[t.find(CONFIG_ERROR)? + CONFIG_ERROR.len()..];
            let path = PathBuf::from(&rest[..rest.find(": ")?]);
            (path.file_name()? == CONFIG_NAME && path.is_absolute()).then_some(path)
        })
        .next()
}

/// Repairs `path` (a `.claude.json` a run's error named) if it still does not read: another run
/// may have rewritten it since, and a file that reads now is left alone.
///
/// # Errors
/// The file system's, naming the path.
pub fn repair(path: &Path, now_ms: i64) -> Result<Option<Repair>, std::io::Error> {
    if reads(path) {
        return Ok(None);
    }
    let home = path.parent().unwrap_or(Path::new("/"));
    let backups = home.join(".claude").join("backups");
    if let Some(from) = newest_backup(&backups) {
        let tmp = path.with_extension(format!("json.conveyor-{now_ms}"));
        std::fs::copy(&from, &tmp)?;
        same_owner(path, &tmp);
        std::fs::rename(&tmp, path)?;
        return Ok(Some(Repair::Restored { from }));
    }
    let to = path.with_extension(format!("json.broken.{now_ms}"));
    std::fs::rename(path, &to)?;
    Ok(Some(Repair::MovedAside { to }))
}

fn reads(path: &Path) -> bool {
    std::fs::read(path).is_ok_and(|b| serde_json::from_slice::<serde_json::Value>(&b).is_ok())
}

/// The newest `.claude.json.backup.<ms>` in `dir` that reads.
fn newest_backup(dir: &Path) -> Option<PathBuf> {
    let mut found: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let stamp = name.to_str()?.strip_prefix(".claude.json.backup.")?;
            Some((stamp.parse().ok()?, e.path()))
        })
        .collect();
    found.sort_by_key(|b| std::cmp::Reverse(b.0));
    found.into_iter().map(|(_, p)| p).find(|p| reads(p))
}

/// The agents may run as another user than the daemon: the restored file keeps its owner.
#[cfg(unix)]
fn same_owner(of: &Path, to: &Path) {
    use std::os::unix::fs::MetadataExt as _;
    if let Ok(m) = std::fs::metadata(of) {
        let _ = std::os::unix::fs::chown(to, Some(m.uid()), Some(m.gid()));
    }
}

#[cfg(not(unix))]
fn same_owner(_: &Path, _: &Path) {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claude::events::ResultEvent;

    fn report(errors: &[&str]) -> Report {
        let result: ResultEvent = serde_json::from_value(serde_json::json!({
            "type": "result", "subtype": "error_during_execution", "is_error": true,
            "errors": errors,
        }))
        .unwrap();
        Report {
            result: Some(result),
            ..Report::default()
        }
    }

    #[test]
    fn the_path_comes_from_the_clis_error_and_only_a_claude_json() {
        // Verbatim from 2.1.332 (the home shortened).
        let r = report(&[
            "Configuration error in /tmp/h/.claude.json: JSON Parse error: Unable to parse JSON string\nA backup file exists at: /tmp/h/.claude/backups/.claude.json.backup.1796391977534",
        ]);
        assert_eq!(
            broken_config(&r),
            Some(PathBuf::from("/tmp/h/.claude.json"))
        );
        let other = report(&["Configuration error in /etc/passwd: nope"]);
        assert_eq!(broken_config(&other), None);
        assert_eq!(broken_config(&report(&["API Error: 500"])), None);
    }

    #[test]
    fn the_newest_backup_that_reads_is_restored() {
        let home = tempfile::tempdir().unwrap();
        let backups = home.path().join(".claude/backups");
        std::fs::create_dir_all(&backups).unwrap();
        std::fs::write(backups.join(".claude.json.backup.100"), r#"{"old": 1}"#).unwrap();
        std::fs::write(backups.join(".claude.json.backup.200"), r#"{"new": 1}"#).unwrap();
        std::fs::write(backups.join(".claude.json.backup.300"), r#"{"cut"#).unwrap();
        let cfg = home.path().join(".claude.json");
        std::fs::write(&cfg, "{\"a\": 1}\n  , ").unwrap();
        assert_eq!(
            repair(&cfg, 1).unwrap(),
            Some(Repair::Restored {
                from: backups.join(".claude.json.backup.200")
            })
        );
        assert_eq!(std::fs::read_to_string(&cfg).unwrap(), r#"{"new": 1}"#);
        // Reads now: nothing more to do.
        assert_eq!(repair(&cfg, 2).unwrap(), None);
    }

    #[test]
    fn without_a_backup_the_broken_file_is_moved_aside() {
        let home = tempfile::tempdir().unwrap();
        let cfg = home.path().join(".claude.json");
        std::fs::write(&cfg, "{\"a\": ").unwrap();
        let to = home.path().join(".claude.json.broken.7");
        assert_eq!(
            repair(&cfg, 7).unwrap(),
            Some(Repair::MovedAside { to: to.clone() })
        );
        assert!(!cfg.exists());
        assert_eq!(std::fs::read_to_string(&to).unwrap(), "{\"a\": ");
    }
}
