//! The library's error type.

use std::path::PathBuf;

/// What can go wrong inside the daemon.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `conveyor.toml` could not be read or is invalid.
    #[error("{}: {message}", path.display())]
    Config {
        /// The file.
        path: PathBuf,
        /// What is wrong, with line and column when known.
        message: String,
    },
    /// A project's `.conveyor.toml` is invalid.
    #[error(".conveyor.toml: {message}")]
    Checklist {
        /// What is wrong, with line and column.
        message: String,
    },
    /// The database failed.
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
    /// A migration failed.
    #[error("database migration: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A git operation failed.
    #[error("git in {}: {message}", repo.display())]
    Git {
        /// The repository or worktree.
        repo: PathBuf,
        /// What failed, with git's own words.
        message: String,
    },
    /// A git call stopped by its cancellation token: the daemon is shutting down, or the line
    /// was cancelled. The work it was part of is taken up again (after the restart).
    #[error("git {command} in {}: stopped (the daemon is shutting down or the line was cancelled)", repo.display())]
    GitCancelled {
        /// The repository or worktree.
        repo: PathBuf,
        /// The git arguments.
        command: String,
    },
    /// A file operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A child process could not be started.
    #[error("cannot start {program}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The listening socket could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: std::net::SocketAddr,
        /// The cause.
        source: std::io::Error,
    },
    /// Something that should not happen (a task panicked).
    #[error("internal: {0}")]
    Internal(String),
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// The library's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;
