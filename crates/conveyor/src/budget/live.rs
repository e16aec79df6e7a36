//! A running step's live cost: what it has spent so far, from the usage the CLI reports in its
//! stream as the run goes, priced per model.
//!
//! A run's exact cost comes only with its `result`. Until then the stream's `assistant` events
//! carry each API call's `message.usage` (subagents' calls too, with `parent_tool_use_id`).
//! Observed with 2.1.332 (`docs/conveyor.md`, "Live cost"): one event per content block, all
//! with the message's id, and the usage is the one of `message_start`, so `output_tokens` is the
//! count at the start of the stream (1 against the mock), not the turn's. The meter therefore
//! counts each message once (by id, the largest figure of each field), and the output from the
//! message's own text (its text, thinking and tool input, at `CHARS_PER_TOKEN`) when that is
//! more: the live cost is a close lower bound, and the result replaces it.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

pub use crate::config::Price;

/// Characters of text per output token when the usage does not say (a common rule of thumb
/// for English and code; Cyrillic text takes more tokens a character, so it is counted low).
const CHARS_PER_TOKEN: usize = 4;

/// The models the CLI was seen to use and their prices (what the CLI's own `costUSD` agrees
/// with; `[budget.prices]` adds or replaces entries).
const BUILT_IN: &[(&str, Price)] = &[
    // Observed: the default model of 2.1.332 (`notes/claude-cli.md`).
    (
        "claude-opus-5-5",
        Price {
            input: 4.0,
            output: 20.0,
            cache_read: 0.2,
            cache_write: 5.0,
        },
    ),
    // Observed: the model 2.1.332 picks with a subscription (OAuth) login, $0.0078 for the
    // mock's call where opus costs $0.0156.
    (
        "claude-sonnet-5-5",
        Price {
            input: 2.0,
            output: 10.0,
            cache_read: 0.1,
            cache_write: 2.5,
        },
    ),
];

/// Prices per model.
#[derive(Debug, Clone, PartialEq)]
pub struct Prices {
    table: BTreeMap<String, Price>,
}

impl Prices {
    /// The built-in table with `extra` added over it.
    pub fn new(extra: &BTreeMap<String, Price>) -> Prices {
        let mut table: BTreeMap<String, Price> = BUILT_IN
            .iter()
            .map(|(m, p)| ((*m).to_string(), *p))
            .collect();
        table.extend(extra.iter().map(|(m, p)| (m.clone(), *p)));
        Prices { table }
    }

    /// The price of `model`: its own entry, else the longest entry it starts with (a dated
    /// name such as `claude-haiku-4-5-20251001`), else the dearest entry. An unknown model
    /// is never counted as cheaper than it may be; the run's result corrects it.
    pub fn of(&self, model: &str) -> Price {
        if let Some(p) = self.table.get(model) {
            return *p;
        }
        let prefix = self
            .table
            .iter()
            .filter(|(m, _)| model.starts_with(m.as_str()))
            .max_by_key(|(m, _)| m.len());
        if let Some((_, p)) = prefix {
            return *p;
        }
        self.table
            .values()
            .copied()
            .max_by(|a, b| a.output.total_cmp(&b.output))
            .unwrap_or(Price {
                input: 0.0,
                output: 0.0,
                cache_read: 0.0,
                cache_write: 0.0,
            })
    }

    /// What `tokens` of each model cost, USD.
    pub fn cost(&self, tokens: &BTreeMap<String, Tokens>) -> f64 {
        tokens.iter().fold(0.0, |a, (model, t)| {
            let p = self.of(model);
            #[allow(clippy::cast_precision_loss)]
            let usd = (t.input as f64 * p.input
                + t.output as f64 * p.output
                + t.cache_read as f64 * p.cache_read
                + t.cache_write as f64 * p.cache_write)
                / 1e6;
            a + usd
        })
    }
}

/// Tokens of one kind each.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

impl Tokens {
    fn max(self, o: Tokens) -> Tokens {
        Tokens {
            input: self.input.max(o.input),
            output: self.output.max(o.output),
            cache_read: self.cache_read.max(o.cache_read),
            cache_write: self.cache_write.max(o.cache_write),
        }
    }
    fn add(self, o: Tokens) -> Tokens {
        Tokens {
            input: self.input.saturating_add(o.input),
            output: self.output.saturating_add(o.output),
            cache_read: self.cache_read.saturating_add(o.cache_read),
            cache_write: self.cache_write.saturating_add(o.cache_write),
        }
    }
}

/// The usage of one run's messages so far, by message id.
#[derive(Debug, Clone, Default)]
pub struct Meter {
    messages: HashMap<String, Message>,
}

