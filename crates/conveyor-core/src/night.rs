//! The configured night: the hours in which nothing is sent to Anton and at whose end the
//! morning list freezes. Pure: every function takes the time it is asked about.

use chrono::{DateTime, Duration, LocalResult, NaiveDate, NaiveTime, TimeZone, Timelike, Utc};

/// The time zone nights are read in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Zone {
    /// The server's (`TZ`, `/etc/localtime`).
    Local,
    Named(chrono_tz::Tz),
}

/// `night = "22:00-08:00"` (`HH:MM[:SS]`, either end; it may cross midnight) in a zone.
#[derive(Debug, Clone, PartialEq)]
pub struct Night {
    pub start: NaiveTime,
    pub end: NaiveTime,
    pub zone: Zone,
}

/// What is wrong with `night` or `timezone`.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum NightError {
    #[error("night: {0:?} is not `HH:MM[:SS]-HH:MM[:SS]` (e.g. \"22:00-08:00\")")]
    Format(String),
    #[error("night: {0:?} starts where it ends, so it is never night or always")]
    Empty(String),
    #[error("timezone: {0:?} is not an IANA time zone name (e.g. \"Europe/Moscow\", \"UTC\")")]
    Zone(String),
}

fn time_of(s: &str) -> Option<NaiveTime> {
    let s = s.trim();
    NaiveTime::parse_from_str(s, "%H:%M:%S")
        .or_else(|_| NaiveTime::parse_from_str(s, "%H:%M"))
        .ok()
}

impl Night {
    /// Parses `night` and the optional IANA `timezone` (the server's when absent).
    ///
    /// # Errors
    /// [`NightError`] naming the field.
    pub fn parse(spec: &str, timezone: Option<&str>) -> Result<Night, NightError> {
        let (a, b) = spec
            .split_once('-')
            .ok_or_else(|| NightError::Format(spec.into()))?;
        let (start, end) = match (time_of(a), time_of(b)) {
            (Some(s), Some(e)) => (s, e),
            _ => return Err(NightError::Format(spec.into())),
        };
        if start == end {
            return Err(NightError::Empty(spec.into()));
        }
        let zone = match timezone {
            None => Zone::Local,
            Some(name) => Zone::Named(
                name.parse::<chrono_tz::Tz>()
                    .map_err(|_| NightError::Zone(name.into()))?,
            ),
        };
        Ok(Night { start, end, zone })
    }

    /// Whether `at_ms` falls in the night.
    pub fn contains(&self, at_ms: i64) -> bool {
        match self.zone {
            Zone::Local => self.contains_in(&chrono::Local, at_ms),
            Zone::Named(tz) => self.contains_in(&tz, at_ms),
        }
    }

    /// By day, the end of the night just gone (when the list froze); `None` at night.
    pub fn frozen_at(&self, now_ms: i64) -> Option<i64> {
        match self.zone {
            Zone::Local => self.frozen_at_in(&chrono::Local, now_ms),
            Zone::Named(tz) => self.frozen_at_in(&tz, now_ms),
        }
    }

    /// When the last night began: the one going on, or the one that ended before `now_ms`.
    pub fn started_at(&self, now_ms: i64) -> i64 {
        match self.zone {
            Zone::Local => self.started_at_in(&chrono::Local, now_ms),
            Zone::Named(tz) => self.started_at_in(&tz, now_ms),
        }
    }

    fn started_at_in<Z: TimeZone>(&self, zone: &Z, now_ms: i64) -> i64 {
        let (date, t) = Self::time_of_day(zone, now_ms);
        let day = if t >= self.start {
            date
        } else {
            date - Duration::days(1)
        };
        local_ms(zone, day.and_time(self.start)).unwrap_or(now_ms)
    }

    fn time_of_day<Z: TimeZone>(zone: &Z, at_ms: i64) -> (NaiveDate, NaiveTime) {
        let utc = DateTime::<Utc>::from_timestamp_millis(at_ms).unwrap_or_default();
        let local = utc.with_timezone(zone).naive_local();
        // Whole seconds: `HH:MM:SS` is the finest a night is given in.
        (
            local.date(),
            local.time().with_nanosecond(0).unwrap_or_default(),
        )
    }

