//! A run's conversation as pult and the API show it, read from the run's stream-json log: the
//! assistant's text and thinking, each tool call and its result, the CLI's result or error.
//!
//! The log is read while the CLI still writes it, and a log cut by a kill ends mid-line, so
//! only whole lines (ended by `\n`) are read; [`Parsed::whole`] says how far, and the rest is
//! read on a later call once its line is complete. What is served never carries a known secret
//! ([`Secrets`]) and never a tool output longer than a bound (cut with a mark and the full
//! size), since one `cat` of a large file would otherwise make every page of the run huge.

use std::collections::HashMap;

use conveyor_api::{TranscriptEvent, TranscriptKind};
use serde_json::Value;

/// What replaces a secret's value in everything served.
pub const SECRET_MARK: &str = "[secret hidden]";

/// A tool output's bound, in bytes, before it is cut.
pub const OUTPUT_LIMIT: usize = 16 * 1024;

/// Values too short to be a token are not hidden: a one-letter "secret" would mask half of
/// every text, and a real token is never this short.
const SHORTEST_SECRET: usize = 8;

/// The values no answer may carry: the contents of every token file the daemon reads, the
/// Catcher's bot token, PlanFix's token.
#[derive(Debug, Clone, Default)]
pub struct Secrets {
    values: Vec<String>,
}

impl Secrets {
    /// From raw values (a token file's contents as read: surrounding whitespace is dropped,
    /// since the file's trailing newline is not part of what an agent would print).
    pub fn new<I, S>(values: I) -> Secrets
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut values: Vec<String> = values
            .into_iter()
            .map(|v| v.as_ref().trim().to_string())
            .filter(|v| v.len() >= SHORTEST_SECRET)
            .collect();
        // Longest first: a secret that contains another is hidden whole.
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        values.dedup();
        Secrets { values }
    }

    /// `text` with every secret replaced by [`SECRET_MARK`].
    pub fn hide(&self, text: &str) -> String {
        let mut out = text.to_string();
        for v in &self.values {
            if out.contains(v.as_str()) {
                out = out.replace(v.as_str(), SECRET_MARK);
            }
        }
        out
    }

    /// Hides secrets in every string of a JSON value (a tool call's input), keys included.
    pub fn hide_json(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(self.hide(s)),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.hide_json(x)).collect()),
            Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, x)| (self.hide(k), self.hide_json(x)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

/// What one read of a log gave.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    pub events: Vec<TranscriptEvent>,
    /// Bytes of the input read: up to and including its last `\n`. A line past it is still
    /// being written (or was cut by a kill) and is not read.
    pub whole: usize,
}

/// Reads a run's log, call after call as it grows. It remembers the sequence number and which
/// tool each call id names, so a result can say which tool it answers.
#[derive(Debug, Clone)]
pub struct Reader {
    seq: u64,
    tools: HashMap<String, String>,
    secrets: Secrets,
    limit: usize,
}

impl Reader {
    pub fn new(secrets: Secrets, limit: usize) -> Reader {
        Reader {
            seq: 0,
            tools: HashMap::new(),
            secrets,
            limit,
        }
    }

    /// The last event's `seq` so far (0 before any).
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The events of the whole lines of `text`, which continues where the last call's
    /// [`Parsed::whole`] ended; `at` stamps them (the stream carries no times of its own).
    /// Lines that are not JSON, and events that show nothing (`system`, rate limits), are
    /// skipped.
    pub fn read(&mut self, text: &str, at: Option<&str>) -> Parsed {
        self.read_each(text, at, |_| {})
    }

    /// [`Reader::read`], handing each whole line's JSON to `also` as well (say, to meter its
    /// usage), so the log is parsed once.
    pub fn read_each(
        &mut self,
        text: &str,
        at: Option<&str>,
        mut also: impl FnMut(&Value),
    ) -> Parsed {
        let whole = text.rfind('\n').map_or(0, |i| i + 1);
        let mut events = Vec::new();
        for line in text[..whole].lines() {
            let Ok(v) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            also(&v);
            self.line(&v, at, &mut events);
        }
        Parsed { events, whole }
    }

