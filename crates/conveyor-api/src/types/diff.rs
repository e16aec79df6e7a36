//! `GET /api/lines/{id}/diff`: what a line's branch changes, file by file.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

wire! {
    /// `GET /api/lines/{id}/diff`: what the line's branch changes, against the main commit it
    /// forked from (so the diff stays the same after the line is merged).
    pub struct LineDiff {
        /// The fork point on main; none when the branch is gone (an accepted line).
        pub base: Option<String>,
        /// The branch's tip.
        pub head: Option<String>,
        pub files: Vec<FileDiff>,
    }
}

wire! {
    /// One file of a [`LineDiff`].
    pub struct FileDiff {
        /// The path after the change (before it, for a deleted file).
        pub path: String,
        pub change: FileChange,
        /// The unified hunks (`@@ … @@` headers and ` `, `+`, `-` lines); empty for binary files.
        pub patch: String,
        pub binary: bool,
    }
}

wire! {
    /// How a file of a [`LineDiff`] changed.
    pub enum FileChange {
        Added,
        /// Changed in place (a change of file type counts here too).
        Modified,
        /// Gone; the diff's `path` is the old one.
        Deleted,
        Renamed,
    }
}

impl FileChange {
    /// The snake_case name sent on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            FileChange::Added => "added",
            FileChange::Modified => "modified",
            FileChange::Deleted => "deleted",
            FileChange::Renamed => "renamed",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn file_changes_are_the_strings_the_api_always_sent() {
        for (change, s) in [
            (FileChange::Added, "added"),
            (FileChange::Modified, "modified"),
            (FileChange::Deleted, "deleted"),
            (FileChange::Renamed, "renamed"),
        ] {
            assert_eq!(serde_json::to_value(change).unwrap(), json!(s));
            assert_eq!(
                serde_json::from_value::<FileChange>(json!(s)).unwrap(),
                change
            );
            assert_eq!(change.as_str(), s);
        }
    }
}
