//! The run history: a SQLite file in the app's data folder (sqlx, migrations embedded, WAL).
//! Every run is kept — folder, question, ticked files, steps, answer, proposed files and
//! what was written — so a run can be reopened and its files written later.

use std::path::Path;
use std::str::FromStr;

use deepwork::{ProposedFile, Step, StopReason};
use serde::Serialize;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use sqlx::{FromRow, Row};
use ts_rs::TS;

/// The history database.
#[derive(Debug, Clone)]
pub struct History {
    pool: SqlitePool,
}

/// A run as the history list shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct RunSummary {
    /// The id.
    #[ts(type = "number")]
    pub id: i64,
    /// The project folder.
    pub folder: String,
    /// The question.
    pub question: String,
    /// When it started (RFC 3339).
    pub started_at: String,
    /// Why it ended; `None` while running or after an error.
    pub stop_reason: Option<StopReason>,
    /// Steps taken.
    pub steps: u32,
    /// The error, if it failed.
    pub error: Option<String>,
}

/// A stored run in full.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRun {
    /// The summary fields.
    pub summary: RunSummary,
    /// Ticked files.
    pub files: Vec<String>,
    /// The steps.
    pub steps: Vec<Step>,
    /// The final answer.
    pub answer: Option<String>,
    /// The proposed files with the disk hash at answer time.
    pub proposed: Vec<(ProposedFile, Option<String>)>,
    /// What was written.
    pub writes: Vec<WriteRecord>,
}

/// One write of a proposed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS, FromRow)]
pub struct WriteRecord {
    /// Relative path.
    pub path: String,
    /// Where the old version went, if there was one.
    pub backup: Option<String>,
    /// When (RFC 3339).
    pub written_at: String,
}

fn now() -> String {
    chrono::Local::now().to_rfc3339()
}

impl History {
    /// Opens (creating if missing) the database and applies the migrations.
    ///
    /// # Errors
    /// When the file cannot be opened or migrated.
    pub async fn open(path: &Path) -> Result<History, sqlx::Error> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(sqlx::Error::Io)?;
        }
        let opts = SqliteConnectOptions::from_str("sqlite://")?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .foreign_keys(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(opts)
            .await?;
        sqlx::migrate!("./migrations").run(&pool).await?;
        Ok(History { pool })
    }

    /// Records a run that starts now; returns its id.
    ///
    /// # Errors
    /// On database failure.
    pub async fn start(
        &self,
        folder: &str,
        question: &str,
        files: &[String],
    ) -> Result<i64, sqlx::Error> {
        let files = serde_json::to_string(files).unwrap_or_else(|_| "[]".into());
        let row = sqlx::query("INSERT INTO runs (folder, question, files, started_at) VALUES (?, ?, ?, ?) RETURNING id")
            .bind(folder)
            .bind(question)
            .bind(files)
            .bind(now())
            .fetch_one(&self.pool)
            .await?;
        row.try_get(0)
    }

    /// Records how a run ended and what it proposed.
    ///
    /// # Errors
    /// On database failure.
    pub async fn finish(
        &self,
        id: i64,
        stop_reason: StopReason,
        steps: &[Step],
        answer: &str,
        proposed: &[(ProposedFile, Option<String>)],
    ) -> Result<(), sqlx::Error> {
        let mut tx = self.pool.begin().await?;
        sqlx::query(
            "UPDATE runs SET finished_at = ?, stop_reason = ?, steps = ?, answer = ? WHERE id = ?",
        )
        .bind(now())
        .bind(stop_reason.as_str())
        .bind(serde_json::to_string(steps).unwrap_or_else(|_| "[]".into()))
        .bind(answer)
        .bind(id)
        .execute(&mut *tx)
        .await?;
        for (f, hash) in proposed {
            sqlx::query("INSERT OR REPLACE INTO proposed (run_id, path, content, truncated, disk_hash) VALUES (?, ?, ?, ?, ?)")
                .bind(id)
                .bind(&f.path)
                .bind(&f.content)
                .bind(f.truncated)
                .bind(hash)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await
    }

    /// Records a failed or stopped run.
    ///
    /// # Errors
    /// On database failure.
    pub async fn fail(&self, id: i64, steps: &[Step], error: &str) -> Result<(), sqlx::Error> {
        sqlx::query("UPDATE runs SET finished_at = ?, steps = ?, error = ? WHERE id = ?")
            .bind(now())
            .bind(serde_json::to_string(steps).unwrap_or_else(|_| "[]".into()))
            .bind(error)
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Records a write.
    ///
    /// # Errors
    /// On database failure.
    pub async fn record_write(
        &self,
        id: i64,
        path: &str,
        backup: Option<&str>,
    ) -> Result<WriteRecord, sqlx::Error> {
        let at = now();
        sqlx::query("INSERT INTO writes (run_id, path, backup, written_at) VALUES (?, ?, ?, ?)")
            .bind(id)
            .bind(path)
            .bind(backup)
            .bind(&at)
            .execute(&self.pool)
            .await?;
        Ok(WriteRecord {
            path: path.to_owned(),
            backup: backup.map(str::to_owned),
            written_at: at,
        })
    }

    /// The latest runs first.
    ///
    /// # Errors
    /// On database failure.
    pub async fn list(&self, limit: u32) -> Result<Vec<RunSummary>, sqlx::Error> {
        let rows = sqlx::query("SELECT id, folder, question, started_at, stop_reason, steps, error FROM runs ORDER BY id DESC LIMIT ?")
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(summary).collect()
    }

    /// One run in full.
    ///
    /// # Errors
    /// On database failure; `Ok(None)` when there is no such run.
    pub async fn get(&self, id: i64) -> Result<Option<StoredRun>, sqlx::Error> {
        let Some(row) = sqlx::query("SELECT id, folder, question, started_at, stop_reason, steps, error, files, answer FROM runs WHERE id = ?")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
        else {
            return Ok(None);
        };
        let proposed = sqlx::query("SELECT path, content, truncated, disk_hash FROM proposed WHERE run_id = ? ORDER BY rowid")
            .bind(id)
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|r| {
                Ok((
                    ProposedFile { path: r.try_get("path")?, content: r.try_get("content")?, truncated: r.try_get("truncated")? },
                    r.try_get("disk_hash")?,
                ))
            })
            .collect::<Result<Vec<_>, sqlx::Error>>()?;
        let writes = sqlx::query_as::<_, WriteRecord>(
            "SELECT path, backup, written_at FROM writes WHERE run_id = ? ORDER BY id",
        )
        .bind(id)
        .fetch_all(&self.pool)
        .await?;
        let files: String = row.try_get("files")?;
        let steps_json: String = row.try_get("steps")?;
        Ok(Some(StoredRun {
            summary: summary(&row)?,
            files: serde_json::from_str(&files).unwrap_or_default(),
            steps: serde_json::from_str(&steps_json).unwrap_or_default(),
            answer: row.try_get("answer")?,
            proposed,
            writes,
        }))
    }
}

