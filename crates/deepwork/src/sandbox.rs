//! The project folder as the only world deepwork reads from and writes to.
//!
//! Every path that comes from a model's answer goes through [`Sandbox`]: it is taken as a
//! path relative to the project root, spelled with `/` or `\`, and refused when it is absolute,
//! climbs out with `..`, hides such a climb behind percent-encoding, points into `.git/` or
//! `backup/`, or resolves (through symlinks) to somewhere outside the root.

use std::io;
use std::path::{Component, Path, PathBuf};

/// Why a path from an answer was not let through.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SandboxError {
    /// The path was empty or only separators.
    #[error("empty path")]
    Empty,
    /// The path is absolute (`/etc`, `C:\x`, `\\server\share`).
    #[error("absolute paths are not allowed")]
    Absolute,
    /// The path climbs out of the project with `..`.
    #[error("path escapes the project folder")]
    Escapes,
    /// The path carries percent-encoded separators or dots, or a NUL byte.
    #[error("encoded or control characters in the path")]
    Encoded,
    /// The path goes into `.git/` or `backup/`, which deepwork never touches.
    #[error("{0}/ is off limits")]
    Reserved(&'static str),
    /// The path resolves through a symlink to a place outside the project folder.
    #[error("symlink resolves outside the project folder")]
    SymlinkEscape,
}

/// The project root, canonicalised once.
#[derive(Debug, Clone)]
pub struct Sandbox {
    root: PathBuf,
}

/// The name of the folder that keeps old versions of written files.
pub const BACKUP_DIR: &str = "backup";

impl Sandbox {
    /// Opens a project folder.
    ///
    /// # Errors
    /// When the folder does not exist or is not a folder.
    pub fn new(root: impl AsRef<Path>) -> io::Result<Sandbox> {
        let root = root.as_ref();
        let canonical = canonical(root)?;
        if !canonical.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a folder", root.display()),
            ));
        }
        Ok(Sandbox { root: canonical })
    }

    /// The canonical project root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a path from an answer, for reading or writing alike: inside the root, never
    /// into a `.git` folder or the top-level `backup/`. A path that does not exist yet is not
    /// an error here.
    ///
    /// # Errors
    /// See [`SandboxError`].
    pub fn resolve(&self, raw: &str) -> Result<PathBuf, SandboxError> {
        let rel = normalize(raw)?;
        check_reserved(&rel)?;
        self.contain(&rel)
    }

    /// The path relative to the root, spelled with `/`, for messages and logs.
    pub fn display_rel(&self, path: &Path) -> String {
        let rel = path.strip_prefix(&self.root).unwrap_or(path);
        rel_to_slash(rel)
    }

    /// Joins and checks that the deepest existing ancestor, symlinks resolved, stays inside.
    fn contain(&self, rel: &Path) -> Result<PathBuf, SandboxError> {
        let joined = self.root.join(rel);
        let mut existing = joined.as_path();
        let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
        loop {
            // symlink_metadata succeeds for dangling links too: resolve them as well.
            if existing.symlink_metadata().is_ok() {
                break;
            }
            match (existing.parent(), existing.file_name()) {
                (Some(parent), Some(name)) => {
                    rest.push(name);
                    existing = parent;
                }
                _ => return Err(SandboxError::Escapes),
            }
        }
        let resolved = match canonical(existing) {
            Ok(p) => p,
            // A dangling symlink: where it points is unknown, refuse it.
            Err(_) => return Err(SandboxError::SymlinkEscape),
        };
        if !resolved.starts_with(&self.root) {
            return Err(SandboxError::SymlinkEscape);
        }
        let mut out = resolved;
        for name in rest.into_iter().rev() {
            out.push(name);
        }
        // A link inside the project that leads into .git is as reserved as .git itself.
        if let Ok(inner) = out.strip_prefix(&self.root)
            && inner.components().any(|c| {
                matches!(c, Component::Normal(n) if n.to_string_lossy().eq_ignore_ascii_case(".git"))
            })
        {
            return Err(SandboxError::Reserved(".git"));
        }
        Ok(out)
    }
}

/// `.git` anywhere and `backup` at the top are never read or written through an answer.
fn check_reserved(rel: &Path) -> Result<(), SandboxError> {
    for (i, comp) in rel.components().enumerate() {
        let Component::Normal(name) = comp else {
            continue;
        };
        let name = name.to_string_lossy();
        if name.eq_ignore_ascii_case(".git") {
            return Err(SandboxError::Reserved(".git"));
        }
        if i == 0 && name.eq_ignore_ascii_case(BACKUP_DIR) {
            return Err(SandboxError::Reserved(BACKUP_DIR));
        }
    }
    Ok(())
}

/// Turns a raw path from an answer into a clean relative path.
fn normalize(raw: &str) -> Result<PathBuf, SandboxError> {
    let raw = raw.trim();
    if raw.chars().any(|c| c == '\0' || c.is_control()) {
        return Err(SandboxError::Encoded);
    }
    if has_encoded_trick(raw) {
        return Err(SandboxError::Encoded);
    }
    // Windows spellings: drive letters and UNC paths are absolute wherever we run.
    let bytes = raw.as_bytes();
    if bytes.len() >= 2 && bytes[1] == b':' && bytes[0].is_ascii_alphabetic() {
        return Err(SandboxError::Absolute);
    }
    if raw.starts_with('/') || raw.starts_with('\\') || raw.starts_with('~') {
        return Err(SandboxError::Absolute);
    }
    let mut out = PathBuf::new();
    for part in raw.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => return Err(SandboxError::Escapes),
            name => out.push(name),
        }
    }
    if out.as_os_str().is_empty() {
        return Err(SandboxError::Empty);
    }
    if Path::new(&out).is_absolute() {
        return Err(SandboxError::Absolute);
    }
    Ok(out)
}

