//! What the memory rule and the judge's prompt need of the project: its memory files and
//! vault, and what a step's runs read.

use std::path::{Path, PathBuf};

use crate::judge::reads::Reads;
use crate::state::Shared;
use crate::store::LineRow;
use crate::store::runs;
use crate::{error::Result, git};

/// The most the prompt carries of the memory, in bytes.
const MEMORY_MAX: usize = 30_000;

/// What the memory rule and the judge's prompt need of the project.
#[derive(Default)]
pub(super) struct Memory {
    /// Absolute paths: memory files in the worktree, and the vault folder.
    pub paths: Vec<PathBuf>,
    /// `(path as shown, text)`, cut to [`MEMORY_MAX`] in all.
    pub texts: Vec<(String, String)>,
}

pub(super) async fn memory(sh: &Shared, line: &LineRow, worktree: &Path) -> Result<Memory> {
    let globs = match super::super::checklist::checklist(sh, line).await? {
        Ok((c, ..)) => c.memory,
        // A broken `.conveyor.toml` is the gate's to report.
        Err(_) => Vec::new(),
    };
    let mut paths = Vec::new();
    let mut texts = Vec::new();
    // A line without its worktree yet has read nothing of it either.
    if !globs.is_empty() && worktree.join(".git").exists() {
        let mut b = globset::GlobSetBuilder::new();
        for g in &globs {
            if let Ok(g) = globset::Glob::new(g) {
                b.add(g);
            }
        }
        let set = b.build().unwrap_or_else(|_| globset::GlobSet::empty());
        let files = git::git(worktree, &["ls-files", "-z"], &sh.shutdown).await?;
        let mut budget = MEMORY_MAX;
        for rel in files
            .split('\0')
            .filter(|p| !p.is_empty() && set.is_match(p))
        {
            let abs = worktree.join(rel);
            if budget > 0
                && let Ok(text) = std::fs::read_to_string(&abs)
            {
                let cut = crate::exec::tail(&text, budget).to_string();
                budget = budget.saturating_sub(cut.len());
                texts.push((rel.to_string(), cut));
            }
            paths.push(abs);
        }
    }
    if let Some(v) = &sh.cfg.vault {
        paths.push(v.path.clone());
        texts.push((
            v.path.display().to_string(),
            "(Anton's vault: read what bears on the entries)".into(),
        ));
    }
    Ok(Memory { paths, texts })
}

/// What the runs of `step_id` read.
pub(super) async fn reads_of(sh: &Shared, step_id: &str) -> Result<Reads> {
    let logs = runs::logs_of_step(&mut *sh.store.conn().await?, step_id).await?;
    let mut r = Reads::default();
    for log in logs {
        if let Ok(text) = std::fs::read_to_string(&log) {
            r.add_log(&text);
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::testing::{repo_with_main, run as git};
    use crate::store;

    /// The memory is the files the project's `memory` globs match on fresh main, plus the
    /// vault; a read of either counts, a read of anything else does not.
    #[tokio::test]
    async fn the_memory_is_the_globbed_files_and_the_vault() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        std::fs::create_dir_all(repo.join("docs")).unwrap();
        repo_with_main(&repo).await;
        std::fs::write(repo.join("docs/adr.md"), "decided: sqlite\n").unwrap();
        std::fs::write(repo.join(".conveyor.toml"), "memory = [\"docs/*.md\"]\n").unwrap();
        git(&repo, &["add", "-A"]).await;
        git(&repo, &["commit", "-qm", "memory"]).await;
        let vault = tmp.path().join("vault");
        std::fs::create_dir_all(&vault).unwrap();
        let d = crate::daemon::testing::start(
            &tmp.path().join("data"),
            &format!("vault = {:?}", vault.display().to_string()),
        )
        .await;
        let sh = d.shared().clone();
        let id = crate::store::testing::line(&sh.store, "p", "l", 0, "running").await;
        crate::store::testing::exec(
            &sh.store,
            &format!(
                "UPDATE projects SET repo_path = '{}' WHERE id = 'p'",
                repo.display()
            ),
        )
        .await;
        store::lines::set_worktree(&mut sh.store.conn().await.unwrap(), &id, &repo, None)
            .await
            .unwrap();
        let line = store::lines::get(&mut sh.store.conn().await.unwrap(), &id)
            .await
            .unwrap()
            .unwrap();
        let mem = memory(&sh, &line, &repo).await.unwrap();
        assert_eq!(mem.paths, [repo.join("docs/adr.md"), vault.clone()]);
        assert_eq!(
            mem.texts[0],
            ("docs/adr.md".into(), "decided: sqlite\n".into())
        );
        let read = |p: &Path| {
            let mut r = Reads::default();
            r.paths.insert(p.display().to_string());
            r.touch(&mem.paths, &repo)
        };
        assert!(read(&repo.join("docs/adr.md")));
        assert!(read(&vault.join("2026/notes.md")));
        assert!(!read(&repo.join("a.txt")));
        drop(sh);
        d.stop().await;
    }
}
