//! Benchmark driver for `scripts/bench-deepwork.sh`: runs one deepwork tool on a folder and
//! prints its whole output, so it can be timed process against process with ripgrep and fd,
//! and measures the loop's own per-step overhead with an in-process scripted transport.
//!
//! ```text
//! tool find <TEXT> --dir <D>       every hit, uncapped, as path:line: text (index, then FIND)
//! tool list <GLOB> --dir <D>       every matching path, uncapped (index, then LIST)
//!
//! find, list and tree build the index (`Index::walk`, paths alone) and answer from it.
//! tool tree --dir <D>              the capped tree of the first message (paths-only index, then tree)
//! tool walk --dir <D>              every file the bare walk yields
//! tool index --dir <D>             the index: files, heap size, build and check times
//! tool loop --dir <D> --steps <N> [--find TEXT] [--live]
//!                                  the loop; --live hands it a prebuilt index, as pult does
//! ```

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use deepwork::{Ask, Cancel, Index, Limits, Loop, Prompts, Sandbox, Transport, TransportError};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut dir = PathBuf::from(".");
    let mut steps = 20usize;
    let mut find_text = String::from("deepwork-rare-needle");
    let mut live = false;
    let mut positional = Vec::new();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--dir" => dir = it.next().context("--dir needs a value")?.into(),
            "--steps" => steps = it.next().context("--steps needs a value")?.parse()?,
            "--find" => find_text = it.next().context("--find needs a value")?,
            "--live" => live = true,
            _ => positional.push(a),
        }
    }
    let sb = Sandbox::new(&dir).with_context(|| format!("cannot open {}", dir.display()))?;
    let out = std::io::stdout();
    let mut out = BufWriter::new(out.lock());
    match positional.first().map(String::as_str) {
        Some("find") => {
            let text = positional.get(1).context("find needs a text")?;
            for h in deepwork::find(&Index::walk(&sb), text, usize::MAX).hits {
                writeln!(out, "{}:{}: {}", h.path, h.line, h.text)?;
            }
        }
        Some("list") => {
            let glob = positional.get(1).context("list needs a glob")?;
            for p in deepwork::list(&Index::walk(&sb), glob, usize::MAX)?.paths {
                writeln!(out, "{p}")?;
            }
        }
        Some("tree") => {
            // As a run's first step.
            let index = Index::walk(&sb);
            out.write_all(deepwork::render_tree(index.paths(), Limits::default().tree).as_bytes())?;
        }
        Some("walk") => {
            for p in deepwork::walk_files(&sb) {
                writeln!(out, "{p}")?;
            }
        }
        Some("index") => bench_index(&sb, &mut out)?,
        Some("loop") => bench_loop(&sb, steps, &find_text, live, &mut out)?,
        _ => bail!(
            "usage: tool find TEXT | list GLOB | tree | walk | index | loop --steps N [--find TEXT] [--live]  --dir D"
        ),
    }
    out.flush()?;
    Ok(())
}

/// A transport that answers instantly from a script and notes when each send began and
/// ended, so that everything between two sends is the loop's own work.
struct Timed {
    answers: Vec<String>,
    entered: Vec<Instant>,
    left: Vec<Instant>,
}

impl Transport for Timed {
    fn send(&mut self, n: usize, _message: &str, _c: &Cancel) -> Result<String, TransportError> {
        self.entered.push(Instant::now());
        let a = self
            .answers
            .get(n - 1)
            .cloned()
            .unwrap_or_else(|| "Done.".into());
        self.left.push(Instant::now());
        Ok(a)
    }
}

/// The resident memory of this process in kB, where the platform tells it (Linux).
fn rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// `files N heap_bytes B rss_delta_kb R build_us T check_us C`: the index of the folder, what
/// it holds on the heap, what building it added to the process's resident memory, and how
/// long a build and a check with nothing changed take (the median of 5 checks).
fn bench_index(sb: &Sandbox, out: &mut impl Write) -> anyhow::Result<()> {
    let before = rss_kb();
    let start = Instant::now();
    let mut index = Index::walk(sb);
    let build = start.elapsed();
    let after = rss_kb();
    let mut checks: Vec<Duration> = (0..5)
        .map(|_| {
            let t = Instant::now();
            index.refresh();
            t.elapsed()
        })
        .collect();
    checks.sort();
    let rss = match (before, after) {
        (Some(b), Some(a)) => a.saturating_sub(b).to_string(),
        _ => "?".into(),
    };
    writeln!(
        out,
        "files {} dirs_checked {} heap_bytes {} rss_delta_kb {rss} build_us {} check_us {}",
        index.len(),
        index.refresh().checked,
        index.heap_bytes(),
        build.as_micros(),
        checks[2].as_micros()
    )?;
    Ok(())
}

fn bench_loop(
    sb: &Sandbox,
    steps: usize,
    find_text: &str,
    live: bool,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let files = Index::walk(sb);
    let rs: Vec<&str> = files
        .paths()
        .filter(|f| f.ends_with(".rs"))
        .take(2)
        .collect();
    if rs.len() < 2 {
        bail!("the folder needs at least two .rs files");
    }
    let kinds = ["NEED", "LIST", "FIND"];
    let mut answers = Vec::new();
    for n in 1..steps {
        answers.push(match kinds[(n - 1) % 3] {
            "NEED" => format!("=== NEED: {}, {} ===", rs[0], rs[1]),
            "LIST" => "=== LIST: **/*.rs ===".to_owned(),
            _ => format!("=== FIND: {find_text} ==="),
        });
    }
    answers.push("The answer.".into());
    let prompts = Prompts::default();
    // pult's case: the folder's index is already live when the run starts.
    let shared = live.then(|| Mutex::new(Index::walk(sb)));
    let lp = Loop {
        sandbox: sb,
        prompts: &prompts,
        limits: Limits::default(),
        index: shared.as_ref(),
    };
    let mut t = Timed {
        answers,
        entered: vec![],
        left: vec![],
    };
    let ask = Ask {
        question: "Where is it?".into(),
        files: vec![],
        steps,
    };
    let start = Instant::now();
    let outcome = lp.run(&ask, &mut t, &Cancel::new(), &mut |_| {})?;
    let end = Instant::now();
    let mut per_step = Vec::new();
    for (i, entered) in t.entered.iter().enumerate() {
        let since = if i == 0 { start } else { t.left[i - 1] };
        let kind = if i == 0 { "first" } else { kinds[(i - 1) % 3] };
        per_step.push((kind, *entered - since));
    }
    // After the last answer: parsing it and finishing.
    per_step.push(("finish", end - *t.left.last().unwrap_or(&start)));
    for (i, (kind, d)) in per_step.iter().enumerate() {
        writeln!(out, "step {} {kind} {}", i + 1, d.as_micros())?;
    }
    let steps_only: Vec<Duration> = per_step
        .iter()
        .take(t.entered.len())
        .map(|(_, d)| *d)
        .collect();
    let mean = steps_only.iter().sum::<Duration>() / steps_only.len().max(1) as u32;
    let max = steps_only.iter().max().copied().unwrap_or_default();
    writeln!(
        out,
        "mean_us {} max_us {}",
        mean.as_micros(),
        max.as_micros()
    )?;
    eprintln!(
        "stop: {}, {} steps",
        outcome.stop_reason.as_str(),
        outcome.steps.len()
    );
    Ok(())
}
