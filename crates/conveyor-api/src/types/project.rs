//! A project: the git repository on the server that lines work in.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

wire! {
    /// A git repository on the server that lines work in.
    pub struct Project {
        pub id: String,
        pub name: String,
        pub repo_path: String,
        pub main_branch: String,
        pub created_at: String,
    }
}

wire! {
    /// `POST /api/projects`.
    pub struct NewProject {
        /// Unique among projects; at least one character past blanks.
        #[cfg_attr(feature = "openapi", schema(pattern = r"[^ \t\r\n]"))]
        pub name: String,
        /// The absolute path, on the daemon's machine, of a git repository that has
        /// `main_branch` (422 `not_a_repository` otherwise). Absolute as the daemon's system
        /// has it, which the document's pattern says: from `/` on Unix; from a drive
        /// (`C:\` or `C:/`) or a UNC share (`\\server\share`) on Windows.
        #[cfg_attr(
            all(feature = "openapi", not(windows)),
            schema(min_length = 1, pattern = r"^/")
        )]
        #[cfg_attr(
            all(feature = "openapi", windows),
            schema(min_length = 1, pattern = r"^([A-Za-z]:[\\/]|\\\\[^\\/]+[\\/][^\\/]+)")
        )]
        pub repo_path: String,
        /// The branch lines fork from and merge into; `main` when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        #[cfg_attr(feature = "openapi", schema(min_length = 1))]
        pub main_branch: Option<String>,
    }
}