fn summary(row: &sqlx::sqlite::SqliteRow) -> Result<RunSummary, sqlx::Error> {
    let stop: Option<String> = row.try_get("stop_reason")?;
    let steps: String = row.try_get("steps")?;
    let steps: Vec<serde_json::Value> = serde_json::from_str(&steps).unwrap_or_default();
    Ok(RunSummary {
        id: row.try_get("id")?,
        folder: row.try_get("folder")?,
        question: row.try_get("question")?,
        started_at: row.try_get("started_at")?,
        stop_reason: stop.and_then(|s| serde_json::from_value(serde_json::Value::String(s)).ok()),
        steps: u32::try_from(steps.len()).unwrap_or(u32::MAX),
        error: row.try_get("error")?,
    })
}

/// FNV-1a 64 of a file's bytes, hex: a stable fingerprint to notice that a file changed.
pub fn fingerprint(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_run_round_trips_with_its_files_and_writes() {
        let d = tempfile::tempdir().unwrap();
        let h = History::open(&d.path().join("history.sqlite"))
            .await
            .unwrap();
        let id = h.start("/p", "where?", &["a.js".into()]).await.unwrap();
        let step = Step {
            n: 1,
            new: false,
            sent_chars: 10,
            answer_chars: 5,
            requests: vec![],
        };
        let file = ProposedFile {
            path: "a.js".into(),
            content: "x".into(),
            truncated: false,
        };
        h.finish(
            id,
            StopReason::NoRequests,
            std::slice::from_ref(&step),
            "answer",
            &[(file.clone(), Some("ab".into()))],
        )
        .await
        .unwrap();
        h.record_write(id, "a.js", Some("backup/1/a.js"))
            .await
            .unwrap();
        let run = h.get(id).await.unwrap().unwrap();
        assert_eq!(run.summary.stop_reason, Some(StopReason::NoRequests));
        assert_eq!(run.steps, vec![step]);
        assert_eq!(run.files, vec!["a.js"]);
        assert_eq!(run.proposed, vec![(file, Some("ab".into()))]);
        assert_eq!(run.writes[0].backup.as_deref(), Some("backup/1/a.js"));
        let list = h.list(10).await.unwrap();
        assert_eq!((list.len(), list[0].steps), (1, 1));
        // The file survives a reopen.
        drop(h);
        let h = History::open(&d.path().join("history.sqlite"))
            .await
            .unwrap();
        assert!(h.get(id).await.unwrap().is_some());
        assert!(h.get(id + 1).await.unwrap().is_none());
    }

    #[test]
    fn fingerprints_differ_for_different_bytes() {
        assert_eq!(fingerprint(b""), "cbf29ce484222325");
        assert_ne!(fingerprint(b"a"), fingerprint(b"b"));
    }
}
