//! A mini-app scenario: `miniapp.mjs` (Playwright with the system's Chromium) opens the page
//! with a `Telegram.WebApp` shim injected before the page's own scripts, its `initData` signed
//! with the test bot's token as Telegram signs it, and runs the page steps. A failed step's
//! screenshot is kept in the run's output folder and named in the finding.

use std::time::Duration;

use conveyor_core::telegram::{Action, Scenario};
use hmac::{Hmac, Mac as _};
use serde_json::{Value, json};
use sha2::Sha256;
use tokio_util::sync::CancellationToken;

use super::transport::write_script;
use super::{Setup, TelegramError};
use crate::exec;

const MINIAPP_MJS: &str = include_str!("../../telegram/miniapp.mjs");

/// Longest a whole mini-app scenario may take beyond its steps' own timeouts (starting
/// Chromium on a busy machine included).
const OVERHEAD: Duration = Duration::from_secs(120);

/// `initData` as Telegram hands it to a mini-app: `query_id`, `user` (JSON), `auth_date` and
/// `hash`, URL-encoded. `hash` is HMAC-SHA256 of the data-check string (the other fields,
/// sorted by key, `key=value` joined by `\n`) under the key HMAC-SHA256("WebAppData",
/// bot token): core.telegram.org/bots/webapps, "Validating data received via the Mini App".
#[must_use]
pub fn init_data(bot_token: &str, user: &Value, auth_date: i64, query_id: &str) -> String {
    let mut fields = [
        ("auth_date", auth_date.to_string()),
        ("query_id", query_id.to_string()),
        ("user", user.to_string()),
    ];
    fields.sort_by(|a, b| a.0.cmp(b.0));
    let check = fields
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut key = Hmac::<Sha256>::new_from_slice(b"WebAppData").expect("any key length");
    key.update(bot_token.as_bytes());
    let secret = key.finalize().into_bytes();
    let mut mac = Hmac::<Sha256>::new_from_slice(&secret).expect("any key length");
    mac.update(check.as_bytes());
    let hash = hex::encode(mac.finalize().into_bytes());
    let enc = |v: &str| {
        percent_encoding::utf8_percent_encode(v, percent_encoding::NON_ALPHANUMERIC).to_string()
    };
    fields
        .iter()
        .map(|(k, v)| format!("{k}={}", enc(v)))
        .chain([format!("hash={hash}")])
        .collect::<Vec<_>>()
        .join("&")
}

/// The user a mini-app sees: the test account as Telegram would describe it.
fn test_user() -> Value {
    json!({"id": 777_000_001_i64, "first_name": "Тест", "username": "conveyor_test",
           "language_code": "ru", "allows_write_to_pm": true})
}

pub(super) async fn run(
    setup: Setup<'_>,
    s: &Scenario,
    url: &str,
) -> Result<Vec<String>, TelegramError> {
    let cfg = setup.config;
    let token_file = cfg
        .test_bot_token_file
        .as_ref()
        .ok_or(TelegramError::NotConfigured {
            what: "[telegram] test_bot_token_file",
        })?;
    let token = crate::config::read_secret(token_file, "[telegram] test_bot_token_file").map_err(
        |message| TelegramError::Transport {
            what: "the test bot's token".into(),
            message,
        },
    )?;
    let now = chrono::Utc::now().timestamp();
    let query_id = format!("AA{}", uuid::Uuid::new_v4().simple());
    let init = init_data(&token, &test_user(), now, &query_id);
    let mut waits = Duration::ZERO;
    let steps: Vec<Value> = s
        .steps
        .iter()
        .enumerate()
        .map(|(i, st)| {
            let n = i + 1;
            match &st.action {
                Action::OpenMiniapp { url } => json!({"n": n, "kind": "open", "url": url}),
                Action::Click { selector, timeout } => {
                    waits += *timeout;
                    json!({"n": n, "kind": "click", "selector": selector,
                           "timeout_ms": timeout.as_millis()})
                }
                Action::Fill { selector, text } => {
                    json!({"n": n, "kind": "fill", "selector": selector, "text": text})
                }
                Action::Expect {
                    pattern,
                    selector,
                    timeout,
                } => {
                    waits += *timeout;
                    json!({"n": n, "kind": "expect", "pattern": pattern.as_str(),
                           "selector": selector, "timeout_ms": timeout.as_millis()})
                }
                Action::Send { .. } | Action::Press { .. } => {
                    unreachable!("the parser keeps bot steps out of mini-app scenarios")
                }
            }
        })
        .collect();
    let shots = setup.out.join(&s.name);
    let spec = json!({
        "chromium": cfg.chromium,
        "url": url,
        "init_data": init,
        "user": test_user(),
        "auth_date": now,
        "query_id": query_id,
        "screenshots": shots,
        "steps": steps,
    });
    let script = write_script(setup.out, "miniapp.mjs", MINIAPP_MJS)?;
    let spec_file = script.with_file_name(format!("{}.json", s.name));
    std::fs::write(&spec_file, spec.to_string()).map_err(|source| TelegramError::Io {
        path: spec_file.clone(),
        source,
    })?;
    let runner_error = |message: String| TelegramError::Transport {
        what: "the mini-app runner (miniapp.mjs)".into(),
        message,
    };
    // Through `exec`: its own process group, so a timeout stops Chromium's processes too, not
    // only Node.
    let mut cmd = exec::Spec::new(&cfg.node, setup.out).args([script.to_string_lossy()]);
    cmd.stdin = Some(spec_file);
    if let Some(nm) = &cfg.node_modules {
        cmd.env
            .insert("NODE_PATH".into(), nm.to_string_lossy().into_owned());
    }
    let limit = waits + OVERHEAD;
    let out = exec::run(&cmd, limit, &CancellationToken::new())
        .await
        .map_err(|e| runner_error(e.to_string()))?;
    if out.timed_out {
        return Err(runner_error(format!("no result in {} s", limit.as_secs())));
    }
    let result: Value = out
        .stdout
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .ok_or_else(|| {
            runner_error(format!(
                "it exited with {:?} and no result: {}",
                out.code,
                out.stderr.trim()
            ))
        })?;
    if let Some(e) = result["error"].as_str() {
        return Err(runner_error(e.to_string()));
    }
    Ok(result["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f.as_str().map(str::to_string))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The data-check string and key as Telegram's docs describe them, computed the long way.
    #[test]
    fn init_data_carries_the_documented_hash() {
        let user = json!({"id": 1, "first_name": "A"});
        let data = init_data("123:ABC", &user, 1_700_000_000, "AAq");
        let pairs: Vec<(String, String)> = data
            .split('&')
            .map(|kv| {
                let (k, v) = kv.split_once('=').unwrap();
                (
                    k.to_string(),
                    percent_encoding::percent_decode_str(v)
                        .decode_utf8()
                        .unwrap()
                        .into_owned(),
                )
            })
            .collect();
        let hash = pairs.iter().find(|(k, _)| k == "hash").unwrap().1.clone();
        let check = "auth_date=1700000000\nquery_id=AAq\nuser={\"first_name\":\"A\",\"id\":1}";
        let mut k = Hmac::<Sha256>::new_from_slice(b"WebAppData").unwrap();
        k.update(b"123:ABC");
        let mut m = Hmac::<Sha256>::new_from_slice(&k.finalize().into_bytes()).unwrap();
        m.update(check.as_bytes());
        assert_eq!(hash, hex::encode(m.finalize().into_bytes()));
        assert!(
            pairs
                .iter()
                .any(|(k, v)| k == "user" && v.contains("\"id\":1"))
        );
    }
}
