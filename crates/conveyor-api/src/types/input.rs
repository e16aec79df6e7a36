//! What a request's values must be, said once for the handlers and the OpenAPI document, so the
//! two agree both ways: what the document calls valid is accepted, what it calls invalid is
//! refused.

use serde::Deserializer;
use serde::de::{self, Visitor};

/// The JSON Schema `pattern` of a required text (a name, a title, a task, remarks): at least one
/// character that is not a space, tab, carriage return or line feed.
///
/// Deliberately ASCII: "whitespace" differs between regex dialects (ECMA-262, which JSON Schema
/// names, counts U+FEFF; Python's, which a fuzzer may use, counts U+001C–U+001F; Rust's
/// `char::is_whitespace` neither), and a rule that means one thing in the document and another
/// in the handler is exactly what a fuzzer reports. The wire types repeat it as a literal
/// (utoipa takes no constant there); the daemon's tests hold the document to it.
pub const TEXT_PATTERN: &str = r"[^ \t\r\n]";

/// Whether `s` matches [`TEXT_PATTERN`].
pub fn has_text(s: &str) -> bool {
    s.chars().any(|c| !matches!(c, ' ' | '\t' | '\r' | '\n'))
}

/// Deserializes an `i32` of a JSON body from any number with no fractional part (`3` and `3.0`
/// alike); a string is refused, as the document's `integer` refuses it.
///
/// JSON Schema's `integer` is a number whose fractional part is zero, so `3.0` is a valid
/// `integer`; serde's own `i32` refuses it.
pub fn integral_i32<'de, D: Deserializer<'de>>(d: D) -> Result<i32, D::Error> {
    let n = d.deserialize_any(Integral { text: false })?;
    i32::try_from(n).map_err(|_| out_of_i32(n))
}

fn out_of_i32<E: de::Error>(n: i64) -> E {
    E::custom(format!("{n} is out of range for a 32-bit integer"))
}

/// [`integral_i32`] for an optional field (`null` or absent is `None`).
pub fn integral_i32_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i32>, D::Error> {
    d.deserialize_option(OptionIntegral { text: false })?
        .map(|n| i32::try_from(n).map_err(|_| out_of_i32(n)))
        .transpose()
}

/// An optional `i64` query parameter (paging): the text of an integer, `3` or `3.0` alike.
pub fn integral_i64_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    d.deserialize_option(OptionIntegral { text: true })
}

/// Reads an integral number; from text too when `text` (a query string has nothing else).
struct Integral {
    text: bool,
}

impl<'de> Visitor<'de> for Integral {
    type Value = i64;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an integer")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<i64, E> {
        Ok(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<i64, E> {
        i64::try_from(v).map_err(|_| E::custom(format!("{v} is out of range for an integer")))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<i64, E> {
        // 2^63 is exactly representable; anything at or past it is out of range.
        if v.fract() == 0.0 && v >= -(2f64.powi(63)) && v < 2f64.powi(63) {
            Ok(v as i64)
        } else {
            Err(E::custom(format!("{v} is not an integer")))
        }
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<i64, E> {
        if !self.text {
            return Err(E::invalid_type(de::Unexpected::Str(v), &self));
        }
        if let Ok(n) = v.parse::<i64>() {
            return Ok(n);
        }
        match v.parse::<f64>() {
            Ok(f) if f.is_finite() => self.visit_f64(f),
            _ => Err(E::custom(format!("{v:?} is not an integer"))),
        }
    }
}

struct OptionIntegral {
    text: bool,
}

impl<'de> Visitor<'de> for OptionIntegral {
    type Value = Option<i64>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an integer or null")
    }

    fn visit_none<E: de::Error>(self) -> Result<Option<i64>, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<i64>, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Option<i64>, D::Error> {
        d.deserialize_any(Integral { text: self.text }).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    struct P {
        #[serde(deserialize_with = "integral_i32")]
        n: i32,
        #[serde(default, deserialize_with = "integral_i32_opt")]
        m: Option<i32>,
    }

    fn parse(json: &str) -> Result<P, String> {
        serde_json::from_str::<P>(json).map_err(|e| e.to_string())
    }

    #[test]
    fn integral_numbers_are_integers_whatever_their_spelling() {
        assert_eq!(parse(r#"{"n": 3}"#).unwrap().n, 3);
        assert_eq!(parse(r#"{"n": -249466261.0}"#).unwrap().n, -249466261);
        assert_eq!(parse(r#"{"n": 1, "m": 2.0}"#).unwrap().m, Some(2));
        assert_eq!(parse(r#"{"n": 1, "m": null}"#).unwrap().m, None);
        assert_eq!(parse(r#"{"n": 1}"#).unwrap().m, None);
    }

    #[test]
    fn fractions_and_out_of_range_values_are_refused_with_the_value() {
        assert!(
            parse(r#"{"n": 1.5}"#)
                .unwrap_err()
                .contains("1.5 is not an integer")
        );
        assert!(
            parse(r#"{"n": 2147483648}"#)
                .unwrap_err()
                .contains("out of range")
        );
        assert!(
            parse(r#"{"n": 1e300}"#)
                .unwrap_err()
                .contains("not an integer")
        );
        assert!(
            parse(r#"{"n": "7"}"#)
                .unwrap_err()
                .contains("string \"7\", expected an integer")
        );
        assert!(parse(r#"{"n": true}"#).is_err());
    }

    #[test]
    fn a_query_strings_integers_are_read_from_text() {
        #[derive(Debug, Deserialize)]
        struct Q {
            #[serde(default, deserialize_with = "integral_i64_opt")]
            n: Option<i64>,
        }
        let q = |json: &str| {
            serde_json::from_str::<Q>(json)
                .map(|q| q.n)
                .map_err(|e| e.to_string())
        };
        assert_eq!(q(r#"{"n": "7"}"#), Ok(Some(7)));
        assert_eq!(q(r#"{"n": "7.0"}"#), Ok(Some(7)));
        assert_eq!(q(r#"{}"#), Ok(None));
        assert!(
            q(r#"{"n": "x"}"#)
                .unwrap_err()
                .contains("\"x\" is not an integer")
        );
        assert!(
            q(r#"{"n": "inf"}"#)
                .unwrap_err()
                .contains("is not an integer")
        );
    }

    #[test]
    fn text_means_one_character_past_ascii_blanks() {
        assert!(has_text("a"));
        assert!(
            has_text(" \u{3000} "),
            "non-ASCII blanks count as text, as the pattern says"
        );
        assert!(!has_text(""));
        assert!(!has_text(" \t\r\n"));
    }
}
