//! A project's Telegram scenarios: `.conveyor/telegram/*.toml`, each a target (the project's
//! test bot, or a mini-app's URL) and steps. This module reads them and judges what a step saw;
//! the daemon's runner does the sending, pressing and clicking through a transport.
//!
//! ```toml
//! target = "bot"          # the project's test_bot; or "miniapp" with a url
//!
//! [[step]]
//! send = "/start"
//! [[step]]
//! press = "Оплатить"      # an inline button of the last message, by its text
//! [[step]]
//! expect = "Оплачено"     # a regex on the next message or the edited one
//! timeout_secs = 10
//! ```
//!
//! A mini-app scenario (`target = "miniapp"`, `url = …`) has page steps: `open_miniapp` (a
//! path or URL; the scenario's `url` when no step opens another), `click` (a CSS selector),
//! `fill` with `text`, and `expect` on the page's text (or a `selector`'s).
//!
//! Errors name the file, the line and the field: a scenario is written by an agent at night
//! and read by a person in the morning, who should not have to hunt for the typo.

use std::time::Duration;

use regex::Regex;
use serde::Deserialize;
use toml::Spanned;

/// How long an `expect` or a `click` waits when its scenario does not say.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Telegram's own limit on a message's text.
pub const MAX_TEXT: usize = 4096;

/// What a scenario drives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A bot, through the test account: the project's `test_bot` unless `bot` names one.
    Bot { bot: Option<String> },
    /// A mini-app opened in a browser with a signed `initData`.
    Miniapp { url: String },
}

/// One step.
#[derive(Debug, Clone)]
pub enum Action {
    /// Write a message to the bot.
    Send { text: String },
    /// Press an inline button (by its text) of the newest message that has it.
    Press { button: String },
    /// The next message or edit (bot), or the page's text (mini-app), matches.
    Expect {
        pattern: Regex,
        selector: Option<String>,
        timeout: Duration,
    },
    /// Open the mini-app at this path or URL (relative to the scenario's `url`).
    OpenMiniapp { url: String },
    /// Click the element a CSS selector finds.
    Click { selector: String, timeout: Duration },
    /// Type text into the element a CSS selector finds.
    Fill { selector: String, text: String },
}

/// A step and the line of the file it starts on.
#[derive(Debug, Clone)]
pub struct Step {
    pub line: usize,
    pub action: Action,
}

/// A parsed scenario file.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The file's name without `.toml`.
    pub name: String,
    pub target: Target,
    pub steps: Vec<Step>,
}

impl Scenario {
    /// The bot a bot scenario is aimed at: its own `bot`, or the project's test bot.
    #[must_use]
    pub fn bot<'a>(&'a self, test_bot: Option<&'a str>) -> Option<&'a str> {
        match &self.target {
            Target::Bot { bot } => bot.as_deref().or(test_bot),
            Target::Miniapp { .. } => None,
        }
    }
}

/// What is wrong with a scenario file, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {field}: {message}")]
pub struct ScenarioError {
    pub file: String,
    pub line: usize,
    pub field: String,
    pub message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    target: Spanned<String>,
    #[serde(default)]
    bot: Option<Spanned<String>>,
    #[serde(default)]
    url: Option<Spanned<String>>,
    #[serde(default)]
    step: Vec<Spanned<RawStep>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    send: Option<Spanned<String>>,
    press: Option<Spanned<String>>,
    expect: Option<Spanned<String>>,
    open_miniapp: Option<Spanned<String>>,
    click: Option<Spanned<String>>,
    fill: Option<Spanned<String>>,
    text: Option<Spanned<String>>,
    selector: Option<Spanned<String>>,
    timeout_secs: Option<Spanned<f64>>,
}

/// The 1-based line of a byte offset.
fn line_of(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].matches('\n').count() + 1
}

/// The key written on a line (`key = value`), for a TOML error that only gives a span.
fn key_on_line(text: &str, line: usize) -> String {
    let l = text.lines().nth(line.saturating_sub(1)).unwrap_or("");
    match l.split_once('=') {
        Some((k, _)) => k.trim().to_string(),
        None => l.trim().to_string(),
    }
}

