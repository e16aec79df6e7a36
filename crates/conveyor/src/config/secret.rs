//! Secrets kept in files of their own (the API's token, the bots' and PlanFix's tokens): the
//! token a file's text holds, read only from a file its owner alone may read, and written
//! into a new file only its owner may read.

use std::path::Path;

/// The token a token file's text holds: its first line, trimmed; `None` when that is empty.
/// The daemon and every client subcommand read token files this one way.
pub fn token_in(text: &str) -> Option<&str> {
    Some(text.lines().next().unwrap_or("").trim()).filter(|t| !t.is_empty())
}

/// Reads a secret (a bot token, an API token) from its file: the first line, trimmed. The
/// file must be readable by its owner only, as ssh insists for its keys: a token others can
/// read is a token others have.
///
/// # Errors
/// A message naming the field and the file: missing, empty, or open to others.
pub fn read_secret(path: &Path, field: &str) -> Result<String, String> {
    let at = || format!("{field} {}", path.display());
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", at()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)
            .map_err(|e| format!("{}: {e}", at()))?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            return Err(format!(
                "{}: readable by others (mode {:o}); `chmod 600` it",
                at(),
                mode & 0o777
            ));
        }
    }
    token_in(&text)
        .map(str::to_string)
        .ok_or_else(|| format!("{} is empty", at()))
}

/// Writes a new file that only its owner may read: created with mode 0600 (never widened
/// first), and refused if it exists.
pub(super) fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut f = options.open(path)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()
}
