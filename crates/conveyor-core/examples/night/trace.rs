//! A night written down: the CSV trace format `line,step,kind,cost_usd,minutes[,size[,project]]`.

use conveyor_api::{StepKind, StepSize};

use super::model::{Line, Step, Trace};

/// Reads a trace file: CSV with a header `line,step,kind,cost_usd,minutes`, one row per step;
/// lines in priority order (the first line named is the highest), steps numbered within their
/// line. A sixth column, `size`, gives the planner's size of a step (empty for none). Errors
/// name the file, the row and the field.
pub(super) fn read_trace(path: &str) -> Result<Trace, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let mut rows = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let header = rows
        .next()
        .map(|(_, h)| h.replace(' ', ""))
        .unwrap_or_default();
    let fields = match header.as_str() {
        "line,step,kind,cost_usd,minutes" => 5,
        "line,step,kind,cost_usd,minutes,size" => 6,
        "line,step,kind,cost_usd,minutes,size,project" => 7,
        _ => {
            return Err(format!(
                "{path}:1: the header must be `line,step,kind,cost_usd,minutes` (and `,size`, `,project`), not {header:?}"
            ));
        }
    };
    // (line name, [(step number, step)]) in the order lines first appear.
    let mut named: Vec<(String, Vec<(u32, Step)>)> = Vec::new();
    // Each line's project (the line's own name unless the `project` column says).
    let mut projects: Vec<String> = Vec::new();
    for (i, row) in rows {
        let at = |field: &str, why: String| format!("{path}:{}: {field}: {why}", i + 1);
        let cells: Vec<&str> = row.split(',').map(str::trim).collect();
        if cells.len() != fields {
            return Err(format!(
                "{path}:{}: {fields} fields expected, found {}",
                i + 1,
                cells.len()
            ));
        }
        let (line, step, kind, cost, minutes) = (cells[0], cells[1], cells[2], cells[3], cells[4]);
        let size = match cells.get(5).copied() {
            None | Some("") => None,
            Some(s) => Some(
                StepSize::parse(s)
                    .ok_or_else(|| at("size", format!("{s:?} is not a size (xs, s, m, l, xl)")))?,
            ),
        };
        let n: u32 = step
            .parse()
            .map_err(|_| at("step", format!("{step:?} is not a number")))?;
        let kind = StepKind::parse(kind)
            .ok_or_else(|| at("kind", format!("{kind:?} is not a step kind")))?;
        let cost: f64 = cost
            .parse()
            .ok()
            .filter(|c: &f64| c.is_finite() && *c >= 0.0)
            .ok_or_else(|| at("cost_usd", format!("{cost:?} is not a cost in USD")))?;
        let minutes: i64 = minutes.parse().ok().filter(|m| *m >= 1).ok_or_else(|| {
            at(
                "minutes",
                format!("{minutes:?} is not a whole number of minutes ≥ 1"),
            )
        })?;
        let s = Step {
            kind,
            size,
            cost,
            minutes,
        };
        let project = match cells.get(6).copied() {
            None | Some("") => line,
            Some(p) => p,
        };
        match named.iter().position(|(l, _)| l == line) {
            Some(k) if projects[k] != project => {
                return Err(at(
                    "project",
                    format!(
                        "line {line:?} is of project {:?} in an earlier row, not {project:?}",
                        projects[k]
                    ),
                ));
            }
            Some(k) => named[k].1.push((n, s)),
            None => {
                named.push((line.to_string(), vec![(n, s)]));
                projects.push(project.to_string());
            }
        }
    }
    if named.is_empty() {
        return Err(format!("{path}: no steps"));
    }
    let mut max_rate: f64 = 0.0;
    let count = named.len();
    let lines: Vec<Line> = named
        .into_iter()
        .enumerate()
        .zip(projects)
        .map(|((i, (_, mut steps)), project)| {
            steps.sort_by_key(|(n, _)| *n);
            for (_, s) in &steps {
                #[allow(clippy::cast_precision_loss)]
                let rate = s.cost / s.minutes as f64;
                max_rate = max_rate.max(rate);
            }
            Line {
                project,
                // Priority order: the first line is the highest.
                priority: u32::try_from(count - i).unwrap_or(0),
                steps: steps.into_iter().map(|(_, s)| s).collect(),
                next: 0,
                cap_misses: 0,
                abandoned: false,
                running: None,
                kept: 0.0,
            }
        })
        .collect();
    // A trace is a night of its own: the policy starts cold (its estimates from the config's
    // cold start), as on a first night.
    Ok(Trace::new(None, lines, Vec::new(), max_rate))
}

/// Writes `lines` as a trace file (the seven-column form), the lines in priority order (the
/// highest first, the older first among equals, as the simulator orders them).
pub(super) fn write_trace(path: &str, lines: &[Line]) -> Result<(), String> {
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by_key(|i| (std::cmp::Reverse(lines[*i].priority), *i));
    let mut out = String::from("line,step,kind,cost_usd,minutes,size,project\n");
    for i in order {
        let l = &lines[i];
        for (n, s) in l.steps.iter().enumerate() {
            out.push_str(&format!(
                "l{i},{},{},{:.4},{},{},{}\n",
                n + 1,
                s.kind.as_str(),
                s.cost,
                s.minutes,
                s.size.map_or("", |z| z.as_str()),
                l.project
            ));
        }
    }
    std::fs::write(path, out).map_err(|e| format!("{path}: {e}"))
}