/// Reads one scenario file's text; `file` is how errors name it, `name` the scenario's name.
///
/// # Errors
/// The first thing wrong, with its file, line and field.
pub fn parse(file: &str, name: &str, text: &str) -> Result<Scenario, ScenarioError> {
    let err = |at: usize, field: &str, message: String| ScenarioError {
        file: file.to_string(),
        line: line_of(text, at),
        field: field.to_string(),
        message,
    };
    let raw: RawScenario = toml::from_str(text).map_err(|e| {
        let at = e.span().map_or(0, |s| s.start);
        let line = line_of(text, at);
        ScenarioError {
            file: file.to_string(),
            line,
            field: key_on_line(text, line),
            message: e.message().trim().to_string(),
        }
    })?;
    let target = match raw.target.get_ref().as_str() {
        "bot" => {
            if let Some(u) = &raw.url {
                return Err(err(
                    u.span().start,
                    "url",
                    "a bot scenario has no url (it is for target = \"miniapp\")".into(),
                ));
            }
            Target::Bot {
                bot: raw.bot.as_ref().map(|b| b.get_ref().clone()),
            }
        }
        "miniapp" => {
            let Some(url) = &raw.url else {
                return Err(err(
                    raw.target.span().start,
                    "url",
                    "a miniapp scenario needs the mini-app's url".into(),
                ));
            };
            if !(url.get_ref().starts_with("http://") || url.get_ref().starts_with("https://")) {
                return Err(err(
                    url.span().start,
                    "url",
                    format!("{:?} is not an http(s) URL", url.get_ref()),
                ));
            }
            if let Some(b) = &raw.bot {
                return Err(err(
                    b.span().start,
                    "bot",
                    "a miniapp scenario is signed with the test bot's token; it names no bot"
                        .into(),
                ));
            }
            Target::Miniapp {
                url: url.get_ref().clone(),
            }
        }
        other => {
            return Err(err(
                raw.target.span().start,
                "target",
                format!("{other:?} is not a target (\"bot\" or \"miniapp\")"),
            ));
        }
    };
    let miniapp = matches!(target, Target::Miniapp { .. });
    let mut steps = Vec::with_capacity(raw.step.len());
    for (i, s) in raw.step.iter().enumerate() {
        let at = s.span().start;
        let n = i + 1;
        let step = s.get_ref();
        let actions: Vec<(&str, &Spanned<String>)> = [
            ("send", &step.send),
            ("press", &step.press),
            ("expect", &step.expect),
            ("open_miniapp", &step.open_miniapp),
            ("click", &step.click),
            ("fill", &step.fill),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| (k, v)))
        .collect();
        let (kind, value) = match actions.as_slice() {
            [one] => *one,
            [] => {
                return Err(err(
                    at,
                    &format!("step {n}"),
                    "no action: give one of send, press, expect, open_miniapp, click, fill".into(),
                ));
            }
            [_, second, ..] => {
                return Err(err(
                    second.1.span().start,
                    second.0,
                    format!(
                        "step {n} has two actions ({} and {}); one per step",
                        actions[0].0, second.0
                    ),
                ));
            }
        };
        let vat = value.span().start;
        let v = value.get_ref().clone();
        let timeout = match &step.timeout_secs {
            Some(t) if !(t.get_ref().is_finite() && *t.get_ref() > 0.0) => {
                return Err(err(
                    t.span().start,
                    "timeout_secs",
                    "must be a positive number of seconds".into(),
                ));
            }
            Some(t) => Duration::from_secs_f64(*t.get_ref()),
            None => DEFAULT_TIMEOUT,
        };
        let only = |field: &str, allowed: bool, f: &Option<Spanned<String>>| match f {
            Some(x) if !allowed => Err(err(
                x.span().start,
                field,
                format!("`{field}` does not go with `{kind}`"),
            )),
            _ => Ok(()),
        };
        only("text", kind == "fill", &step.text)?;
        only("selector", kind == "expect" && miniapp, &step.selector)?;
        if let Some(t) = &step.timeout_secs
            && !matches!(kind, "expect" | "click")
        {
            return Err(err(
                t.span().start,
                "timeout_secs",
                format!("`{kind}` does not wait; only expect and click take a timeout"),
            ));
        }
        let bot_only = matches!(kind, "send" | "press");
        let page_only = matches!(kind, "open_miniapp" | "click" | "fill");
        if bot_only && miniapp || page_only && !miniapp {
            let needs = if bot_only { "bot" } else { "miniapp" };
            return Err(err(
                vat,
                kind,
                format!("`{kind}` is a step of a target = \"{needs}\" scenario"),
            ));
        }
        let action = match kind {
            "send" => {
                if v.is_empty() || v.chars().count() > MAX_TEXT {
                    return Err(err(
                        vat,
                        kind,
                        format!("a message is 1 to {MAX_TEXT} characters, as Telegram takes it"),
                    ));
                }
                Action::Send { text: v }
            }
            "press" => Action::Press { button: v },
            "expect" => Action::Expect {
                pattern: Regex::new(&v).map_err(|e| err(vat, kind, format!("not a regex: {e}")))?,
                selector: step.selector.as_ref().map(|s| s.get_ref().clone()),
                timeout,
            },
            "open_miniapp" => Action::OpenMiniapp { url: v },
            "click" => Action::Click {
                selector: v,
                timeout,
            },
            _ => {
                let Some(text) = &step.text else {
                    return Err(err(vat, "text", "`fill` needs the text to type".into()));
                };
                Action::Fill {
                    selector: v,
                    text: text.get_ref().clone(),
                }
            }
        };
        steps.push(Step {
            line: line_of(text, at),
            action,
        });
    }
    if steps.is_empty() {
        return Err(err(
            0,
            "step",
            "a scenario has at least one [[step]]".into(),
        ));
    }
    Ok(Scenario {
        name: name.to_string(),
        target,
        steps,
    })
}

