//! A repository's refs before and after an agent run. The sandbox leaves a run the folders git
//! needs for the line's commits, and those hold every line's branch (`refs/heads/line/`): what
//! the binds cannot stop, this puts back. Every other ref (main, tags, remotes) is read-only in
//! the sandbox, and `packed-refs` with it: the run can neither move nor delete one. So only the
//! writable folder is looked at, and a deletion there is never undone: the run cannot delete
//! (that locks `packed-refs`), while the daemon does when Anton accepts a line. Looking wider
//! would undo what others did meanwhile: Anton's commit on main, a merge.

use std::collections::BTreeMap;
use std::path::Path;

use tokio_util::sync::CancellationToken;

use super::cli::git;
use crate::error::Result;

/// The reflog's word for a ref put back.
const PUT_BACK: &str = "conveyor: put back after an agent run";

/// Every ref of the repository and the object it names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Refs(BTreeMap<String, String>);

/// A ref a run changed, put back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moved {
    pub name: String,
    /// Before the run (`None`: the run created it).
    pub before: Option<String>,
    /// After it.
    pub after: String,
}

impl std::fmt::Display for Moved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let short = |s: &str| s.chars().take(12).collect::<String>();
        let before = self
            .before
            .as_deref()
            .map_or_else(|| "(none)".into(), short);
        write!(f, "{}: {} -> {}", self.name, before, short(&self.after))
    }
}

/// Reads every ref (`git for-each-ref`: loose and packed, branches, tags, remotes, notes,
/// stash). A symbolic ref (`refs/remotes/origin/HEAD`) is left out: it moves with its target,
/// and putting it back by value would turn it into a plain ref.
///
/// # Errors
/// Git errors.
pub async fn snapshot(repo: &Path) -> Result<Refs> {
    // Runs to its end: a snapshot cut short would make a restore delete refs.
    let out = git(
        repo,
        &[
            "for-each-ref",
            "--format=%(objectname) %(refname) %(symref)",
        ],
        &CancellationToken::new(),
    )
    .await?;
    Ok(Refs(
        out.lines()
            .filter_map(|l| {
                let mut w = l.split(' ');
                let (oid, name, symref) = (w.next()?, w.next()?, w.next().unwrap_or(""));
                symref
                    .is_empty()
                    .then(|| (name.to_string(), oid.to_string()))
            })
            .collect(),
    ))
}

/// Puts every ref under `scope` but `keep` back where `before` had it: moved ones moved back,
/// created ones deleted. Returns what it put back; a ref it could not put back is an error
/// naming it (the others are still put back first).
///
/// # Errors
/// Git errors.
pub async fn restore(repo: &Path, before: &Refs, scope: &str, keep: &str) -> Result<Vec<Moved>> {
    let after = snapshot(repo).await?;
    let mut moved = Vec::new();
    let names: std::collections::BTreeSet<&String> =
        before.0.keys().chain(after.0.keys()).collect();
    for name in names {
        if name == keep || !name.starts_with(scope) {
            continue;
        }
        let (b, Some(a)) = (before.0.get(name), after.0.get(name)) else {
            continue;
        };
        if b == Some(a) {
            continue;
        }
        moved.push(Moved {
            name: name.clone(),
            before: b.cloned(),
            after: a.clone(),
        });
    }
    let to_the_end = CancellationToken::new();
    let mut failed = None;
    for m in &moved {
        let a = &m.after;
        let args: Vec<&str> = match &m.before {
            Some(b) => vec!["update-ref", "--no-deref", "-m", PUT_BACK, &m.name, b, a],
            None => vec!["update-ref", "--no-deref", "-d", &m.name, a],
        };
        if let Err(e) = git(repo, &args, &to_the_end).await {
            failed.get_or_insert(e);
        }
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(moved),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) -> String {
        let o = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    }

    /// Only the run's writable folder is put back, and never by undoing a deletion: what
    /// Anton or the daemon did meanwhile elsewhere (a commit on main, an accepted line's branch
    /// deleted) stays.
    #[tokio::test]
    async fn only_the_runs_folder_of_refs_is_put_back_and_no_deletion_undone() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        git(r, &["init", "-q", "-b", "main"]);
        git(r, &["commit", "-q", "--allow-empty", "-m", "one"]);
        for b in ["line/own", "line/other", "line/gone"] {
            git(r, &["branch", b]);
        }
        let first = git(r, &["rev-parse", "main"]);
        let before = snapshot(r).await.unwrap();
        git(r, &["commit", "-q", "--allow-empty", "-m", "two"]);
        let second = git(r, &["rev-parse", "main"]);
        for args in [
            &["branch", "-f", "line/own", "main"][..],
            &["branch", "-f", "line/other", "main"],
            &["branch", "line/new"],
            &["branch", "-D", "line/gone"],
            &["tag", "t1"],
        ] {
            git(r, args);
        }
        let moved = restore(r, &before, "refs/heads/line/", "refs/heads/line/own")
            .await
            .unwrap();
        let names: Vec<&str> = moved.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["refs/heads/line/new", "refs/heads/line/other"]);
        assert_eq!(git(r, &["rev-parse", "line/other"]), first);
        assert_eq!(git(r, &["rev-parse", "line/own"]), second);
        assert_eq!(git(r, &["rev-parse", "main"]), second);
        assert!(git(r, &["branch", "--list", "line/new", "line/gone"]).is_empty());
        assert_eq!(git(r, &["tag", "--list"]), "t1");
        assert_eq!(
            moved[1].to_string(),
            format!(
                "refs/heads/line/other: {} -> {}",
                &first[..12],
                &second[..12]
            )
        );
    }
}