/// One message as its events have shown it.
#[derive(Debug, Clone, Default)]
struct Message {
    model: String,
    tokens: Tokens,
    /// The hashes of its blocks seen so far (an event per content block; a block seen again
    /// is not counted again), and their characters.
    blocks: std::collections::HashSet<u64>,
    chars: usize,
}

impl Meter {
    /// Takes in one event of the stream; true when the usage grew.
    pub fn feed(&mut self, v: &serde_json::Value) -> bool {
        if v.get("type").and_then(serde_json::Value::as_str) != Some("assistant") {
            return false;
        }
        let Some(m) = v.get("message") else {
            return false;
        };
        let Some(id) = m.get("id").and_then(serde_json::Value::as_str) else {
            return false;
        };
        let u = m.get("usage");
        let field = |k: &str| {
            u.and_then(|u| u.get(k))
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0)
        };
        let msg = self
            .messages
            .entry(id.to_string())
            .or_insert_with(|| Message {
                model: m
                    .get("model")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                ..Message::default()
            });
        // The blocks this event carries, each counted once per message.
        if let Some(blocks) = m.get("content").and_then(serde_json::Value::as_array) {
            for b in blocks {
                use std::hash::{Hash, Hasher};
                let mut h = std::collections::hash_map::DefaultHasher::new();
                b.to_string().hash(&mut h);
                if msg.blocks.insert(h.finish()) {
                    msg.chars += block_chars(b);
                }
            }
        }
        let reported = Tokens {
            input: field("input_tokens"),
            output: field("output_tokens").max((msg.chars / CHARS_PER_TOKEN) as u64),
            cache_read: field("cache_read_input_tokens"),
            cache_write: field("cache_creation_input_tokens"),
        };
        let before = msg.tokens;
        msg.tokens = before.max(reported);
        msg.tokens != before
    }

    /// Tokens per model over every message so far.
    pub fn tokens(&self) -> BTreeMap<String, Tokens> {
        let mut out: BTreeMap<String, Tokens> = BTreeMap::new();
        for m in self.messages.values() {
            let e = out.entry(m.model.clone()).or_default();
            *e = e.add(m.tokens);
        }
        out
    }

    /// Tokens over every message and model so far.
    pub fn total(&self) -> Tokens {
        self.messages
            .values()
            .fold(Tokens::default(), |a, m| a.add(m.tokens))
    }

    /// Messages counted.
    pub fn messages(&self) -> usize {
        self.messages.len()
    }
}

/// Characters of a content block's text: the text, the thinking, or the tool call's input (as
/// JSON, escapes included: a little high for code full of quotes).
fn block_chars(b: &serde_json::Value) -> usize {
    let chars = |s: &str| s.chars().count();
    match b.get("type").and_then(serde_json::Value::as_str) {
        Some("text") => b.get("text").and_then(|t| t.as_str()).map_or(0, chars),
        Some("thinking") => b.get("thinking").and_then(|t| t.as_str()).map_or(0, chars),
        Some("tool_use") => b.get("input").map_or(0, |i| chars(&i.to_string())),
        _ => 0,
    }
}

/// The meter of a run's stream file (a run cut by a crash: what it spent before, the daemon's
/// only figure for it). Lines that do not parse are skipped (the last one may be cut short).
///
/// # Errors
/// The file cannot be read.
pub fn meter_file(path: &Path) -> std::io::Result<Meter> {
    // Bytes, not a string: a crash can cut the last line inside a character.
    let bytes = std::fs::read(path)?;
    let mut m = Meter::default();
    for line in bytes.split(|b| *b == b'\n') {
        if let Ok(v) = serde_json::from_slice::<serde_json::Value>(line) {
            m.feed(&v);
        }
    }
    Ok(m)
}

/// The live cost of every run in progress, by run id. In memory: a restart ends every run
/// (recovery kills what is left), and a cut run's spend is then read from its stream file.
#[derive(Debug, Default)]
pub struct Live {
    // std Mutex: never held across an await.
    by_run: std::sync::Mutex<HashMap<i64, f64>>,
}

impl Live {
    pub fn set(&self, run: i64, usd: f64) {
        self.lock().insert(run, usd);
    }
    pub fn remove(&self, run: i64) {
        self.lock().remove(&run);
    }
    pub fn get(&self, run: i64) -> f64 {
        self.lock().get(&run).copied().unwrap_or(0.0)
    }
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<i64, f64>> {
        self.by_run
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIX: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/claude-cli"
    );

