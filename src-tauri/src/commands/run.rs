//! Deepwork runs: start one (its step log streamed through a channel), stop it, write what it
//! proposed, and reopen past runs from the history.

use std::path::Path;
use std::sync::Arc;

use deepwork::{Ask, Cancel, Event, Limits, Loop, Prompts, ProposedFile, Sandbox, Step};
use serde::{Deserialize, Serialize};
use tauri::State;
use tauri::ipc::Channel;
use ts_rs::TS;

use crate::diff::{self, DiffHunk};
use crate::error::{AppError, ErrorCode};
use crate::history::{History, RunSummary, StoredRun, WriteRecord, fingerprint};
use crate::settings;
use crate::state::{AppState, OpenFolder};
use crate::sync::lock;

/// What the page asks.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, TS)]
pub struct RunRequest {
    /// The question.
    pub question: String,
    /// Ticked files, relative to the open folder.
    pub files: Vec<String>,
}

/// What the page hears while a run goes on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RunUpdate {
    /// A step event, as it happens.
    Event {
        /// The event.
        event: Event,
    },
    /// The run finished.
    Done {
        /// The whole run.
        run: RunView,
    },
    /// The run failed or was stopped.
    Failed {
        /// Why.
        error: AppError,
    },
}

/// A proposed file as the page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct ProposedView {
    /// Relative path as proposed.
    pub path: String,
    /// Cut off in the answer: never writable.
    pub truncated: bool,
    /// Whether the file exists on disk now.
    pub exists: bool,
    /// The file on disk changed since the answer arrived.
    pub changed_on_disk: bool,
    /// Why the path may not be written, if it may not.
    pub refused: Option<String>,
    /// Against the file on disk now.
    pub hunks: Vec<DiffHunk>,
    /// The last write of this file in this run.
    pub written: Option<WriteRecord>,
}

/// A run in full.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct RunView {
    /// Id, folder, question, stop reason…
    pub summary: RunSummary,
    /// Ticked files.
    pub files: Vec<String>,
    /// The steps.
    pub steps: Vec<Step>,
    /// The final answer.
    pub answer: Option<String>,
    /// The answer with each FILE block replaced by a line naming the file (shown below it).
    pub prose: Option<String>,
    /// Proposed files.
    pub proposed: Vec<ProposedView>,
    /// Every write.
    pub writes: Vec<WriteRecord>,
}

/// How a write request ended. A file changed on disk is an expected outcome, not an error:
/// the page asks before overwriting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WriteOutcome {
    /// Written; the record says where the old version went.
    Written {
        /// The write.
        record: WriteRecord,
    },
    /// Not written: the file changed on disk since the answer arrived.
    ChangedOnDisk {
        /// The path.
        path: String,
    },
}

fn internal(e: impl std::fmt::Display) -> AppError {
    AppError::new(ErrorCode::Internal, e.to_string())
}

/// Starts a run on the open folder; returns its id at once. Updates come through `on_update`.
#[tauri::command]
pub async fn start_run(
    state: State<'_, AppState>,
    request: RunRequest,
    on_update: Channel<RunUpdate>,
) -> Result<i64, AppError> {
    let open = state.folder()?;
    let config = settings::config(&state.paths.config)?;
    let prompts = Prompts::load(config.prompts.as_deref())?;
    let transport = deepwork::transport_from_config(&config.transport)?;
    let folder = open.sandbox.root().display().to_string();
    let id = state
        .history
        .start(&folder, &request.question, &request.files)
        .await?;
    let cancel = Cancel::new();
    lock(&state.runs).insert(id, cancel.clone());
    let history = state.history.clone();
    let ask = Ask {
        question: request.question,
        files: request.files,
        steps: config.steps,
    };
    let runs = Arc::clone(&state.runs);
    std::thread::Builder::new()
        .name(format!("deepwork-run-{id}"))
        .spawn(move || {
            let update = run_blocking(
                id, &open, &prompts, transport, &ask, &cancel, &history, &on_update,
            );
            lock(&runs).remove(&id);
            let _ = on_update.send(update);
        })
        .map_err(internal)?;
    Ok(id)
}

