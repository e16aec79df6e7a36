//! Time on the budget's clock: milliseconds since the epoch, UTC, passed in by the caller; and
//! the months of the monthly credit.

use chrono::{Datelike, TimeZone, Utc};

pub const MINUTE_MS: i64 = 60_000;
pub const HOUR_MS: i64 = 60 * MINUTE_MS;
pub const DAY_MS: i64 = 24 * HOUR_MS;
pub const WEEK_MS: i64 = 7 * DAY_MS;

/// The start of the current credit month and of the next one (unix ms), the month turning on
/// `day` at 00:00 UTC.
pub fn month_bounds(now_ms: i64, day: u32) -> (i64, i64) {
    let now = Utc
        .timestamp_millis_opt(now_ms)
        .single()
        .unwrap_or_else(Utc::now);
    let at = |y: i32, m: u32| {
        Utc.with_ymd_and_hms(y, m, day, 0, 0, 0)
            .single()
            .map_or(0, |t| t.timestamp_millis())
    };
    let (y, m) = (now.year(), now.month());
    let prev = |y: i32, m: u32| if m == 1 { (y - 1, 12) } else { (y, m - 1) };
    let next = |y: i32, m: u32| if m == 12 { (y + 1, 1) } else { (y, m + 1) };
    let this = at(y, m);
    if this <= now_ms {
        let (ny, nm) = next(y, m);
        (this, at(ny, nm))
    } else {
        let (py, pm) = prev(y, m);
        (at(py, pm), this)
    }
}