    fn result_cost(path: &Path) -> f64 {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| v["type"] == "result")
            .map(|v| v["total_cost_usd"].as_f64().unwrap())
            .fold(0.0, f64::max)
    }

    /// The recorded run with a subagent: three calls (the main agent's two and the
    /// subagent's one), each priced by the model's prices; a close lower bound of the
    /// result's cost (the output is counted from the text, the usage says 1).
    #[test]
    fn a_runs_stream_gives_its_spend_subagents_included() {
        let path = Path::new(FIX).join("subagent.stream.ndjson");
        let m = meter_file(&path).unwrap();
        let prices = Prices::new(&BTreeMap::new());
        let tokens = m.tokens();
        let opus = tokens["claude-opus-5-5"];
        // Two runs in the file (a resume): four messages, each with the mock's usage.
        assert_eq!(m.messages(), 4, "{tokens:?}");
        assert_eq!(
            (opus.input, opus.cache_read, opus.cache_write),
            (4000, 12000, 8000)
        );
        let live = prices.cost(&tokens);
        let exact = result_cost(&path);
        assert!(live <= exact + 1e-12, "live {live} > result {exact}");
        assert!(live >= 0.9 * exact, "live {live} is far below {exact}");
    }

    /// A crash cuts the stream inside a character: the whole lines before it still count.
    #[test]
    fn a_stream_cut_inside_a_character_still_gives_its_spend() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.ndjson");
        let ev = r#"{"type":"assistant","message":{"id":"m1","model":"claude-opus-5-5","content":[{"type":"text","text":"готово"}],"usage":{"input_tokens":1000,"output_tokens":1,"cache_read_input_tokens":3000,"cache_creation_input_tokens":2000}}}"#;
        let mut bytes = format!("{ev}\n").into_bytes();
        let cut = "{\"type\":\"assistant\",\"message\":{\"id\":\"m2\",\"content\":[{\"text\":\"гот";
        bytes.extend_from_slice(&cut.as_bytes()[..cut.len() - 1]);
        std::fs::write(&path, bytes).unwrap();
        let m = meter_file(&path).unwrap();
        assert_eq!(m.messages(), 1);
        assert_eq!(m.tokens()["claude-opus-5-5"].input, 1000);
    }

    #[test]
    fn a_message_is_counted_once_whatever_its_events() {
        let ev = |blocks: serde_json::Value, out: u64| {
            serde_json::json!({"type": "assistant", "message": {"id": "m1", "model": "claude-opus-5-5",
                "content": blocks, "usage": {"input_tokens": 100, "output_tokens": out,
                "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}})
        };
        let mut m = Meter::default();
        assert!(m.feed(&ev(
            serde_json::json!([{"type": "text", "text": "x".repeat(400)}]),
            1
        )));
        // The second block of the same message: its text adds to the output.
        assert!(m.feed(&ev(
            serde_json::json!([{"type": "tool_use", "input": {"command": "y".repeat(386)}}]),
            1
        )));
        // The same event again changes nothing.
        assert!(!m.feed(&ev(
            serde_json::json!([{"type": "text", "text": "x".repeat(400)}]),
            1
        )));
        let t = m.tokens()["claude-opus-5-5"];
        assert_eq!(t.input, 100, "input counted once per message");
        assert_eq!(t.output, 200, "(400 + 400 characters) / 4");
        // A reported output larger than the text wins.
        m.feed(&ev(serde_json::json!([]), 900));
        assert_eq!(m.tokens()["claude-opus-5-5"].output, 900);
        // Other events are not usage.
        assert!(!m.feed(&serde_json::json!({"type": "user"})));
    }

    #[test]
    fn an_unknown_model_is_priced_at_a_known_prefix_or_the_dearest() {
        let p = Prices::new(&BTreeMap::from([(
            "cheap".to_string(),
            Price {
                input: 0.1,
                output: 0.5,
                cache_read: 0.0,
                cache_write: 0.0,
            },
        )]));
        assert_eq!(p.of("cheap").output, 0.5);
        assert_eq!(p.of("claude-sonnet-5-5-20261101").output, 10.0);
        assert_eq!(p.of("who-knows").output, 20.0);
        let t = BTreeMap::from([(
            "claude-opus-5-5".to_string(),
            Tokens {
                input: 1000,
                output: 50,
                cache_read: 3000,
                cache_write: 2000,
            },
        )]);
        // The mock's call at opus prices: $0.0156 (notes/claude-cli.md).
        assert!((p.cost(&t) - 0.0156).abs() < 1e-12);
    }

    #[test]
    fn live_costs_are_kept_per_run() {
        let l = Live::default();
        l.set(1, 0.5);
        l.set(2, 0.25);
        l.set(1, 0.75);
        assert_eq!((l.get(1), l.get(2), l.get(3)), (0.75, 0.25, 0.0));
        l.remove(1);
        assert_eq!((l.get(1), l.get(2)), (0.0, 0.25));
    }
}