/// Percent-encoded dots, slashes, backslashes or NUL: a legitimate file name does not need
/// them, and a tool down the line might decode them.
fn has_encoded_trick(raw: &str) -> bool {
    let decoded = percent_encoding::percent_decode_str(raw).decode_utf8_lossy();
    if decoded == raw {
        return false;
    }
    let lower = raw.to_ascii_lowercase();
    ["%2e", "%2f", "%5c", "%00", "%25"]
        .iter()
        .any(|needle| lower.contains(needle))
}

/// `std::fs::canonicalize` without the `\\?\` prefix on Windows.
pub(crate) fn canonical(path: &Path) -> io::Result<PathBuf> {
    let p = std::fs::canonicalize(path)?;
    #[cfg(windows)]
    {
        let s = p.to_string_lossy();
        if let Some(rest) = s.strip_prefix(r"\\?\")
            && !rest.starts_with("UNC\\")
        {
            return Ok(PathBuf::from(rest.to_string()));
        }
    }
    Ok(p)
}

/// A relative path spelled with `/` on every platform.
pub fn rel_to_slash(rel: &Path) -> String {
    let mut out = String::new();
    for comp in rel.components() {
        if let Component::Normal(name) = comp {
            if !out.is_empty() {
                out.push('/');
            }
            out.push_str(&name.to_string_lossy());
        }
    }
    out
}

/// For the tests of the modules that read through a [`Sandbox`]: a temp project folder holding
/// `files` (parent folders made as needed), and the sandbox over it.
#[cfg(test)]
pub(crate) fn project(files: &[(&str, &[u8])]) -> (tempfile::TempDir, Sandbox) {
    let d = tempfile::tempdir().unwrap();
    for (p, c) in files {
        let full = d.path().join(p);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, c).unwrap();
    }
    let sb = Sandbox::new(d.path()).unwrap();
    (d, sb)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sandbox() -> (tempfile::TempDir, Sandbox) {
        project(&[("src/a.js", b"a")])
    }

    #[test]
    fn plain_relative_paths_resolve_inside() {
        let (_d, sb) = sandbox();
        let p = sb.resolve("src/a.js").unwrap();
        assert_eq!(p, sb.root().join("src").join("a.js"));
        assert_eq!(sb.resolve("./src\\a.js").unwrap(), p);
        // A file that does not exist yet is still inside.
        assert!(
            sb.resolve("new/dir/file.txt")
                .unwrap()
                .starts_with(sb.root())
        );
    }

    #[test]
    fn escapes_and_absolute_paths_are_refused() {
        let (_d, sb) = sandbox();
        for (raw, want) in [
            ("../x", SandboxError::Escapes),
            ("src/../../x", SandboxError::Escapes),
            ("src/..", SandboxError::Escapes),
            ("/etc/passwd", SandboxError::Absolute),
            ("\\windows", SandboxError::Absolute),
            ("C:/Windows/win.ini", SandboxError::Absolute),
            ("c:x", SandboxError::Absolute),
            ("~/.ssh/id_rsa", SandboxError::Absolute),
            ("%2e%2e/x", SandboxError::Encoded),
            ("..%2fx", SandboxError::Encoded),
            ("src%5c..%5c..%5cx", SandboxError::Encoded),
            ("a\0b", SandboxError::Encoded),
            ("", SandboxError::Empty),
            ("./", SandboxError::Empty),
        ] {
            assert_eq!(sb.resolve(raw), Err(want), "{raw}");
        }
    }

    #[test]
    fn a_literal_percent_in_a_name_is_fine() {
        let (_d, sb) = sandbox();
        assert!(sb.resolve("100% done.txt").is_ok());
        assert!(sb.resolve("50%off.md").is_ok());
    }

    #[test]
    fn git_and_backup_are_reserved() {
        let (_d, sb) = sandbox();
        assert_eq!(
            sb.resolve(".git/config"),
            Err(SandboxError::Reserved(".git"))
        );
        assert_eq!(
            sb.resolve("sub/.GIT/x"),
            Err(SandboxError::Reserved(".git"))
        );
        assert_eq!(
            sb.resolve("backup/x"),
            Err(SandboxError::Reserved("backup"))
        );
        assert_eq!(
            sb.resolve(".git/config"),
            Err(SandboxError::Reserved(".git"))
        );
        // Only the top-level backup folder is ours.
        assert!(sb.resolve("src/backup/x").is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_out_of_the_root_are_refused() {
        let (d, sb) = sandbox();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), d.path().join("link")).unwrap();
        std::os::unix::fs::symlink(outside.path(), d.path().join("dirlink")).unwrap();
        std::os::unix::fs::symlink(d.path().join("src/a.js"), d.path().join("inside")).unwrap();
        std::os::unix::fs::symlink("/nonexistent/target", d.path().join("dangling")).unwrap();
        assert_eq!(sb.resolve("link"), Err(SandboxError::SymlinkEscape));
        assert_eq!(
            sb.resolve("dirlink/secret"),
            Err(SandboxError::SymlinkEscape)
        );
        assert_eq!(
            sb.resolve("dirlink/new.txt"),
            Err(SandboxError::SymlinkEscape)
        );
        assert_eq!(sb.resolve("dangling"), Err(SandboxError::SymlinkEscape));
        assert_eq!(sb.resolve("inside").unwrap(), sb.root().join("src/a.js"));
    }

    #[test]
    fn display_uses_forward_slashes() {
        let (_d, sb) = sandbox();
        let p = sb.root().join("src").join("a.js");
        assert_eq!(sb.display_rel(&p), "src/a.js");
    }
}