/// Runs the loop on this thread and returns the final update.
#[allow(clippy::too_many_arguments)]
fn run_blocking(
    id: i64,
    open: &OpenFolder,
    prompts: &Prompts,
    mut transport: Box<dyn deepwork::Transport + Send>,
    ask: &Ask,
    cancel: &Cancel,
    history: &History,
    on_update: &Channel<RunUpdate>,
) -> RunUpdate {
    let sandbox = &open.sandbox;
    // The folder's live index: the run walks nothing, it checks for changes before each step.
    let lp = Loop {
        sandbox,
        prompts,
        limits: Limits::default(),
        index: Some(&open.index),
    };
    let result = lp.run(ask, transport.as_mut(), cancel, &mut |e| {
        let _ = on_update.send(RunUpdate::Event { event: e.clone() });
    });
    match result {
        Ok(outcome) => {
            let proposed: Vec<(ProposedFile, Option<String>)> = outcome
                .files
                .iter()
                .map(|f| (f.clone(), disk_fingerprint(sandbox, &f.path)))
                .collect();
            let saved = tauri::async_runtime::block_on(history.finish(
                id,
                outcome.stop_reason,
                &outcome.steps,
                &outcome.answer,
                &proposed,
            ));
            match saved
                .map_err(AppError::from)
                .and_then(|()| load_view(history, id))
            {
                Ok(run) => RunUpdate::Done { run },
                Err(error) => RunUpdate::Failed { error },
            }
        }
        Err(e) => {
            let steps = e.steps().to_vec();
            let error = AppError::from(e);
            let _ = tauri::async_runtime::block_on(history.fail(id, &steps, &error.message));
            RunUpdate::Failed { error }
        }
    }
}

fn disk_fingerprint(sandbox: &Sandbox, path: &str) -> Option<String> {
    let p = sandbox.resolve(path).ok()?;
    std::fs::read(p).ok().map(|b| fingerprint(&b))
}

fn load_view(history: &History, id: i64) -> Result<RunView, AppError> {
    let run = tauri::async_runtime::block_on(history.get(id))?
        .ok_or_else(|| AppError::new(ErrorCode::RunNotFound, format!("no run {id}")))?;
    Ok(view(run))
}

/// A stored run with its proposed files compared against the disk as it is now.
pub fn view(run: StoredRun) -> RunView {
    let sandbox = Sandbox::new(&run.summary.folder).ok();
    let proposed = run
        .proposed
        .iter()
        .map(|(f, hash)| {
            let written = run.writes.iter().rev().find(|w| w.path == f.path).cloned();
            let resolved = sandbox.as_ref().map(|sb| sb.resolve(&f.path));
            let (refused, current) = match resolved {
                None => (Some("the folder is gone".to_owned()), None),
                Some(Err(e)) => (Some(e.to_string()), None),
                Some(Ok(p)) => (None, std::fs::read(p).ok()),
            };
            let now_hash = current.as_deref().map(fingerprint);
            let old = current
                .as_deref()
                .map(String::from_utf8_lossy)
                .unwrap_or_default();
            // After our own write the disk holds the proposal: not a foreign change.
            let ours = written.is_some()
                && now_hash.as_deref() == Some(fingerprint(f.content.as_bytes()).as_str());
            ProposedView {
                path: f.path.clone(),
                truncated: f.truncated,
                exists: current.is_some(),
                changed_on_disk: refused.is_none() && !ours && now_hash != *hash,
                refused,
                hunks: diff::hunks(&old, &f.content),
                written,
            }
        })
        .collect();
    let prose = run
        .answer
        .as_deref()
        .map(|a| deepwork::replace_files(a, |path| format!("→ `{path}`")));
    RunView {
        prose,
        summary: run.summary,
        files: run.files,
        steps: run.steps,
        answer: run.answer,
        proposed,
        writes: run.writes,
    }
}

/// Stops a running run: the bridge's process group is killed and the run ends as failed.
#[tauri::command]
pub fn stop_run(state: State<'_, AppState>, id: i64) -> Result<(), AppError> {
    match lock(&state.runs).get(&id) {
        Some(c) => {
            c.cancel();
            Ok(())
        }
        None => Err(AppError::new(
            ErrorCode::RunNotFound,
            format!("run {id} is not running"),
        )),
    }
}

