//! The remote daemon's token: in the platform's keyring when one answers, else in a file only
//! the user can read. Never in the plain settings file.

use std::path::{Path, PathBuf};

use super::types::TokenStore;
use crate::error::{AppError, ErrorCode};

const SERVICE: &str = "dev.pult.app.conveyor";
const ACCOUNT: &str = "remote-token";

/// Where tokens go.
#[derive(Debug, Clone)]
pub struct Tokens {
    /// The fallback file (mode 0600).
    pub file: PathBuf,
    /// Try the keyring first (off in tests, which must not touch the user's keyring).
    pub keyring: bool,
}

impl Tokens {
    /// Stores `token`, in the keyring if it takes it, else in the file; says where.
    ///
    /// # Errors
    /// `internal` when neither the keyring nor the file can hold it.
    pub fn save(&self, token: &str) -> Result<TokenStore, AppError> {
        if self.keyring {
            match keyring_set(token) {
                Ok(()) => {
                    // A token in the keyring must not linger in the file.
                    let _ = std::fs::remove_file(&self.file);
                    return Ok(TokenStore::Keyring);
                }
                Err(e) => tracing::info!(error = %e, "no keyring: keeping the token in a file"),
            }
        }
        write_private(&self.file, token).map_err(|e| {
            AppError::new(
                ErrorCode::Internal,
                format!("cannot keep the token in {}: {e}", self.file.display()),
            )
        })?;
        Ok(TokenStore::File)
    }

    /// The stored token and where it was found.
    pub fn load(&self) -> Option<(String, TokenStore)> {
        if self.keyring
            && let Ok(t) = keyring::Entry::new(SERVICE, ACCOUNT).and_then(|e| e.get_password())
        {
            return Some((t, TokenStore::Keyring));
        }
        let text = std::fs::read_to_string(&self.file).ok()?;
        let t = text.trim();
        (!t.is_empty()).then(|| (t.to_string(), TokenStore::File))
    }
}

fn keyring_set(token: &str) -> keyring::Result<()> {
    let entry = keyring::Entry::new(SERVICE, ACCOUNT)?;
    entry.set_password(token)?;
    // Some backends accept a write they cannot give back: only trust a round trip.
    if entry.get_password()? == token {
        Ok(())
    } else {
        Err(keyring::Error::NoEntry)
    }
}

/// Writes `text` to `path` readable by the user only: the file is created 0600 before any
/// byte is written, and replaced atomically.
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("tmp");
    let _ = std::fs::remove_file(&tmp);
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        opts.mode(0o600);
    }
    let mut f = opts.open(&tmp)?;
    f.write_all(text.as_bytes())?;
    f.write_all(b"\n")?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_keyring_the_token_goes_to_a_file_only_the_user_can_read() {
        let dir = tempfile::tempdir().unwrap();
        let t = Tokens {
            file: dir.path().join("sub/conveyor-token"),
            keyring: false,
        };
        assert_eq!(t.load(), None);
        assert_eq!(t.save("s3cret").unwrap(), TokenStore::File);
        assert_eq!(t.load(), Some(("s3cret".into(), TokenStore::File)));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&t.file).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{mode:o}");
        }
        // Replacing keeps the mode and the new value.
        t.save("other").unwrap();
        assert_eq!(t.load().unwrap().0, "other");
    }
}
