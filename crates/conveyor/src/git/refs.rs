//! A repository's refs before and after an agent run. The sandbox leaves a run the folders git
//! needs for the line's commits, and those hold every line's branch (`refs/heads/line/`): what
//! the binds cannot stop, this puts back. Every ref other than the line's own branch ends the
//! run where it began; what moved is reported, to be recorded on the line.

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
    /// After it (`None`: the run deleted it).
    pub after: Option<String>,
}

impl std::fmt::Display for Moved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let short = |o: &Option<String>| {
            o.as_deref()
                .map_or_else(|| "(none)".to_string(), |s| s.chars().take(12).collect())
        };
        write!(
            f,
            "{}: {} -> {}",
            self.name,
            short(&self.before),
            short(&self.after)
        )
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

/// Puts every ref but `keep` back where `before` had it: moved ones moved back, created ones
/// deleted, deleted ones made again. Returns what it put back; a ref it could not put back is
/// an error naming it (the others are still put back first).
///
/// # Errors
/// Git errors.
pub async fn restore(repo: &Path, before: &Refs, keep: &str) -> Result<Vec<Moved>> {
    let after = snapshot(repo).await?;
    let mut moved = Vec::new();
    let names: std::collections::BTreeSet<&String> =
        before.0.keys().chain(after.0.keys()).collect();
    for name in names {
        if name == keep {
            continue;
        }
        let (b, a) = (before.0.get(name), after.0.get(name));
        if b == a {
            continue;
        }
        moved.push(Moved {
            name: name.clone(),
            before: b.cloned(),
            after: a.cloned(),
        });
    }
    let to_the_end = CancellationToken::new();
    let mut failed = None;
    for m in &moved {
        let args: Vec<&str> = match (&m.before, &m.after) {
            (Some(b), Some(a)) => vec!["update-ref", "--no-deref", "-m", PUT_BACK, &m.name, b, a],
            (Some(b), None) => vec!["update-ref", "--no-deref", "-m", PUT_BACK, &m.name, b],
            (None, Some(a)) => vec!["update-ref", "--no-deref", "-d", &m.name, a],
            (None, None) => continue,
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
