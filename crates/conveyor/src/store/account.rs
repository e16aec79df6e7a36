//! `account`: facts about the account all lines share, by key — today `park_until`, set by a
//! usage limit: no line's step starts before it.

use sqlx::SqliteConnection;

use crate::Result;

/// Until when (unix ms) the account's usage limit holds every step back, if ever set.
///
/// # Errors
/// Database errors.
pub async fn park_until(c: &mut SqliteConnection) -> Result<Option<i64>> {
    let v: Option<String> =
        sqlx::query_scalar("SELECT value FROM account WHERE key = 'park_until'")
            .fetch_optional(&mut *c)
            .await?;
    Ok(v.and_then(|v| v.parse().ok()))
}

/// Parks the account until `until` (unix ms); a later park already set is kept.
///
/// # Errors
/// Database errors.
pub async fn set_park_until(c: &mut SqliteConnection, until: i64) -> Result<()> {
    sqlx::query(
        "INSERT INTO account (key, value) VALUES ('park_until', ?1)
         ON CONFLICT(key) DO UPDATE SET value = CAST(MAX(CAST(value AS INTEGER), CAST(?1 AS INTEGER)) AS TEXT)",
    )
    .bind(until.to_string())
    .execute(&mut *c)
    .await?;
    Ok(())
}