    fn contains_in<Z: TimeZone>(&self, zone: &Z, at_ms: i64) -> bool {
        let (_, t) = Self::time_of_day(zone, at_ms);
        if self.start < self.end {
            self.start <= t && t < self.end
        } else {
            t >= self.start || t < self.end
        }
    }

    fn frozen_at_in<Z: TimeZone>(&self, zone: &Z, now_ms: i64) -> Option<i64> {
        if self.contains_in(zone, now_ms) {
            return None;
        }
        let (date, t) = Self::time_of_day(zone, now_ms);
        // By day the last end is today's when it has passed, else yesterday's.
        let day = if t >= self.end {
            date
        } else {
            date - Duration::days(1)
        };
        local_ms(zone, day.and_time(self.end))
    }
}

/// A local time in `zone` as milliseconds; one in the gap of a clock change is taken an hour
/// later (the first moment after it).
fn local_ms<Z: TimeZone>(zone: &Z, local: chrono::NaiveDateTime) -> Option<i64> {
    let at = match zone.from_local_datetime(&local) {
        LocalResult::Single(t) | LocalResult::Ambiguous(t, _) => t,
        LocalResult::None => zone
            .from_local_datetime(&(local + Duration::hours(1)))
            .earliest()?,
    };
    Some(at.timestamp_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> i64 {
        DateTime::parse_from_rfc3339(s).unwrap().timestamp_millis()
    }

    #[test]
    fn a_night_across_midnight_in_a_named_zone() {
        let n = Night::parse("22:00-08:00", Some("Europe/Moscow")).unwrap();
        // Moscow is UTC+3: 22:00 there is 19:00 UTC.
        assert!(!n.contains(at("2026-12-01T18:59:59Z")));
        assert!(n.contains(at("2026-12-01T19:00:00Z")));
        assert!(n.contains(at("2026-12-02T04:59:59Z")));
        assert!(!n.contains(at("2026-12-02T05:00:00Z")));
        // At night nothing is frozen; by day the list froze at 08:00 Moscow time.
        assert_eq!(n.frozen_at(at("2026-12-02T01:00:00Z")), None);
        assert_eq!(
            n.frozen_at(at("2026-12-02T12:00:00Z")),
            Some(at("2026-12-02T05:00:00Z"))
        );
        assert_eq!(
            n.frozen_at(at("2026-12-02T18:59:00Z")),
            Some(at("2026-12-02T05:00:00Z"))
        );
    }

    #[test]
    fn the_last_night_began_at_its_start_before_now() {
        let n = Night::parse("22:00-08:00", Some("UTC")).unwrap();
        for now in [
            "2026-12-02T12:00:00Z",
            "2026-12-02T03:00:00Z",
            "2026-12-01T22:00:00Z",
        ] {
            assert_eq!(n.started_at(at(now)), at("2026-12-01T22:00:00Z"), "{now}");
        }
        assert_eq!(
            n.started_at(at("2026-12-02T23:00:00Z")),
            at("2026-12-02T22:00:00Z")
        );
    }

    #[test]
    fn a_night_within_one_day_with_seconds() {
        let n = Night::parse("01:00:30-05:00:15", Some("UTC")).unwrap();
        assert!(!n.contains(at("2026-12-02T01:00:29Z")));
        assert!(n.contains(at("2026-12-02T01:00:30Z")));
        assert!(!n.contains(at("2026-12-02T05:00:15Z")));
        assert_eq!(
            n.frozen_at(at("2026-12-02T05:00:15Z")),
            Some(at("2026-12-02T05:00:15Z"))
        );
        // Before tonight's night: yesterday's end.
        assert_eq!(
            n.frozen_at(at("2026-12-02T00:30:00Z")),
            Some(at("2026-12-01T05:00:15Z"))
        );
    }

    #[test]
    fn bad_nights_and_zones_are_named() {
        assert_eq!(
            Night::parse("22-08", None),
            Err(NightError::Format("22-08".into()))
        );
        assert_eq!(
            Night::parse("08:00-08:00", None),
            Err(NightError::Empty("08:00-08:00".into()))
        );
        let e = Night::parse("22:00-08:00", Some("Mars/Olympus")).unwrap_err();
        assert!(e.to_string().starts_with("timezone:"), "{e}");
    }
}
