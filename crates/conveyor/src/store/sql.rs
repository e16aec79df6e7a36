//! The small pieces every table's SQL shares: times as the tables keep them (milliseconds
//! since the epoch) and as the API shows them (RFC 3339), and the placeholders of an `IN`
//! list. Below every table's file, so that none of them imports the module that gathers them.

/// Milliseconds since the epoch, UTC.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// RFC 3339 text of a time in milliseconds.
pub fn rfc3339(ms: i64) -> String {
    chrono::DateTime::<chrono::Utc>::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Placeholders for an `IN (…)` list of `n` values.
pub(super) fn marks(n: usize) -> String {
    vec!["?"; n].join(",")
}
