//! The API's bearer token: read from the config or its `token_file`, which the daemon's first
//! start creates when it is missing.

use super::daemon::Config;
use super::invalid::Invalid;
use super::secret::{token_in, write_private};
use crate::error::Error;

impl Config {
    /// The bearer token.
    ///
    /// # Errors
    /// [`Error::Config`] when the token file is missing or empty.
    pub fn read_token(&self) -> Result<String, Error> {
        if let Some(t) = &self.token {
            return Ok(t.clone());
        }
        let Some(path) = &self.token_file else {
            return Err(self.error(Invalid::NoToken.to_string()));
        };
        let text = std::fs::read_to_string(path)
            .map_err(|e| self.error(format!("token_file {}: {e}", path.display())))?;
        token_in(&text)
            .map(str::to_string)
            .ok_or_else(|| self.error(format!("token_file {} is empty", path.display())))
    }

    /// The bearer token for the daemon that serves with this config: as [`Config::read_token`],
    /// except that a `token_file` that does not exist yet is created, holding a fresh random
    /// token, readable by its owner only — the first start needs no manual token step. Its
    /// folder must exist; an existing file is never rewritten (an empty one stays an error).
    ///
    /// # Errors
    /// [`Error::Config`] naming the token file when it cannot be created or read.
    pub fn token_or_create(&self) -> Result<String, Error> {
        if self.token.is_none()
            && let Some(path) = &self.token_file
            && !path.exists()
        {
            let token = format!(
                "{}{}",
                uuid::Uuid::new_v4().simple(),
                uuid::Uuid::new_v4().simple()
            );
            write_private(path, &format!("{token}\n"))
                .map_err(|e| self.error(format!("token_file {}: {e}", path.display())))?;
            tracing::info!(
                token_file = %path.display(),
                "created the API token (mode 0600): clients read it there"
            );
        }
        self.read_token()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_file_error_names_the_config_file_and_the_token_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("conveyor.toml");
        std::fs::write(&p, "data_dir = \"d\"\ntoken_file = \"secret/token\"\n").unwrap();
        let c = Config::load(&p).unwrap();
        assert_eq!(c.file.as_deref(), Some(p.as_path()));
        let e = c.read_token().unwrap_err().to_string();
        let token = dir.path().join("secret/token");
        assert!(
            e.starts_with(&format!("{}: token_file {}", p.display(), token.display())),
            "{e}"
        );
        std::fs::create_dir(dir.path().join("secret")).unwrap();
        std::fs::write(&token, "\n").unwrap();
        let e = c.read_token().unwrap_err().to_string();
        assert_eq!(
            e,
            format!("{}: token_file {} is empty", p.display(), token.display())
        );
        std::fs::write(&token, "s3cret\n").unwrap();
        assert_eq!(c.read_token().unwrap(), "s3cret");
        // A config built in code has no file, and says so.
        let e = Config::new("/tmp/x").read_token().unwrap_err().to_string();
        assert_eq!(e, "(config built in code): token_file is required");
    }

    #[test]
    fn the_first_start_creates_a_missing_token_file_and_never_rewrites_one() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("conveyor.toml");
        std::fs::write(&p, "data_dir = \"d\"\ntoken_file = \"token\"\n").unwrap();
        let c = Config::load(&p).unwrap();
        let token = c.token_or_create().unwrap();
        assert_eq!(token.len(), 64, "{token}");
        assert!(token.chars().all(|c| c.is_ascii_hexdigit()), "{token}");
        let file = dir.path().join("token");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&file).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // The next start reads the same token; a client reads it too.
        assert_eq!(c.token_or_create().unwrap(), token);
        assert_eq!(c.read_token().unwrap(), token);
        // An empty file is the user's mistake, not a missing file: still refused.
        std::fs::write(&file, "").unwrap();
        assert!(
            c.token_or_create()
                .unwrap_err()
                .to_string()
                .contains("is empty")
        );
        // A token_file whose folder is missing names the file.
        std::fs::write(&p, "data_dir = \"d\"\ntoken_file = \"no/such/token\"\n").unwrap();
        let e = Config::load(&p)
            .unwrap()
            .token_or_create()
            .unwrap_err()
            .to_string();
        assert!(e.contains("no/such/token"), "{e}");
    }
}
