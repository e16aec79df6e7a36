//! One night simulated minute by minute under an admission mode: the real budget policy, the
//! policy without packing, first come first served, or the oracle; what it did, spent and
//! wasted, tallied.

use conveyor_core::budget::BudgetConfig;
use conveyor_core::budget::{
    Class, Decision, Outcome, Policy, Reserve, Run, Snapshot, calibration,
};

use super::account::{Ledger, Setup};
use super::model::{MIN_MS, Running, Step, Trace};
use super::synthetic::Rng;

/// What the policy is shown of the night.
#[derive(Debug, Clone, Copy)]
pub(super) struct Sees {
    /// The CLI's `rate_limit_event`: the account's utilisation of the window, every minute.
    pub(super) server: bool,
    /// The running steps' spend so far (the daemon's live cost from the stream's usage).
    pub(super) live: bool,
    /// The running steps' true costs (what the live cost could tell at best; a diagnostic).
    pub(super) exact_running: bool,
    /// A size for each step before it runs, off its true cost by a lognormal error of this σ
    /// (what a planner's own estimate of each step could give; a diagnostic).
    pub(super) size_hint: Option<f64>,
    /// An attempt after a miss is estimated at least at what the miss spent.
    pub(super) retry_floor: bool,
    /// The share of a limit-cut attempt's spend its resumed session keeps (`--resume-keeps`):
    /// the daemon resets the worktree to the checkpoint and resumes the same session after the
    /// reset, so what the step read is still in its conversation, but the cache has gone cold
    /// and the whole session is written to it again. Measured with the real CLI: about 0 for a
    /// step that follows others in its session, and below 0 (the resume costs more than the
    /// cut spend: the cold rewrite of the earlier context) when much came before it.
    pub(super) resume_keeps: f64,
    /// The same for a cap miss (`--cap-keeps`, `--resume-keeps` when not given): it resumes as
    /// soon as its raised estimate fits, within the cache's hour, and keeps about half.
    pub(super) cap_keeps: f64,
}

/// Cap misses of one step before its line is left for Anton (as the daemon does).
pub(super) const CAP_MISSES: u32 = 3;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Mode {
    Policy,
    NoPacking,
    /// First come, first served in the queue's order (priority, then age), as the daemon's
    /// queue would run without the budget: the baseline of what the budget adds.
    Fcfs,
    /// First come, first served in the order the lines arrived, priorities ignored.
    FcfsArrival,
    /// The policy's rule and packing with every step's true cost as its estimate, its true rate
    /// and its spend so far: what perfect estimates would give (a feasible schedule, so a lower
    /// bound on the optimum).
    Oracle,
}

impl Mode {
    /// Every mode, in the order of the report's rows.
    pub(super) const ALL: [Mode; 5] = [
        Mode::Policy,
        Mode::NoPacking,
        Mode::Fcfs,
        Mode::FcfsArrival,
        Mode::Oracle,
    ];

    pub(super) fn name(self) -> &'static str {
        match self {
            Mode::Policy => "policy",
            Mode::NoPacking => "no-packing",
            Mode::Fcfs => "fcfs",
            Mode::FcfsArrival => "fcfs-arrival",
            Mode::Oracle => "oracle",
        }
    }
}

#[derive(Debug, Default, Clone)]
pub(super) struct Tally {
    pub(super) work: f64,
    pub(super) steps: u32,
    pub(super) spent: f64,
    pub(super) wasted: f64,
    pub(super) overshoots: u32,
    pub(super) max_window: f64,
    pub(super) limit_hits: u32,
    pub(super) cap_misses: u32,
    pub(super) over_admitted: u32,
    pub(super) bound: f64,
    /// Calibration: observations made, the last one after which the proposal was more than
    /// 10% off the real limit, and the proposal at dawn.
    pub(super) observations: u32,
    pub(super) unsettled: u32,
    pub(super) proposal: f64,
}

/// What the policy learns a step's cost from: its kind, and its size when the planner gave one.
pub(super) fn class(s: &Step) -> Class {
    Class {
        kind: s.kind,
        size: s.size,
    }
}

