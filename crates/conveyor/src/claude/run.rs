//! Runs the CLI to its end: the output streamed to the log file and read as it comes, each
//! event the daemon waits for told as it happens, the whole process group stopped on a timeout
//! or a cancel.

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;

use super::events::{RateLimitInfo, ResultEvent, later_result};
use super::invocation::Invocation;
use super::report::Report;
use crate::exec;

/// What a run reports while it goes.
#[derive(Debug, Clone)]
pub enum Signal {
    /// The process exists, with this pid (recorded before anything else happens).
    Started(u32),
    /// `system/init`: the session exists (sent once).
    Init,
    /// A `rate_limit_event`.
    RateLimit(RateLimitInfo),
    /// The run's usage grew (an `assistant` event): its tokens so far, per model.
    Usage(std::collections::BTreeMap<String, crate::budget::Tokens>),
    /// The run's log holds transcript events up to this `seq` (written and flushed, so a
    /// reader of the log sees them).
    Transcript(u64),
}

/// A boxed future for [`Signal`] handlers.
pub type SignalFuture = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// Runs the CLI to its end, telling `on` what happens as it happens.
pub async fn run(
    inv: &Invocation,
    cancel: &CancellationToken,
    on: &(dyn Fn(Signal) -> SignalFuture + Send + Sync),
) -> Report {
    let started = std::time::Instant::now();
    let mut report = Report::default();
    let mut child = match inv.spec().spawn() {
        Ok(c) => c,
        Err(e) => {
            report.spawn_error = Some(e.to_string());
            return report;
        }
    };
    let pid = child.id();
    report.pid = pid;
    if let Some(pid) = pid {
        on(Signal::Started(pid)).await;
    }
    let stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let err_task = tokio::spawn(async move {
        let mut b = Vec::new();
        let _ = stderr.read_to_end(&mut b).await;
        String::from_utf8_lossy(&b).into_owned()
    });
    let mut log = tokio::fs::File::create(&inv.log).await.ok();
    let mut lines = BufReader::new(stdout).lines();
    let mut meter = crate::budget::Meter::default();
    // Numbers the log's transcript events as the API will, to say how far a watcher may read.
    let mut transcript = conveyor_core::transcript::Reader::new(
        conveyor_core::transcript::Secrets::default(),
        usize::MAX,
    );
    let deadline = tokio::time::sleep(inv.timeout);
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            line = lines.next_line() => {
                let Ok(Some(line)) = line else { break };
                if let Some(f) = log.as_mut() {
                    let _ = f.write_all(line.as_bytes()).await;
                    let _ = f.write_all(b"\n").await;
                    // Flushed line by line: the API reads this file while the run goes on.
                    let _ = f.flush().await;
                }
                let before = transcript.seq();
                transcript.read(&format!("{line}\n"), None);
                if transcript.seq() > before && log.is_some() {
                    on(Signal::Transcript(transcript.seq())).await;
                }
                let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else { continue };
                if meter.feed(&v) {
                    on(Signal::Usage(meter.tokens())).await;
                }
                match v.get("type").and_then(|t| t.as_str()) {
                    Some("system")
                        if v.get("subtype").and_then(|s| s.as_str()) == Some("init")
                            && !report.init_seen =>
                    {
                        report.init_seen = true;
                        on(Signal::Init).await;
                    }
                    Some("rate_limit_event") => {
                        if let Some(info) = v.get("rate_limit_info")
                            && let Ok(mut info) = serde_json::from_value::<RateLimitInfo>(info.clone())
                        {
                            info.raw = line.clone();
                            on(Signal::RateLimit(info.clone())).await;
                            report.rate_limits.push(info);
                        }
                    }
                    Some("result") => {
                        if let Ok(r) = serde_json::from_value::<ResultEvent>(v) {
                            report.result = Some(later_result(report.result.take(), r));
                        }
                    }
                    _ => {}
                }
            }
            () = &mut deadline => {
                report.timed_out = true;
                break;
            }
            () = cancel.cancelled() => {
                report.cancelled = true;
                break;
            }
        }
    }
    if report.timed_out || report.cancelled {
        exec::kill_group(pid);
    }
    let status = child.wait().await.ok();
    // Helpers the agent left behind in its group go too.
    exec::kill_group(pid);
    report.exit_code = status.and_then(|s| s.code());
    report.stderr = err_task.await.unwrap_or_default();
    if let Some(f) = log.as_mut() {
        let _ = f.flush().await;
    }
    report.duration_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
    report
}