/// Writes one proposed file of a run (old version to backup/). Unless `force`, a file that
/// changed on disk since the answer arrived is not written: `changed_on_disk` comes back.
#[tauri::command]
pub async fn write_proposed(
    state: State<'_, AppState>,
    id: i64,
    path: String,
    force: bool,
) -> Result<WriteOutcome, AppError> {
    let history = state.history.clone();
    let run = history
        .get(id)
        .await?
        .ok_or_else(|| AppError::new(ErrorCode::RunNotFound, format!("no run {id}")))?;
    let (file, hash) = run
        .proposed
        .iter()
        .find(|(f, _)| f.path == path)
        .cloned()
        .ok_or_else(|| {
            AppError::new(
                ErrorCode::NotProposed,
                format!("run {id} did not propose {path}"),
            )
        })?;
    let folder = run.summary.folder.clone();
    let already_ours = run.writes.iter().any(|w| w.path == path);
    let written = tauri::async_runtime::spawn_blocking(move || {
        write_one(Path::new(&folder), &file, hash, force, already_ours)
    })
    .await
    .map_err(internal)??;
    match written {
        None => Ok(WriteOutcome::ChangedOnDisk { path }),
        Some(w) => {
            let record = history
                .record_write(id, &w.path, w.backup.as_deref())
                .await?;
            Ok(WriteOutcome::Written { record })
        }
    }
}

/// Writes unless the file changed on disk since `hash` was taken; `None` when it did.
fn write_one(
    folder: &Path,
    file: &ProposedFile,
    hash: Option<String>,
    force: bool,
    already_ours: bool,
) -> Result<Option<deepwork::Written>, AppError> {
    let sandbox = Sandbox::new(folder).map_err(|e| {
        AppError::new(
            ErrorCode::FolderUnavailable,
            format!("cannot open {}: {e}", folder.display()),
        )
    })?;
    if !force {
        let now = disk_fingerprint(&sandbox, &file.path);
        let ours =
            already_ours && now.as_deref() == Some(fingerprint(file.content.as_bytes()).as_str());
        if now != hash && !ours {
            return Ok(None);
        }
    }
    let stamp = deepwork::backup_stamp(chrono::Local::now());
    Ok(Some(deepwork::write(&sandbox, file, &stamp)?))
}

/// The latest runs.
#[tauri::command]
pub async fn list_runs(state: State<'_, AppState>) -> Result<Vec<RunSummary>, AppError> {
    Ok(state.history.list(200).await?)
}

/// One run, its proposed files compared with the disk now.
#[tauri::command]
pub async fn get_run(state: State<'_, AppState>, id: i64) -> Result<RunView, AppError> {
    let run = state
        .history
        .get(id)
        .await?
        .ok_or_else(|| AppError::new(ErrorCode::RunNotFound, format!("no run {id}")))?;
    tauri::async_runtime::spawn_blocking(move || view(run))
        .await
        .map_err(internal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_changed_since_the_answer_is_not_overwritten_unless_forced() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.txt"), "old").unwrap();
        let file = ProposedFile {
            path: "a.txt".into(),
            content: "new".into(),
            truncated: false,
        };
        let hash = Some(fingerprint(b"old"));
        std::fs::write(d.path().join("a.txt"), "someone else").unwrap();
        assert!(
            write_one(d.path(), &file, hash.clone(), false, false)
                .unwrap()
                .is_none()
        );
        assert_eq!(
            std::fs::read_to_string(d.path().join("a.txt")).unwrap(),
            "someone else"
        );
        let w = write_one(d.path(), &file, hash, true, false)
            .unwrap()
            .unwrap();
        assert!(w.backup.is_some());
        assert_eq!(
            std::fs::read_to_string(d.path().join("a.txt")).unwrap(),
            "new"
        );
    }

    #[test]
    fn writing_again_after_our_own_write_is_not_a_foreign_change() {
        let d = tempfile::tempdir().unwrap();
        let file = ProposedFile {
            path: "n.txt".into(),
            content: "new".into(),
            truncated: false,
        };
        assert!(
            write_one(d.path(), &file, None, false, false)
                .unwrap()
                .is_some()
        );
        assert!(
            write_one(d.path(), &file, None, false, true)
                .unwrap()
                .is_some()
        );
    }
}