pub(super) fn simulate(
    tr: &Trace,
    mode: Mode,
    cfg: &BudgetConfig,
    (minutes, setup): (i64, Setup),
    sees: Sees,
) -> Tally {
    let Sees {
        server,
        live,
        exact_running,
        size_hint,
        retry_floor,
        resume_keeps,
        cap_keeps,
    } = sees;
    let Setup {
        slots,
        window_min,
        real,
        ..
    } = setup;
    let policy = Policy::new(cfg.clone());
    let mut lines = tr.lines.clone();
    let mut history = tr.history.clone();
    let mut ledger = Ledger::new(window_min, setup.block);
    let mut park_until = i64::MIN;
    // Observed sizes of the window, and what they propose.
    let mut sizes: Vec<f64> = Vec::new();
    let mut proposal: Option<conveyor_api::Calibration> = None;
    let mut over = false;
    let mut t = Tally::default();
    let windows = (minutes + window_min - 1) / window_min;
    #[allow(clippy::cast_precision_loss)]
    let slot_bound = slots as f64 * minutes as f64 * tr.max_rate;
    #[allow(clippy::cast_precision_loss)]
    let budget_bound = real * windows as f64;
    t.bound = tr.demand.min(budget_bound).min(slot_bound);
    let mut order: Vec<usize> = (0..lines.len()).collect();
    if mode != Mode::FcfsArrival {
        // Priority first; the older line first among equals.
        order.sort_by_key(|i| (std::cmp::Reverse(lines[*i].priority), *i));
    }
    for now in 0..minutes {
        // 1. The running steps accrue their cost for this minute; caps and ends.
        let mut charged_now = 0.0;
        for l in &mut lines {
            let Some(r) = l.running.as_mut() else {
                continue;
            };
            let s = &l.steps[l.next];
            #[allow(clippy::cast_precision_loss)]
            let per_min = s.cost / s.minutes as f64;
            let elapsed = now - r.started;
            if let Some(cap) = r.cap
                && r.charged + per_min > cap
            {
                charged_now += cap - r.charged;
                // A cap miss is rolled back and resumed as a limit cut is.
                if std::env::var_os("NIGHT_DEBUG").is_some() {
                    eprintln!(
                        "{} min {now}: cap miss {} step {} ({:?}) at ${cap:.2} of ${:.2}, started min {}",
                        mode.name(),
                        l.project,
                        l.next,
                        s.kind,
                        s.cost,
                        r.started
                    );
                }
                t.wasted += cap * (1.0 - cap_keeps);
                l.kept += cap * cap_keeps;
                t.cap_misses += 1;
                history.push(Run {
                    kind: s.kind,
                    project: l.project.clone(),
                    step_id: format!("{}/{}", l.project, l.next),
                    size: s.size,
                    cost_usd: cap,
                    started_ms: r.started * MIN_MS,
                    finished_ms: now * MIN_MS,
                    outcome: Outcome::Miss,
                });
                l.cap_misses += 1;
                l.abandoned = l.cap_misses >= CAP_MISSES;
                if l.abandoned {
                    // Left for Anton: what its session kept is not work done tonight.
                    t.wasted += l.kept;
                    l.kept = 0.0;
                }
                l.running = None;
                continue;
            }
            r.charged += per_min;
            charged_now += per_min;
            // A resumed attempt needs only what its session did not keep (at the step's rate).
            let left = (s.cost - l.kept).max(per_min);
            #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
            let needs = ((left / per_min).round() as i64).max(1);
            if elapsed >= needs {
                t.work += s.cost;
                t.steps += 1;
                l.kept = 0.0;
                history.push(Run {
                    kind: s.kind,
                    project: l.project.clone(),
                    step_id: format!("{}/{}", l.project, l.next),
                    size: s.size,
                    // The run's own cost, as the daemon records a resumed run.
                    cost_usd: r.charged,
                    started_ms: r.started * MIN_MS,
                    finished_ms: now * MIN_MS,
                    outcome: Outcome::Done,
                });
                l.next += 1;
                l.cap_misses = 0;
                l.running = None;
            }
        }
        t.spent += charged_now;
        ledger.advance(now);
        if charged_now > 0.0 {
            ledger.charge(now, charged_now);
        }
        // 2. The account's limit: over it, every running step is cut.
        t.max_window = t.max_window.max(ledger.sum / real);
        if ledger.sum > real + 1e-9 {
            if !over {
                t.overshoots += 1;
                t.limit_hits += 1;
                over = true;
                park_until = ledger.drained_to(0.75 * real);
                for l in &mut lines {
                    if let Some(r) = l.running.take() {
                        if std::env::var_os("NIGHT_DEBUG").is_some() {
                            eprintln!(
                                "{} min {now}: cut {} step {} ({:?}) at ${:.2} of ${:.2}, started min {}, claimed ${:.2}; window ${:.2}",
                                mode.name(),
                                l.project,
                                l.next,
                                l.steps[l.next].kind,
                                r.charged,
                                l.steps[l.next].cost,
                                r.started,
                                r.reserve.estimate_usd,
                                ledger.sum
                            );
                        }
                        t.wasted += r.charged * (1.0 - resume_keeps);
                        l.kept += r.charged * resume_keeps;
                        history.push(Run {
                            kind: l.steps[l.next].kind,
                            project: l.project.clone(),
                            step_id: format!("{}/{}", l.project, l.next),
                            size: l.steps[l.next].size,
                            cost_usd: r.charged,
                            started_ms: r.started * MIN_MS,
                            finished_ms: now * MIN_MS,
                            outcome: Outcome::Miss,
                        });
                    }
                }
            }
        } else {
            over = false;
        }
        // 3. Calibration: while steps run, the CLI reports the server's utilisation (two
        // decimals); our own count of the window over it is one observation of its size.
        let busy = lines.iter().filter(|l| l.running.is_some()).count();
        if busy > 0 && mode == Mode::Policy {
            // As the daemon counts it (`store::runs::spent_since`, from the server's reset less
            // the span): a run that began before the window counts for its share of time
            // inside it.
            let since = (ledger.resets_at().unwrap_or(now) - window_min) * MIN_MS;
            #[allow(clippy::cast_precision_loss)]
            let mut own: f64 = history
                .iter()
                .filter(|r| r.finished_ms > since)
                .map(|r| {
                    let inside = (r.finished_ms - since) as f64
                        / (r.finished_ms - r.started_ms).max(1) as f64;
                    r.cost_usd * inside.min(1.0)
                })
                .sum();
            if live {
                own += lines
                    .iter()
                    .filter_map(|l| l.running.as_ref().map(|r| r.charged))
                    .sum::<f64>();
            }
            let util = (ledger.sum / real * 100.0).round() / 100.0;
            if let Some(size) = calibration::observe(own, util) {
                sizes.push(size);
                let c = calibration::propose(&sizes).expect("an observation");
                if (c.proposed_usd - real).abs() > 0.1 * real {
                    t.unsettled = u32::try_from(sizes.len()).unwrap_or(u32::MAX);
                }
                proposal = Some(c);
            }
        }
        // 4. Admission.
        let mut free = slots.saturating_sub(busy);
        if free == 0 || now < park_until {
            continue;
        }
        let mut snap = Snapshot {
            now_ms: now * MIN_MS,
            runs: history.clone(),
            running: lines
                .iter()
                .filter_map(|l| {
                    let r = l.running.as_ref()?;
                    let started_ms = Some(r.started * MIN_MS);
                    let s = &l.steps[l.next];
                    if mode == Mode::Oracle {
                        // Everything known: its cost, its rate and what it has spent.
                        return Some(Reserve {
                            live_usd: r.charged,
                            started_ms,
                            ..r.reserve
                        });
                    }
                    if exact_running {
                        // What the live cost could tell at best: the step's true cost.
                        return Some(Reserve {
                            estimate_usd: s.cost - l.kept,
                            live_usd: r.charged,
                            rate_usd_min: r.reserve.rate_usd_min,
                            started_ms,
                            tail: None,
                        });
                    }
                    Some(if live {
                        Reserve {
                            started_ms,
                            ..policy.running(
                                &history,
                                class(s),
                                &l.project,
                                r.reserve.estimate_usd,
                                r.charged,
                            )
                        }
                    } else {
                        r.reserve
                    })
                })
                .collect(),
            // The CLI's `rate_limit_event`: the account's own utilisation of the window.
            server: server.then(|| conveyor_core::budget::ServerView {
                observed_ms: now * MIN_MS,
                window: Some(conveyor_core::budget::ServerWindow {
                    utilization: ledger.sum / real,
                    resets_at_ms: ledger.resets_at().map(|m| m * MIN_MS),
                }),
                ..Default::default()
            }),
            // Never parked yet: no park (its start, `i64::MIN`, would overflow in minutes).
            park_until: (park_until != i64::MIN).then(|| park_until.saturating_mul(MIN_MS)),
            live: live || mode == Mode::Oracle,
            window_calibration: proposal.clone(),
        };
        // One line per project, as the daemon runs them: a started line holds its project
        // until it is done (also while it waits at a checkpoint), and no other line of the
        // project starts meanwhile (every mode alike; on the nights of one line per project
        // it changes nothing).
        let mut busy_projects: Vec<String> = lines
            .iter()
            .filter(|l| {
                (l.running.is_some() || l.next > 0) && !l.abandoned && l.next < l.steps.len()
            })
            .map(|l| l.project.clone())
            .collect();
        for &i in &order {
            if free == 0 {
                break;
            }
            let l = &mut lines[i];
            if l.running.is_some()
                || l.abandoned
                || l.next >= l.steps.len()
                || (l.running.is_none() && l.next == 0 && busy_projects.contains(&l.project))
            {
                continue;
            }
            let kind = l.steps[l.next].kind;
            let class = class(&l.steps[l.next]);
            let reserve = if mode == Mode::Oracle {
                let s = &l.steps[l.next];
                #[allow(clippy::cast_precision_loss)]
                let rate_usd_min = s.cost / s.minutes as f64;
                Reserve {
                    rate_usd_min,
                    // A resumed attempt costs what its session did not keep.
                    ..Reserve::fixed(s.cost - l.kept)
                }
            } else if let Some(sigma) = size_hint {
                let step_id = format!("{}/{}", l.project, l.next);
                let base = policy.reserve_for(&snap.runs, kind, &l.project, Some(&step_id));
                let mut rng = Rng(0x51_2E ^ ((i as u64) << 20) ^ l.next as u64);
                let hint =
                    l.steps[l.next].cost * (sigma * rng.normal() - sigma * sigma / 2.0).exp();
                let m = 1.0 + cfg.margin;
                let floor = policy.retry_floor(&snap.runs, &step_id);
                let estimate = (hint * (1.2816 * sigma).exp() * m).max(floor);
                Reserve {
                    estimate_usd: estimate,
                    ..base
                }
            } else {
                policy.reserve_for(
                    &snap.runs,
                    class,
                    &l.project,
                    retry_floor
                        .then(|| format!("{}/{}", l.project, l.next))
                        .as_deref(),
                )
            };
            let (estimate, cap) = match mode {
                Mode::Fcfs | Mode::FcfsArrival => (Reserve::fixed(0.0), None),
                Mode::Policy | Mode::NoPacking | Mode::Oracle => {
                    match policy.decide_for(&snap, kind, reserve) {
                        Decision::Start { estimate_usd } => {
                            // Over-admission: the policy's own count above a threshold (only the
                            // "larger than the pool, into an empty pool" rule may do it).
                            for p in policy.pools(&snap) {
                                if policy.peak(&p, &snap, reserve) > p.threshold_usd + 1e-9 {
                                    t.over_admitted += 1;
                                }
                            }
                            snap.running.push(reserve);
                            let cap = if mode == Mode::Oracle {
                                None
                            } else {
                                policy
                                    .admitted(&snap.runs, kind, &l.project, estimate_usd)
                                    .cap_usd
                            };
                            (reserve, cap)
                        }
                        Decision::Wait { .. } if mode == Mode::NoPacking => break,
                        Decision::Wait { .. } => continue,
                    }
                }
            };
            if mode == Mode::Policy && std::env::var_os("NIGHT_DEBUG").is_some() {
                // How near the threshold each admission was: what a tail-aware rule near it
                // could have changed.
                eprintln!(
                    "policy min {now}: start {} step {} ({:?}) of ${:.2}, claimed ${:.2}; window ${:.2}, running {}",
                    l.project,
                    l.next,
                    kind,
                    l.steps[l.next].cost,
                    estimate.estimate_usd,
                    ledger.sum,
                    slots - free
                );
            }
            busy_projects.push(l.project.clone());
            l.running = Some(Running {
                started: now,
                reserve: estimate,
                cap,
                charged: 0.0,
            });
            free -= 1;
        }
    }
    t.observations = u32::try_from(sizes.len()).unwrap_or(u32::MAX);
    t.proposal = proposal.map_or(0.0, |c| c.proposed_usd);
    if (t.proposal - real).abs() > 0.1 * real {
        t.unsettled = t.observations;
    }
    // Work in flight at dawn counts pro rata (for every policy alike).
    // What a cut step's resumed session kept is work too (it is not counted as waste).
    for l in &lines {
        if l.kept >= 0.0 {
            t.work += l.kept;
        } else {
            // A resume dearer than the cut spend (`--resume-keeps` below 0) was counted as
            // waste when the cut came; what of it was never spent comes off again.
            t.wasted += l.kept;
        }
        if let Some(r) = &l.running {
            t.work += r.charged;
        }
    }
    t
}
