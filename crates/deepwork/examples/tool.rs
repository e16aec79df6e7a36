//! Benchmark driver for `scripts/bench-deepwork.sh`: runs one deepwork tool on a folder and
//! prints its whole output, so it can be timed process against process with ripgrep and fd,
//! and measures the loop's own per-step overhead with an in-process scripted transport.
//!
//! ```text
//! tool find <TEXT> --dir <D>       every hit, uncapped, as path:line: text
//! tool list <GLOB> --dir <D>       every matching path, uncapped
//! tool tree --dir <D>              the capped tree of the first message
//! tool walk --dir <D>              every file the walk yields
//! tool loop --dir <D> --steps <N> [--find TEXT]
//! ```

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use deepwork::{Ask, Cancel, Limits, Loop, Prompts, Sandbox, Transport, TransportError};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut dir = PathBuf::from(".");
    let mut steps = 20usize;
    let mut find_text = String::from("deepwork-rare-needle");
    let mut positional = Vec::new();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--dir" => dir = it.next().context("--dir needs a value")?.into(),
            "--steps" => steps = it.next().context("--steps needs a value")?.parse()?,
            "--find" => find_text = it.next().context("--find needs a value")?,
            _ => positional.push(a),
        }
    }
    let sb = Sandbox::new(&dir).with_context(|| format!("cannot open {}", dir.display()))?;
    let out = std::io::stdout();
    let mut out = BufWriter::new(out.lock());
    match positional.first().map(String::as_str) {
        Some("find") => {
            let text = positional.get(1).context("find needs a text")?;
            for h in deepwork::find(&sb, text, usize::MAX).hits {
                writeln!(out, "{}:{}: {}", h.path, h.line, h.text)?;
            }
        }
        Some("list") => {
            let glob = positional.get(1).context("list needs a glob")?;
            for p in deepwork::list(&sb, glob, usize::MAX)?.paths {
                writeln!(out, "{p}")?;
            }
        }
        Some("tree") => {
            let files = deepwork::walk_files(&sb);
            out.write_all(deepwork::render_tree(&files, Limits::default().tree).as_bytes())?;
        }
        Some("walk") => {
            for p in deepwork::walk_files(&sb) {
                writeln!(out, "{p}")?;
            }
        }
        Some("loop") => bench_loop(&sb, steps, &find_text, &mut out)?,
        _ => bail!(
            "usage: tool find TEXT | list GLOB | tree | walk | loop --steps N [--find TEXT]  --dir D"
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

fn bench_loop(
    sb: &Sandbox,
    steps: usize,
    find_text: &str,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let files = deepwork::walk_files(sb);
    let rs: Vec<&String> = files
        .iter()
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
    let lp = Loop {
        sandbox: sb,
        prompts: &prompts,
        limits: Limits::default(),
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
