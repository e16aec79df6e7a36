//! LIST: the project's files whose relative path matches a glob.
//!
//! `*` stays within a folder, `**` goes across folders (globset with a literal separator).
//! A glob is matched against the index's paths, relative to the root, so no glob can reach
//! outside it; the index is sorted, so the matches are too.

use std::path::Path;

use globset::{GlobBuilder, GlobSetBuilder};

use crate::index::Index;

/// What LIST found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listed {
    /// The first `limit` matching paths, sorted.
    pub paths: Vec<String>,
    /// How many paths matched in all.
    pub total: usize,
}

/// A glob that does not compile.
#[derive(Debug, thiserror::Error)]
#[error("bad glob {glob:?}: {source}")]
pub struct GlobError {
    /// The glob as given.
    pub glob: String,
    /// What globset said.
    #[source]
    pub source: globset::Error,
}

/// Lists the paths matching `glob`, sorted, keeping at most `limit`.
///
/// A glob ending in `/` lists everything below that folder; a leading `./` is ignored;
/// `\` counts as `/`.
///
/// # Errors
/// When the glob does not compile.
pub fn list(index: &Index, glob: &str, limit: usize) -> Result<Listed, GlobError> {
    let mut pattern = glob.trim().replace('\\', "/");
    while let Some(rest) = pattern.strip_prefix("./") {
        pattern = rest.to_owned();
    }
    if pattern.ends_with('/') {
        pattern.push_str("**");
    }
    let bad = |source| GlobError {
        glob: glob.to_owned(),
        source,
    };
    let one = GlobBuilder::new(&pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(bad)?;
    // A set of one glob, not the glob's own matcher: the set sorts common shapes (`**/*.rs`,
    // `src/**`, a literal name) into a hash or prefix test instead of a regex, several times
    // faster over 100k paths.
    let matcher = GlobSetBuilder::new().add(one).build().map_err(bad)?;
    let mut paths = Vec::new();
    let mut total = 0;
    for p in index.paths() {
        if matcher.is_match(Path::new(p)) {
            total += 1;
            if paths.len() < limit {
                paths.push(p.to_owned());
            }
        }
    }
    Ok(Listed { paths, total })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The index of a project holding `paths`, each file a one-byte `x`.
    fn project(paths: &[&str]) -> (tempfile::TempDir, Index) {
        let files: Vec<(&str, &[u8])> = paths.iter().map(|p| (*p, b"x".as_slice())).collect();
        let (d, sb) = crate::sandbox::project(&files);
        (d, Index::walk(&sb))
    }

    #[test]
    fn star_stays_in_a_folder_and_double_star_crosses() {
        let (_d, sb) = project(&["ask.mjs", "ui.html", "lib/a.mjs", "lib/deep/b.mjs", "x.js"]);
        assert_eq!(list(&sb, "*.mjs", 300).unwrap().paths, vec!["ask.mjs"]);
        assert_eq!(list(&sb, "*.js", 300).unwrap().paths, vec!["x.js"]);
        assert_eq!(
            list(&sb, "**/*.mjs", 300).unwrap().paths,
            vec!["ask.mjs", "lib/a.mjs", "lib/deep/b.mjs"]
        );
        assert_eq!(list(&sb, "lib/*", 300).unwrap().paths, vec!["lib/a.mjs"]);
        assert_eq!(
            list(&sb, "./lib/", 300).unwrap().paths,
            vec!["lib/a.mjs", "lib/deep/b.mjs"]
        );
        assert_eq!(list(&sb, "**/*", 300).unwrap().total, 5);
    }

    #[test]
    fn limit_keeps_the_first_sorted_paths_and_the_total() {
        let names: Vec<String> = (0..20).map(|i| format!("f{i:02}.txt")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let (_d, sb) = project(&refs);
        let l = list(&sb, "*.txt", 5).unwrap();
        assert_eq!(l.total, 20);
        assert_eq!(
            l.paths,
            vec!["f00.txt", "f01.txt", "f02.txt", "f03.txt", "f04.txt"]
        );
    }

    #[test]
    fn a_bad_glob_is_an_error_naming_it() {
        let (_d, sb) = project(&["a"]);
        let e = list(&sb, "a[", 300).unwrap_err();
        assert!(e.to_string().contains("\"a[\""), "{e}");
    }
}