/// Whether a bot is the project's production bot. Names compare without `@` and case, as
/// Telegram's usernames do.
#[must_use]
pub fn is_prod(bot: &str, prod_bot: Option<&str>) -> bool {
    let norm = |s: &str| s.trim().trim_start_matches('@').to_ascii_lowercase();
    prod_bot.is_some_and(|p| norm(p) == norm(bot))
}

/// The finding of an `expect` that saw something else (or nothing) in time.
#[must_use]
pub fn expect_finding(n: usize, pattern: &Regex, got: Option<&str>) -> String {
    match got {
        Some(g) => format!("step {n}: expected /{pattern}/, got «{}»", shorten(g)),
        None => format!("step {n}: expected /{pattern}/, got nothing in time"),
    }
}

/// A reply as a finding quotes it: one line, at most 200 characters.
fn shorten(s: &str) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() > 200 {
        let cut: String = one.chars().take(200).collect();
        format!("{cut}…")
    } else {
        one
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bad(text: &str) -> ScenarioError {
        parse(".conveyor/telegram/pay.toml", "pay", text).expect_err("should not parse")
    }

    #[test]
    fn a_bot_scenario_parses_with_lines_and_defaults() {
        let s = parse(
            "f.toml",
            "pay",
            "target = \"bot\"\n\n[[step]]\nsend = \"/start\"\n\n[[step]]\npress = \"Оплатить\"\n\n[[step]]\nexpect = \"Оплачено\"\ntimeout_secs = 2.5\n",
        )
        .unwrap();
        assert_eq!(s.target, Target::Bot { bot: None });
        assert_eq!(s.bot(Some("@shop_test_bot")), Some("@shop_test_bot"));
        assert_eq!(
            s.steps.iter().map(|s| s.line).collect::<Vec<_>>(),
            [3, 6, 9]
        );
        match &s.steps[2].action {
            Action::Expect {
                pattern, timeout, ..
            } => {
                assert!(pattern.is_match("Оплачено!"));
                assert_eq!(*timeout, Duration::from_millis(2500));
            }
            other => panic!("{other:?}"),
        }
        match &s.steps[0].action {
            Action::Send { text } => assert_eq!(text, "/start"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_miniapp_scenario_parses_page_steps() {
        let s = parse(
            "f.toml",
            "shop",
            "target = \"miniapp\"\nurl = \"http://127.0.0.1:1/app\"\n[[step]]\nfill = \"#name\"\ntext = \"Антон\"\n[[step]]\nclick = \"#pay\"\n[[step]]\nexpect = \"Оплачено\"\nselector = \"#status\"\n",
        )
        .unwrap();
        assert_eq!(s.bot(Some("x")), None);
        assert!(
            matches!(&s.steps[0].action, Action::Fill { selector, text } if selector == "#name" && text == "Антон")
        );
        assert!(
            matches!(&s.steps[2].action, Action::Expect { selector: Some(s), .. } if s == "#status")
        );
    }

    #[test]
    fn a_misspelt_key_names_file_line_and_field() {
        let e = bad("target = \"bot\"\n[[step]]\nsned = \"/start\"\n");
        assert_eq!(e.file, ".conveyor/telegram/pay.toml");
        assert_eq!(e.line, 3);
        assert_eq!(e.field, "sned");
        assert!(e.message.contains("unknown field"), "{e}");
        assert!(
            e.to_string()
                .starts_with(".conveyor/telegram/pay.toml:3: sned: ")
        );
    }

    #[test]
    fn a_wrong_type_names_its_line() {
        let e = bad("target = \"bot\"\n[[step]]\nexpect = \"x\"\ntimeout_secs = \"soon\"\n");
        assert_eq!((e.line, e.field.as_str()), (4, "timeout_secs"), "{e}");
    }

    #[test]
    fn bad_values_name_their_field() {
        let cases = [
            ("target = \"web\"\n[[step]]\nsend = \"x\"\n", 1, "target"),
            ("target = \"bot\"\n[[step]]\nexpect = \"(\"\n", 3, "expect"),
            (
                "target = \"bot\"\n[[step]]\nsend = \"x\"\npress = \"y\"\n",
                4,
                "press",
            ),
            (
                "target = \"bot\"\n[[step]]\n[[step]]\nsend = \"x\"\n",
                2,
                "step 1",
            ),
            ("target = \"bot\"\n[[step]]\nclick = \"#a\"\n", 3, "click"),
            ("target = \"miniapp\"\n[[step]]\nclick = \"#a\"\n", 1, "url"),
            (
                "target = \"miniapp\"\nurl = \"file:///x\"\n[[step]]\nclick = \"#a\"\n",
                2,
                "url",
            ),
            (
                "target = \"miniapp\"\nurl = \"http://a\"\n[[step]]\nsend = \"x\"\n",
                4,
                "send",
            ),
            (
                "target = \"miniapp\"\nurl = \"http://a\"\n[[step]]\nfill = \"#a\"\n",
                4,
                "text",
            ),
            (
                "target = \"bot\"\n[[step]]\nsend = \"x\"\ntimeout_secs = 3\n",
                4,
                "timeout_secs",
            ),
            ("target = \"bot\"\n", 1, "step"),
        ];
        for (text, line, field) in cases {
            let e = bad(text);
            assert_eq!((e.line, e.field.as_str()), (line, field), "{text:?}: {e}");
        }
        let long = format!(
            "target = \"bot\"\n[[step]]\nsend = \"{}\"\n",
            "я".repeat(4097)
        );
        assert_eq!(bad(&long).field, "send");
    }

    #[test]
    fn prod_bot_compares_as_telegram_names_do() {
        assert!(is_prod("@Shop_Bot", Some("shop_bot")));
        assert!(!is_prod("@shop_test_bot", Some("@shop_bot")));
        assert!(!is_prod("@shop_bot", None));
    }

    #[test]
    fn an_expect_finding_quotes_what_came() {
        let p = Regex::new("Оплачено").unwrap();
        assert_eq!(
            expect_finding(3, &p, Some("Ошибка\nоплаты")),
            "step 3: expected /Оплачено/, got «Ошибка оплаты»"
        );
        assert_eq!(
            expect_finding(1, &p, None),
            "step 1: expected /Оплачено/, got nothing in time"
        );
    }
}
