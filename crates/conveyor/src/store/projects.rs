//! `projects`: the repositories lines work in.

use conveyor_api as api;
use sqlx::{FromRow, SqliteConnection};

use super::sql::rfc3339;
use crate::error::Result;

#[derive(Debug, Clone, FromRow)]
pub struct ProjectRow {
    pub id: String,
    pub name: String,
    pub repo_path: String,
    pub main_branch: String,
    pub created_at: i64,
}

impl ProjectRow {
    pub fn to_api(&self) -> api::Project {
        api::Project {
            id: self.id.clone(),
            name: self.name.clone(),
            repo_path: self.repo_path.clone(),
            main_branch: self.main_branch.clone(),
            created_at: rfc3339(self.created_at),
        }
    }
}

/// Every project, by name.
///
/// # Errors
/// Database errors.
pub async fn all(c: &mut SqliteConnection) -> Result<Vec<ProjectRow>> {
    Ok(sqlx::query_as("SELECT * FROM projects ORDER BY name")
        .fetch_all(&mut *c)
        .await?)
}

/// One project.
///
/// # Errors
/// Database errors.
pub async fn get(c: &mut SqliteConnection, id: &str) -> Result<Option<ProjectRow>> {
    Ok(sqlx::query_as("SELECT * FROM projects WHERE id = ?")
        .bind(id)
        .fetch_optional(&mut *c)
        .await?)
}

/// A new project.
///
/// # Errors
/// Database errors; a taken name is a unique violation ([`is_unique_violation`]).
pub async fn insert(c: &mut SqliteConnection, p: &ProjectRow) -> Result<()> {
    sqlx::query(
        "INSERT INTO projects (id, name, repo_path, main_branch, created_at) VALUES (?,?,?,?,?)",
    )
    .bind(&p.id)
    .bind(&p.name)
    .bind(&p.repo_path)
    .bind(&p.main_branch)
    .bind(p.created_at)
    .execute(&mut *c)
    .await?;
    Ok(())
}

/// Whether `e` is a write refused by a UNIQUE constraint (a project name taken).
pub fn is_unique_violation(e: &crate::error::Error) -> bool {
    matches!(e, crate::error::Error::Db(sqlx::Error::Database(d)) if d.is_unique_violation())
}
