//! A night written down: the CSV trace format `line,step,kind,cost_usd,minutes[,size]`.

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
        _ => {
            return Err(format!(
                "{path}:1: the header must be `line,step,kind,cost_usd,minutes` (and `,size`), not {header:?}"
            ));
        }
    };
    // (line name, [(step number, step)]) in the order lines first appear.
    let mut named: Vec<(String, Vec<(u32, Step)>)> = Vec::new();
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
        match named.iter_mut().find(|(l, _)| l == line) {
            Some((_, steps)) => steps.push((n, s)),
            None => named.push((line.to_string(), vec![(n, s)])),
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
        .map(|(i, (name, mut steps))| {
            steps.sort_by_key(|(n, _)| *n);
            for (_, s) in &steps {
                #[allow(clippy::cast_precision_loss)]
                let rate = s.cost / s.minutes as f64;
                max_rate = max_rate.max(rate);
            }
            Line {
                project: name,
                // Priority order: the first line is the highest.
                priority: u32::try_from(count - i).unwrap_or(0),
                steps: steps.into_iter().map(|(_, s)| s).collect(),
                next: 0,
                cap_misses: 0,
                abandoned: false,
                running: None,
            }
        })
        .collect();
    let demand = lines
        .iter()
        .flat_map(|l| l.steps.iter().map(|s| s.cost))
        .sum();
    Ok(Trace {
        seed: None,
        lines,
        // A trace is a night of its own: the policy starts cold (its estimates from the
        // config's cold start), as on a first night.
        history: Vec::new(),
        demand,
        max_rate,
    })
}
