//! `account`: facts the daemon keeps by key — `park_until`, set by a usage limit (no line's
//! step starts before it), the Telegram updates' offset, when the vault was found closed.

use sqlx::SqliteConnection;

use crate::error::Result;

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

/// A stored fact by key (`telegram_offset`, `vault_closed_since`, …).
///
/// # Errors
/// Database errors.
pub async fn value(c: &mut SqliteConnection, key: &str) -> Result<Option<String>> {
    Ok(
        sqlx::query_scalar("SELECT value FROM account WHERE key = ?")
            .bind(key)
            .fetch_optional(&mut *c)
            .await?,
    )
}

/// Sets a fact; `None` removes it.
///
/// # Errors
/// Database errors.
pub async fn set_value(c: &mut SqliteConnection, key: &str, value: Option<&str>) -> Result<()> {
    match value {
        Some(v) => {
            sqlx::query(
                "INSERT INTO account (key, value) VALUES (?1, ?2)
             ON CONFLICT(key) DO UPDATE SET value = ?2",
            )
            .bind(key)
            .bind(v)
            .execute(&mut *c)
            .await?
        }
        None => {
            sqlx::query("DELETE FROM account WHERE key = ?")
                .bind(key)
                .execute(&mut *c)
                .await?
        }
    };
    Ok(())
}
