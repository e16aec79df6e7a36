//! The load check (not a test): `GET /api/lines` and `GET /api/lines/{id}` latency with 1,000
//! lines and 100,000 journal entries, at a fixed request rate, on loopback.
//!
//! ```text
//! cargo run --release -p conveyor --example load -- [--rate 200] [--secs 20]
//! ```
//!
//! The generator is open-loop: request i is due at start + i/rate and its latency is measured
//! from that due time, so a slow server cannot hide its queueing (no coordinated omission).
//! The daemon runs in this process with `run_lines = false` (the API only), on its own runtime
//! threads; the data is seeded straight into its SQLite file first. Bounded: `rate × secs`
//! requests per endpoint, to 127.0.0.1 only.

#![allow(clippy::print_stdout)]

use std::sync::Arc;
use std::time::{Duration, Instant};

const LINES: usize = 1_000;
const JOURNAL: usize = 100_000;
const PROJECTS: usize = 20;

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

async fn seed(data: &std::path::Path) {
    std::fs::create_dir_all(data).unwrap();
    // The daemon's store makes the schema; the rows go in straight through SQL, as a tool
    // outside the daemon would write them.
    let db = data.join("conveyor.db");
    conveyor::Store::open(&db).await.unwrap().close().await;
    let pool = sqlx::SqlitePool::connect_with(
        sqlx::sqlite::SqliteConnectOptions::new()
            .filename(&db)
            .foreign_keys(true),
    )
    .await
    .unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let mut tx = pool.begin().await.unwrap();
    for p in 0..PROJECTS {
        sqlx::query("INSERT INTO projects (id, name, repo_path, main_branch, created_at) VALUES (?,?,?,?,?)")
            .bind(format!("p{p}"))
            .bind(format!("project {p}"))
            .bind(format!("/srv/repos/p{p}"))
            .bind("main")
            .bind(now)
            .execute(&mut *tx)
            .await
            .unwrap();
    }
    let states = [
        "queued",
        "running",
        "awaiting_acceptance",
        "accepted",
        "needs_human",
    ];
    let mut run_id = 0i64;
    for l in 0..LINES {
        let id = format!("line-{l:04}");
        sqlx::query(
            "INSERT INTO lines (id, project_id, title, task, priority, state, level, session_id, branch,
                session_started, checkpoint, journal_offset, created_at, updated_at)
             VALUES (?,?,?,?,?,?, 'medium', ?, ?, 1, 'abc', 0, ?, ?)",
        )
        .bind(&id)
        .bind(format!("p{}", l % PROJECTS))
        .bind(format!("line number {l}"))
        .bind("A task of a realistic length: change the handler, add a test, keep the API stable. ".repeat(3))
        .bind((l % 7) as i64)
        .bind(states[l % states.len()])
        .bind(uuid::Uuid::new_v4().to_string())
        .bind(format!("line/{id}"))
        .bind(now - (LINES - l) as i64 * 1000)
        .bind(now)
        .execute(&mut *tx)
        .await
        .unwrap();
        for n in 1..=4i64 {
            let sid = format!("{id}-s{n}");
            sqlx::query(
                "INSERT INTO steps (id, line_id, n, kind, title, task, checks, state, attempts)
                 VALUES (?,?,?,?,?,?, '[{\"cmd\":\"cargo test\",\"expect_exit\":0}]', 'done', 1)",
            )
            .bind(&sid)
            .bind(&id)
            .bind(n)
            .bind(if n == 1 { "planner" } else { "executor" })
            .bind(format!("step {n}"))
            .bind("do the thing")
            .execute(&mut *tx)
            .await
            .unwrap();
            run_id += 1;
            sqlx::query(
                "INSERT INTO runs (id, step_id, line_id, kind, attempt, resumed, started_at, finished_at,
                    outcome, cost_usd, input_tokens, output_tokens, cache_read, cache_write)
                 VALUES (?,?,?,?,1,1,?,?, 'ok', 0.35, 1000, 500, 30000, 2000)",
            )
            .bind(run_id)
            .bind(&sid)
            .bind(&id)
            .bind(if n == 1 { "planner" } else { "executor" })
            .bind(now - 10_000_000)
            .bind(now - 9_000_000)
            .execute(&mut *tx)
            .await
            .unwrap();
        }
    }
    for j in 0..JOURNAL {
        let line = format!("line-{:04}", j % LINES);
        let valid = j % 50 != 0;
        sqlx::query(
            "INSERT INTO journal (line_id, step_id, offset, kind, text, options, default_opt, why,
                reversible, expensive, valid, error, raw, created_at)
             VALUES (?, NULL, ?, ?, ?, '[\"a\",\"b\"]', 'a', 'because it is simpler', 1, 0, ?, ?, ?, ?)",
        )
        .bind(&line)
        .bind((j / LINES) as i64 * 200)
        .bind(if valid { Some("decided") } else { None })
        .bind(valid.then(|| format!("decision {j}: kept the old format")))
        .bind(valid)
        .bind((!valid).then_some("not a journal entry"))
        .bind(format!("{{\"kind\":\"decided\",\"text\":\"decision {j}\"}}"))
        .bind(now)
        .execute(&mut *tx)
        .await
        .unwrap();
    }
    tx.commit().await.unwrap();
    pool.close().await;
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