    fn line(&mut self, v: &Value, at: Option<&str>, out: &mut Vec<TranscriptEvent>) {
        let blocks = || v["message"]["content"].as_array().into_iter().flatten();
        match v["type"].as_str() {
            Some("assistant") => {
                for b in blocks() {
                    match b["type"].as_str() {
                        Some("text") => {
                            let text = b["text"].as_str().unwrap_or_default().to_string();
                            out.push(self.event(at, TranscriptKind::Text, |ev| {
                                ev.text = Some(text);
                            }));
                        }
                        Some("thinking") => {
                            let text = b["thinking"].as_str().unwrap_or_default().to_string();
                            out.push(self.event(at, TranscriptKind::Thinking, |ev| {
                                ev.text = Some(text);
                            }));
                        }
                        Some("tool_use") => {
                            let tool = b["name"].as_str().unwrap_or_default().to_string();
                            let id = b["id"].as_str().map(str::to_string);
                            if let Some(id) = &id {
                                self.tools.insert(id.clone(), tool.clone());
                            }
                            let input = b["input"].clone();
                            out.push(self.event(at, TranscriptKind::ToolUse, |ev| {
                                ev.tool = Some(tool);
                                ev.tool_use_id = id;
                                ev.input = Some(input);
                            }));
                        }
                        _ => {}
                    }
                }
            }
            Some("user") => {
                for b in blocks().filter(|b| b["type"] == "tool_result") {
                    let id = b["tool_use_id"].as_str().map(str::to_string);
                    let tool = id.as_ref().and_then(|i| self.tools.get(i)).cloned();
                    let output = match &b["content"] {
                        Value::String(s) => s.clone(),
                        Value::Array(parts) => parts
                            .iter()
                            .filter_map(|p| p["text"].as_str())
                            .collect::<Vec<_>>()
                            .join("\n"),
                        _ => String::new(),
                    };
                    let is_error = b["is_error"].as_bool().unwrap_or(false);
                    out.push(self.event(at, TranscriptKind::ToolResult, |ev| {
                        ev.tool = tool;
                        ev.tool_use_id = id;
                        ev.output = Some(output);
                        ev.is_error = is_error;
                    }));
                }
            }
            Some("result") => {
                // `is_error`, never `subtype`: errors come back as `"subtype":"success"`.
                let is_error = v["is_error"].as_bool().unwrap_or(false);
                let text = v["result"]
                    .as_str()
                    .or_else(|| v["api_error"].as_str())
                    .unwrap_or_default()
                    .to_string();
                let kind = if is_error {
                    TranscriptKind::Error
                } else {
                    TranscriptKind::Result
                };
                out.push(self.event(at, kind, |ev| {
                    ev.text = Some(text);
                    ev.is_error = is_error;
                }));
            }
            _ => {}
        }
    }

    /// A new event, numbered, its secrets hidden and its output cut.
    fn event(
        &mut self,
        at: Option<&str>,
        kind: TranscriptKind,
        fill: impl FnOnce(&mut TranscriptEvent),
    ) -> TranscriptEvent {
        self.seq += 1;
        let mut ev = TranscriptEvent {
            seq: self.seq,
            at: at.map(str::to_string),
            kind,
            text: None,
            tool: None,
            tool_use_id: None,
            input: None,
            output: None,
            output_bytes: None,
            is_error: false,
        };
        fill(&mut ev);
        ev.text = ev.text.map(|t| self.secrets.hide(&t));
        ev.input = ev.input.map(|i| self.secrets.hide_json(&i));
        if let Some(o) = ev.output.take() {
            // Hidden before it is cut, so a secret across the cut cannot leave a piece behind.
            let o = self.secrets.hide(&o);
            let (o, full) = cut(o, self.limit);
            ev.output = Some(o);
            ev.output_bytes = full;
        }
        ev
    }
}

/// `text` cut to at most `limit` bytes (at a character boundary) with a mark that says how
/// much there was; the full size when cut.
pub fn cut(text: String, limit: usize) -> (String, Option<u64>) {
    if text.len() <= limit {
        return (text, None);
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let full = text.len() as u64;
    (
        format!("{}\n… [cut: {full} bytes in all]", &text[..end]),
        Some(full),
    )
}

#[cfg(test)]
mod tests;
