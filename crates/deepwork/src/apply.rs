//! Writing a proposed file: only when the user says so, the old version first copied to
//! `backup/<YYYYMMDD-HHMMSS>/<path>`, then the new one put in place atomically (a temporary
//! file in the same folder, then a rename), so a crash leaves either the old file or the new
//! one, never half of either.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::protocol::ProposedFile;
use crate::sandbox::{BACKUP_DIR, Sandbox, SandboxError, rel_to_slash};

/// Why a proposed file was not written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApplyError {
    /// The path is not allowed.
    #[error("refused {path}: {source}")]
    Refused {
        /// As proposed.
        path: String,
        /// Why.
        #[source]
        source: SandboxError,
    },
    /// The answer was cut off inside this file; writing it would replace a whole file by half.
    #[error("not written: {path} was cut off in the answer (truncated)")]
    Truncated {
        /// As proposed.
        path: String,
    },
    /// The path names a folder.
    #[error("not written: {path} is a folder")]
    IsFolder {
        /// As proposed.
        path: String,
    },
    /// Reading, copying or writing failed.
    #[error("cannot write {path}: {context}: {source}")]
    Io {
        /// As proposed.
        path: String,
        /// The step that failed.
        context: &'static str,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// A file that was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// Where, relative with `/`.
    pub path: String,
    /// Where the old version went, relative with `/`; `None` when the file is new.
    pub backup: Option<String>,
}

/// The backup folder name for a moment: `YYYYMMDD-HHMMSS`, local time.
pub fn backup_stamp(now: chrono::DateTime<chrono::Local>) -> String {
    now.format("%Y%m%d-%H%M%S").to_string()
}

/// Writes one proposed file; `stamp` names the backup folder (one per batch of writes).
///
/// # Errors
/// See [`ApplyError`]; nothing is written when an error is returned.
pub fn write(sandbox: &Sandbox, file: &ProposedFile, stamp: &str) -> Result<Written, ApplyError> {
    let path = &file.path;
    if file.truncated {
        return Err(ApplyError::Truncated { path: path.clone() });
    }
    let target = sandbox
        .resolve(path)
        .map_err(|source| ApplyError::Refused {
            path: path.clone(),
            source,
        })?;
    let rel = sandbox.display_rel(&target);
    let io = |context| {
        move |source| ApplyError::Io {
            path: path.clone(),
            context,
            source,
        }
    };
    let backup = match std::fs::symlink_metadata(&target) {
        Ok(m) if m.is_dir() => return Err(ApplyError::IsFolder { path: path.clone() }),
        Ok(_) => Some(
            backup_old(sandbox.root(), &target, stamp).map_err(io("backing up the old version"))?,
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io("reading the old version")(e)),
    };
    let parent = target.parent().unwrap_or(sandbox.root());
    std::fs::create_dir_all(parent).map_err(io("creating its folder"))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".deepwork-")
        .tempfile_in(parent)
        .map_err(io("creating a temporary file"))?;
    tmp.write_all(file.content.as_bytes())
        .map_err(io("writing"))?;
    tmp.as_file().sync_all().map_err(io("writing"))?;
    if let Ok(meta) = std::fs::metadata(&target) {
        let _ = std::fs::set_permissions(tmp.path(), meta.permissions());
    }
    tmp.persist(&target)
        .map_err(|e| io("replacing the file")(e.error))?;
    Ok(Written {
        path: rel,
        backup: backup.map(|b| rel_to_slash(b.strip_prefix(sandbox.root()).unwrap_or(&b))),
    })
}

/// Copies the current file to `backup/<stamp>/<rel>`; when that copy exists already (two
/// writes of one path in one second), `backup/<stamp>-2/…` and so on: a backup is never
/// overwritten.
fn backup_old(root: &Path, target: &Path, stamp: &str) -> std::io::Result<PathBuf> {
    let rel = target.strip_prefix(root).unwrap_or(target);
    let backups = root.join(BACKUP_DIR);
    if !backups.exists() {
        std::fs::create_dir_all(&backups)?;
        // Keep git status clean: the backups are ours, not the project's.
        std::fs::write(backups.join(".gitignore"), "*\n")?;
    }
    let mut n = 1;
    loop {
        let folder = if n == 1 {
            stamp.to_owned()
        } else {
            format!("{stamp}-{n}")
        };
        let dest = backups.join(folder).join(rel);
        if !dest.exists() {
            std::fs::create_dir_all(dest.parent().unwrap_or(&backups))?;
            std::fs::copy(target, &dest)?;
            return Ok(dest);
        }
        n += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, content: &str) -> ProposedFile {
        ProposedFile {
            path: path.into(),
            content: content.into(),
            truncated: false,
        }
    }

    #[test]
    fn old_version_goes_to_backup_and_new_one_replaces_it() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("src")).unwrap();
        std::fs::write(d.path().join("src/a.js"), "old\r\n").unwrap();
        let sb = Sandbox::new(d.path()).unwrap();
        let w = write(&sb, &file("src/a.js", "new\r\n\tx  "), "20261129-101500").unwrap();
        assert_eq!(w.backup.as_deref(), Some("backup/20261129-101500/src/a.js"));
        assert_eq!(
            std::fs::read_to_string(d.path().join("src/a.js")).unwrap(),
            "new\r\n\tx  "
        );
        assert_eq!(
            std::fs::read_to_string(d.path().join("backup/20261129-101500/src/a.js")).unwrap(),
            "old\r\n"
        );
        // A second write in the same second keeps the first backup.
        let w2 = write(&sb, &file("src/a.js", "newer"), "20261129-101500").unwrap();
        assert_eq!(
            w2.backup.as_deref(),
            Some("backup/20261129-101500-2/src/a.js")
        );
        assert_eq!(
            std::fs::read_to_string(d.path().join("backup/20261129-101500-2/src/a.js")).unwrap(),
            "new\r\n\tx  "
        );
    }

    #[test]
    fn new_files_get_their_folders_and_no_backup() {
        let d = tempfile::tempdir().unwrap();
        let sb = Sandbox::new(d.path()).unwrap();
        let w = write(&sb, &file("deep/er/новый файл #1.txt", "x"), "s").unwrap();
        assert_eq!(
            w,
            Written {
                path: "deep/er/новый файл #1.txt".into(),
                backup: None
            }
        );
        assert!(!d.path().join("backup").exists());
    }

    #[test]
    fn truncated_reserved_and_escaping_files_are_not_written() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.js"), "whole").unwrap();
        let sb = Sandbox::new(d.path()).unwrap();
        let mut half = file("a.js", "ha");
        half.truncated = true;
        assert!(matches!(
            write(&sb, &half, "s"),
            Err(ApplyError::Truncated { .. })
        ));
        assert_eq!(
            std::fs::read_to_string(d.path().join("a.js")).unwrap(),
            "whole"
        );
        for p in [".git/config", "backup/x", "../x", "/tmp/x"] {
            assert!(
                matches!(
                    write(&sb, &file(p, "x"), "s"),
                    Err(ApplyError::Refused { .. })
                ),
                "{p}"
            );
        }
        assert!(!d.path().join(".git").exists());
    }
}