async fn drive(
    client: &reqwest::Client,
    urls: Arc<Vec<String>>,
    token: &str,
    rate: u64,
    secs: u64,
) -> (Vec<Duration>, usize, usize) {
    let total = (rate * secs) as usize;
    let start = tokio::time::Instant::now() + Duration::from_millis(200);
    let mut handles = Vec::with_capacity(total);
    for i in 0..total {
        let due = start + Duration::from_secs_f64(i as f64 / rate as f64);
        let client = client.clone();
        let url = urls[i % urls.len()].clone();
        let token = token.to_string();
        handles.push(tokio::spawn(async move {
            tokio::time::sleep_until(due).await;
            let r = client.get(&url).bearer_auth(token).send().await;
            let ok = match r {
                Ok(r) => r.status().is_success() && r.bytes().await.is_ok(),
                Err(_) => false,
            };
            (due.elapsed(), ok)
        }));
    }
    let mut lat = Vec::with_capacity(total);
    let mut errors = 0;
    let mut bytes = 0;
    for h in handles {
        let (d, ok) = h.await.unwrap();
        if !ok {
            errors += 1;
        }
        lat.push(d);
    }
    lat.sort();
    // One sample response size.
    if let Ok(r) = client.get(&urls[0]).bearer_auth(token).send().await {
        bytes = r.bytes().await.map(|b| b.len()).unwrap_or(0);
    }
    (lat, errors, bytes)
}

fn main() {
    let rate = arg("--rate", 200);
    let secs = arg("--secs", 20);
    let tmp = tempfile::tempdir().unwrap();
    // `--data DIR` keeps the seeded data (for a look with other tools); default: a temp folder.
    let args: Vec<String> = std::env::args().collect();
    let data = args
        .iter()
        .position(|a| a == "--data")
        .and_then(|i| args.get(i + 1))
        .map_or_else(|| tmp.path().join("data"), std::path::PathBuf::from);
    let _ = std::fs::remove_dir_all(&data);
    // The server: its own runtime (2 worker threads, the machine's cores).
    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let seeded = Instant::now();
    server_rt.block_on(seed(&data));
    println!(
        "seeded {LINES} lines, {} steps, {JOURNAL} journal entries in {:.1?}",
        LINES * 4,
        seeded.elapsed()
    );
    let mut cfg = conveyor::Config::new(&data);
    cfg.listen = "127.0.0.1:0".parse().unwrap();
    cfg.token = Some("bench".into());
    cfg.run_lines = false;
    let handle = server_rt.block_on(conveyor::start(cfg)).unwrap();
    let base = format!("http://{}", handle.addr);

    // The load generator: one more thread of its own.
    let client_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(256)
        .build()
        .unwrap();
    let cases: Vec<(&str, Vec<String>)> = vec![
        (
            "GET /api/lines (default page: 200 lines with steps)",
            vec![format!("{base}/api/lines")],
        ),
        (
            "GET /api/lines?limit=1000 (all 1,000 lines with steps)",
            vec![format!("{base}/api/lines?limit=1000")],
        ),
        (
            "GET /api/lines (default page) while 10 writes/s invalidate the cache",
            vec![format!("{base}/api/lines")],
        ),
        (
            "GET /api/lines/{id} (steps, 100 journal entries, budget)",
            (0..LINES)
                .map(|l| format!("{base}/api/lines/line-{l:04}"))
                .collect(),
        ),
    ];
    println!("rate {rate}/s for {secs}s per endpoint, open loop, 127.0.0.1");
    println!("| endpoint | requests | errors | p50 ms | p90 ms | p99 ms | max ms | body bytes |");
    println!("|---|---|---|---|---|---|---|---|");
    let churn_url = format!("{base}/api/lines/line-0001");
    for (name, urls) in cases {
        let urls = Arc::new(urls);
        let churn = name.contains("writes");
        // Warm-up: a second's worth, not measured.
        client_rt.block_on(drive(&client, urls.clone(), "bench", rate, 1));
        // A writer changing a line's priority 10 times a second (each change is an event).
        let writer = churn.then(|| {
            let client = client.clone();
            let url = churn_url.clone();
            client_rt.spawn(async move {
                for i in 0..secs * 10 + 20 {
                    let _ = client
                        .patch(&url)
                        .bearer_auth("bench")
                        .json(&serde_json::json!({"priority": i % 7}))
                        .send()
                        .await;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            })
        });
        let (lat, errors, bytes) = client_rt.block_on(drive(&client, urls, "bench", rate, secs));
        if let Some(w) = writer {
            w.abort();
        }
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        println!(
            "| {name} | {} | {errors} | {:.1} | {:.1} | {:.1} | {:.1} | {bytes} |",
            lat.len(),
            ms(pct(&lat, 0.5)),
            ms(pct(&lat, 0.9)),
            ms(pct(&lat, 0.99)),
            ms(*lat.last().unwrap()),
        );
    }
    server_rt.block_on(handle.stop());
}
