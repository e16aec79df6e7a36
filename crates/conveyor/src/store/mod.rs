//! SQLite storage: the queue lives on disk. Every SQL statement of the daemon lives under this
//! module, one file per table (Yaak's `queries/<table>.rs`): the rest of the crate calls named
//! functions (`runs::start`, `lines::set_priority`, …) and never sees a query or the pool.
//!
//! Each function takes a connection — `&mut *store.conn().await?` for a call of its own, or
//! `&mut tx` inside a caller's transaction (from [`Store::begin`]) — so a change of several
//! rows is one transaction whoever composes it. Functions that write several rows open their
//! own transaction (nested in the caller's, when there is one, as a savepoint). A plain
//! `&mut SqliteConnection` rather than a generic `impl Acquire`: sqlx's `Acquire` ties its
//! lifetime to the borrow, and futures generic over it fail the `Send` check of a spawned
//! task ("implementation of `Acquire` is not general enough").
//!
//! Migrations are embedded; the database runs in WAL mode with foreign keys on. States, kinds
//! and outcomes are stored by their wire names and read back through [`names`]: a value no
//! variant carries is an error naming the column, never a silent default.
//!
//! The files stand in layers, and a file imports only those below it. At the bottom what
//! every table shares: [`names`] and `sql` (times, an `IN` list's placeholders); what counts as
//! the same title or question is `conveyor_core::text`. Then the tables. A change that spans tables lives
//! with the table that drives it and calls down, never back up: a step done (`steps`) writes
//! its run, its line's checkpoint and the answers it carried; a run (`runs`) its line's
//! session; a raised level (`lines`) its note in the journal; a question (`questions`) its
//! journal entry. What reads several tables for a caller stands above them all: a line as the
//! API shows it, [`line_view`].

pub mod account;
pub mod calibration;
pub mod deploys;
pub mod journal;
pub mod line_view;
pub mod lines;
mod names;
pub mod outbox;
pub mod projects;
pub mod questions;
pub mod rate_limits;
pub mod refusals;
pub mod runs;
mod sql;
pub mod steps;

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::pool::PoolConnection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Sqlite, SqlitePool, Transaction};

use crate::error::Result;

pub use lines::LineRow;
pub use projects::ProjectRow;
pub use questions::QuestionRow;
pub use sql::{now_ms, rfc3339};
pub use steps::{StepRow, StepWithCost};

/// A transaction over the store: pass `&mut *tx` to the table functions, then `commit`.
pub type Tx = Transaction<'static, Sqlite>;

/// The database. Cheap to clone (the pool inside is shared).
#[derive(Debug, Clone)]
pub struct Store {
    pool: SqlitePool,
}

impl Store {
    /// Opens (creating if missing) the database at `path` and applies the migrations.
    ///
    /// # Errors
    /// [`crate::error::Error::Db`] or [`crate::error::Error::Migrate`].
    pub async fn open(path: &Path) -> Result<Store> {
        let opts = SqliteConnectOptions::from_str("sqlite://")?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10));
        let pool = SqlitePoolOptions::new()
            .max_connections(8)
            .connect_with(opts)
            .await?;
        sqlx::migrate!("./migrations").run(&pool).await?;
        Ok(Store { pool })
    }

    /// A connection from the pool, for one call (drop it before a long wait: the pool is
    /// small).
    ///
    /// # Errors
    /// Database errors (the pool timed out or is closed).
    pub async fn conn(&self) -> Result<PoolConnection<Sqlite>> {
        Ok(self.pool.acquire().await?)
    }

    /// Starts a transaction that writes: `BEGIN IMMEDIATE`, so it takes the write lock at once
    /// and waits for it (the busy timeout) while another writer holds it. A deferred one that
    /// reads first and writes later is refused the lock outright when another writer came in
    /// between (SQLite does not wait there, to avoid a deadlock): "database is locked".
    ///
    /// # Errors
    /// Database errors.
    pub async fn begin(&self) -> Result<Tx> {
        Ok(self.pool.begin_with("BEGIN IMMEDIATE").await?)
    }

    /// Waits for the connections to close (at shutdown).
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// A store in a temporary SQLite file, and rows to fill it, for unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    pub async fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db")).await.unwrap();
        (dir, store)
    }

    /// Runs one statement (a test's own fixture: a trigger, a row in an odd state).
    pub async fn exec(store: &Store, sql: &str) {
        sqlx::query(sql).execute(&store.pool).await.unwrap();
    }

    /// A run that ended at `at` (unix ms) as `kind` with `outcome`, having cost `cost`.
    pub async fn end_run(store: &Store, run: i64, kind: &str, outcome: &str, cost: f64, at: i64) {
        sqlx::query(
            "UPDATE runs SET kind = ?, outcome = ?, cost_usd = ?, finished_at = ? WHERE id = ?",
        )
        .bind(kind)
        .bind(outcome)
        .bind(cost)
        .bind(at)
        .bind(run)
        .execute(&store.pool)
        .await
        .unwrap();
    }

    /// The stored outcome of a run, as text.
    pub async fn run_outcome(store: &Store, run: i64) -> String {
        sqlx::query_scalar("SELECT outcome FROM runs WHERE id = ?")
            .bind(run)
            .fetch_one(&store.pool)
            .await
            .unwrap()
    }

    /// A line (and its project, made when missing) in `state`; returns the line's id.
    pub async fn line(
        store: &Store,
        project: &str,
        id: &str,
        priority: i64,
        state: &str,
    ) -> String {
        let c = &mut store.conn().await.unwrap();
        if projects::get(c, project).await.unwrap().is_none() {
            projects::insert(
                c,
                &ProjectRow {
                    id: project.into(),
                    name: project.into(),
                    repo_path: format!("/nonexistent/{project}"),
                    main_branch: "main".into(),
                    created_at: now_ms(),
                },
            )
            .await
            .unwrap();
        }
        let mut row = LineRow::new(
            project.into(),
            id.into(),
            "task".into(),
            i32::try_from(priority).unwrap(),
            now_ms(),
        );
        row.id = id.into();
        row.branch = format!("line/{id}");
        row.state = conveyor_api::LineState::parse(state).expect("a line state");
        lines::insert(c, &mut row).await.unwrap();
        id.into()
    }

    /// A pending step of `kind` appended to the line.
    pub async fn step(store: &Store, line: &str, kind: conveyor_api::StepKind) -> StepRow {
        steps::add(&mut store.conn().await.unwrap(), line, kind, "s", "t", &[])
            .await
            .unwrap()
    }

    /// A run of `step` left `running`; returns its id.
    pub async fn run(store: &Store, step: &str, line: &str) -> i64 {
        runs::start(
            &mut store.conn().await.unwrap(),
            &runs::NewRun {
                step_id: step,
                line_id: line,
                kind: conveyor_api::StepKind::Executor,
                attempt: 1,
                resumed: false,
                estimate_usd: 0.0,
                log_path: None,
            },
        )
        .await
        .unwrap()
    }
}
