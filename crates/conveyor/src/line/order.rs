//! `PUT /api/lines/order`: queued lines put in an order in one transaction.
//!
//! The daemon's order is priority (higher first), then age (`created_at`), then id; the
//! scheduler, `GET /api/lines` and pult all use it. A reorder gives the listed lines priorities
//! under which that order lists them exactly as asked, **changing as few of their priorities
//! as it can**: a line whose priority already fits between its new neighbours keeps it, and a
//! line that has to change lands right beside its neighbour (the same priority when age breaks
//! the tie the right way, else one more or one less). The lines not listed keep their
//! priorities, so they keep their place relative to every listed line whose priority did not
//! change. When the list is a whole group — every queued line, as pult sends after a drag, or
//! every queued line of a project — its whole order is decided, whoever else exists.
//!
//! Only queued lines are reordered: a priority orders the wait for a slot, and a line that has
//! started holds its project already (a started line's priority can still be set with
//! `PATCH /api/lines/{id}`). Listing one is refused rather than silently reordering lines pult
//! shows in other groups.

use conveyor_api::{EventKind, LineState};

use crate::error::Result;
use crate::events::EventBody;
use crate::state::Shared;
use crate::store::{self, LineRow};

/// Why a reorder was refused; nothing was changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OrderRefused {
    /// An id is listed more than once.
    Duplicate(String),
    /// No line has these ids.
    Unknown(Vec<String>),
    /// These lines are not queued: (id, state).
    NotQueued(Vec<(String, LineState)>),
}

impl std::fmt::Display for OrderRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OrderRefused::Duplicate(id) => write!(
                f,
                "line {id} is listed more than once: each line has one place in the order"
            ),
            OrderRefused::Unknown(ids) => write!(f, "no line has the id {}", ids.join(", ")),
            OrderRefused::NotQueued(lines) => {
                let list: Vec<String> = lines
                    .iter()
                    .map(|(id, s)| format!("{id} ({})", s.as_str()))
                    .collect();
                write!(
                    f,
                    "only queued lines are reordered (a started line holds its project already; \
                     set its priority instead): {}",
                    list.join(", ")
                )
            }
        }
    }
}

/// Puts the queued lines `ids` in this order (first to start first) in one transaction, and
/// tells the daemon's listeners of every priority it changed. The lines, in that order, with
/// their new priorities.
///
/// # Errors
/// Database errors.
pub(crate) async fn reorder(
    sh: &Shared,
    ids: &[String],
) -> Result<std::result::Result<Vec<LineRow>, OrderRefused>> {
    let mut seen = std::collections::HashSet::new();
    if let Some(twice) = ids.iter().find(|id| !seen.insert(id.as_str())) {
        return Ok(Err(OrderRefused::Duplicate(twice.clone())));
    }
    // A writer's transaction from the start: no state changes between the check and the
    // update (the scheduler starting one of these lines, say).
    let mut tx = sh.store.begin().await?;
    let mut found = store::lines::get_many(&mut tx, ids).await?;
    let mut rows = Vec::with_capacity(ids.len());
    let mut unknown = Vec::new();
    for id in ids {
        match found.remove(id) {
            Some(row) => rows.push(row),
            None => unknown.push(id.clone()),
        }
    }
    if !unknown.is_empty() {
        return Ok(Err(OrderRefused::Unknown(unknown)));
    }
    let started: Vec<(String, LineState)> = rows
        .iter()
        .filter(|l| l.state != LineState::Queued)
        .map(|l| (l.id.clone(), l.state))
        .collect();
    if !started.is_empty() {
        return Ok(Err(OrderRefused::NotQueued(started)));
    }
    let keys: Vec<Key<'_>> = rows.iter().map(Key::of).collect();
    let wanted = priorities(&keys);
    let mut changed = Vec::new();
    for (row, p) in rows.iter_mut().zip(wanted) {
        if row.priority != i64::from(p) {
            store::lines::set_priority(&mut tx, &row.id, p).await?;
            row.priority = i64::from(p);
            changed.push((row.id.clone(), row.project_id.clone(), p));
        }
    }
    tx.commit().await?;
    for (id, project, p) in changed {
        sh.events.emit(
            EventKind::Line,
            EventBody {
                line_id: Some(id),
                project_id: Some(project),
                detail: Some(format!("priority {p} (reordered)")),
                ..EventBody::default()
            },
        );
    }
    sh.wake.notify_one();
    Ok(Ok(rows))
}

/// What places a line in the daemon's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Key<'a> {
    pub priority: i64,
    pub created_at: i64,
    pub id: &'a str,
}

impl<'a> Key<'a> {
    fn of(l: &'a LineRow) -> Key<'a> {
        Key {
            priority: l.priority,
            created_at: l.created_at,
            id: &l.id,
        }
    }

    /// Whether `self`'s age and id come before `other`'s: with equal priorities, `self` is
    /// listed first.
    fn older(&self, other: &Key<'_>) -> bool {
        (self.created_at, self.id) < (other.created_at, other.id)
    }

    /// Whether `self` comes before `other` in the daemon's order.
    fn before(&self, other: &Key<'_>) -> bool {
        self.priority > other.priority || (self.priority == other.priority && self.older(other))
    }
}

/// The priorities that make the daemon's order list `lines` exactly in the given order,
/// keeping as many of their priorities as can be kept (ties broken towards keeping the later
/// lines: a line dragged up is the one raised).
///
/// Kept lines are found as the longest chain in which each next kept line comes after the
/// one before even once the lines between them are put right under it: each of those takes
/// the priority of the line above it when it is younger (age breaks the tie), else one less.
/// Lines above the first kept line are put above it the same way, counting up from below.
pub(crate) fn priorities(lines: &[Key<'_>]) -> Vec<i32> {
    let n = lines.len();
    if n == 0 {
        return Vec::new();
    }
    // steps[t]: whether line t+1, put right under line t, needs one less (t older is false).
    let steps: Vec<i64> = lines
        .windows(2)
        .map(|w| i64::from(!w[0].older(&w[1])))
        .collect();
    // up[f]: how far above line f's priority line 0 ends when lines 0..f are put above it.
    let mut up = vec![0i64; n];
    for f in 1..n {
        up[f] = up[f - 1] + steps[f - 1];
    }
    let total = up[n - 1];
    let fits = |v: i64| (i64::from(i32::MIN)..=i64::from(i32::MAX)).contains(&v);
    // best[j]: the most lines kept with j kept last; prev[j]: the kept line before it.
    let mut best: Vec<Option<usize>> = vec![None; n];
    let mut prev: Vec<Option<usize>> = vec![None; n];
    for j in 0..n {
        if fits(lines[j].priority + up[j]) {
            best[j] = Some(1);
        }
    }
    for i in 0..n {
        let Some(b) = best[i] else { continue };
        // The lines after i put right under it, one by one: j may be kept after i when it
        // comes after the line above it as placed.
        let mut above = lines[i];
        for j in i + 1..n {
            if above.before(&lines[j]) && best[j].is_none_or(|have| b + 1 >= have) {
                best[j] = Some(b + 1);
                prev[j] = Some(i);
            }
            let placed = above.priority - steps[j - 1];
            above = Key {
                priority: placed,
                ..lines[j]
            };
        }
    }
    // The last kept line: the most kept, then the latest; the lines under it must fit too.
    let last = (0..n)
        .filter(|&l| fits(lines[l].priority - (total - up[l])))
        .filter_map(|l| best[l].map(|b| (b, l)))
        .max();
    let mut out = vec![0i64; n];
    let Some((_, last)) = last else {
        // Nothing can be kept within i32 (priorities at both ends of its range): count down
        // from zero.
        let mut v = total / 2;
        out[0] = v;
        for t in 1..n {
            v -= steps[t - 1];
            out[t] = v;
        }
        return out.into_iter().map(to_i32).collect();
    };
    let mut kept = vec![last];
    while let Some(p) = prev[*kept.last().expect("one kept")] {
        kept.push(p);
    }
    kept.reverse();
    let first = kept[0];
    for &k in &kept {
        out[k] = lines[k].priority;
    }
    // Above the first kept line, counting up from it.
    for t in (0..first).rev() {
        out[t] = out[t + 1] + steps[t];
    }
    // Under each kept line, down to the next kept one (or the end).
    for w in kept.windows(2).map(|w| (w[0], w[1])).chain([(last, n)]) {
        for t in w.0 + 1..w.1 {
            out[t] = out[t - 1] - steps[t - 1];
        }
    }
    out.into_iter().map(to_i32).collect()
}

fn to_i32(v: i64) -> i32 {
    i32::try_from(v).unwrap_or(if v < 0 { i32::MIN } else { i32::MAX })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines named by one letter, created in alphabetical order, with these priorities.
    fn keys(spec: &[(&'static str, i64)]) -> Vec<Key<'static>> {
        spec.iter()
            .map(|&(id, priority)| Key {
                priority,
                created_at: i64::from(id.as_bytes()[0]),
                id,
            })
            .collect()
    }

    /// The keys with these priorities, sorted in the daemon's order.
    fn sorted<'a>(ks: &[Key<'a>], ps: &[i32]) -> Vec<&'a str> {
        let mut placed: Vec<Key<'a>> = ks
            .iter()
            .zip(ps)
            .map(|(k, &p)| Key {
                priority: i64::from(p),
                ..*k
            })
            .collect();
        placed.sort_by(|a, b| {
            b.priority
                .cmp(&a.priority)
                .then((a.created_at, a.id).cmp(&(b.created_at, b.id)))
        });
        placed.iter().map(|k| k.id).collect()
    }

    /// Reorders to `order`, checks the result is that order, and answers the priorities.
    #[track_caller]
    fn reorder(spec: &[(&'static str, i64)]) -> Vec<i32> {
        let ks = keys(spec);
        let ps = priorities(&ks);
        let want: Vec<&str> = spec.iter().map(|s| s.0).collect();
        assert_eq!(sorted(&ks, &ps), want, "{ps:?}");
        ps
    }

    fn changed(spec: &[(&'static str, i64)], ps: &[i32]) -> usize {
        spec.iter()
            .zip(ps)
            .filter(|((_, p), q)| *p != i64::from(**q))
            .count()
    }

    #[test]
    fn an_order_already_kept_changes_nothing() {
        let spec = [("a", 5), ("b", 5), ("c", 0), ("d", -3)];
        assert_eq!(reorder(&spec), [5, 5, 0, -3]);
        assert_eq!(reorder(&[("a", 7)]), [7]);
        assert!(priorities(&[]).is_empty());
    }

    #[test]
    fn a_line_dragged_up_among_equal_priorities_is_the_one_raised() {
        // a, b, c, d all 0 (the default): d to the top.
        assert_eq!(
            reorder(&[("d", 0), ("a", 0), ("b", 0), ("c", 0)]),
            [1, 0, 0, 0]
        );
        // Two swapped: the one moved up is raised.
        assert_eq!(reorder(&[("b", 0), ("a", 0)]), [1, 0]);
    }

    #[test]
    fn a_line_dragged_down_is_lowered_and_the_younger_ones_after_it_follow() {
        // a to the bottom: only a changes.
        assert_eq!(
            reorder(&[("b", 0), ("c", 0), ("d", 0), ("a", 0)]),
            [0, 0, 0, -1]
        );
        // b below d: b gets -1, and e, younger than b, must stay under it.
        let spec = [("a", 0), ("c", 0), ("d", 0), ("b", 0), ("e", 0)];
        let ps = reorder(&spec);
        assert_eq!(changed(&spec, &ps), 2, "{ps:?}");
    }

    #[test]
    fn a_line_lands_between_neighbours_whose_priorities_leave_room() {
        // c (0) between a (10) and b (3): its own priority is too low, it takes 10 (younger
        // than a, so after it), the others keep theirs.
        assert_eq!(reorder(&[("a", 10), ("c", 0), ("b", 3)]), [10, 10, 3]);
        // A priority that already fits is kept.
        assert_eq!(reorder(&[("a", 10), ("c", 5), ("b", 3)]), [10, 5, 3]);
    }

    #[test]
    fn as_few_priorities_change_as_can() {
        // Reversing five lines of distinct priorities keeps one and moves four.
        let spec = [("e", 1), ("d", 2), ("c", 3), ("b", 4), ("a", 5)];
        let ps = reorder(&spec);
        assert_eq!(changed(&spec, &ps), 4, "{ps:?}");
        // Reordering among gaps: 40 and 10 stay, 30 and 20 are swapped by moving one.
        let spec = [("a", 40), ("c", 20), ("b", 30), ("d", 10)];
        let ps = reorder(&spec);
        assert_eq!(changed(&spec, &ps), 1, "{ps:?}");
    }

    #[test]
    fn the_ends_of_the_i32_range_are_kept_to() {
        let max = i64::from(i32::MAX);
        let min = i64::from(i32::MIN);
        // b (MIN) above a (MAX): nothing can be kept and counted past either end; count from 0.
        let ps = reorder(&[("b", min), ("a", max)]);
        assert!(ps.iter().all(|p| p.unsigned_abs() < 10), "{ps:?}");
        // c above a and b, all at MAX: c cannot go higher, so a and b go under it.
        let ps = reorder(&[("c", max), ("a", max), ("b", max)]);
        assert_eq!(ps[0], i32::MAX);
        let ps = reorder(&[("b", min), ("c", min), ("a", min)]);
        assert_eq!(ps[2], i32::MIN);
    }

    #[test]
    fn any_order_of_any_priorities_comes_out_as_asked() {
        // A small exhaustive-ish sweep: every permutation of four lines over a few priority
        // patterns, including ties and the ends of the range.
        let patterns: [[i64; 4]; 5] = [
            [0, 0, 0, 0],
            [3, 2, 1, 0],
            [0, 1, 0, 1],
            [i64::from(i32::MAX), 0, i64::from(i32::MIN), 0],
            [5, 5, -5, 100],
        ];
        let names = ["a", "b", "c", "d"];
        for pattern in patterns {
            let mut perm = [0usize, 1, 2, 3];
            loop {
                let spec: Vec<(&'static str, i64)> =
                    perm.iter().map(|&i| (names[i], pattern[i])).collect();
                reorder(&spec);
                if !next_permutation(&mut perm) {
                    break;
                }
            }
        }
    }

    #[test]
    fn no_other_priorities_change_fewer() {
        // Against a brute force over every priority in -5..=6 for four lines.
        let names = ["a", "b", "c", "d"];
        for pattern in [[0, 0, 0, 0], [3, 2, 1, 0], [0, 1, 0, 1], [2, 2, 0, 1]] {
            let mut perm = [0usize, 1, 2, 3];
            loop {
                let spec: Vec<(&'static str, i64)> =
                    perm.iter().map(|&i| (names[i], pattern[i])).collect();
                let ks = keys(&spec);
                let want: Vec<&str> = spec.iter().map(|s| s.0).collect();
                let mut fewest = usize::MAX;
                for code in 0..12usize.pow(4) {
                    let ps: Vec<i32> = (0..4)
                        .map(|t| (code / 12usize.pow(t)) % 12)
                        .map(|v| i32::try_from(v).unwrap() - 5)
                        .collect();
                    if sorted(&ks, &ps) == want {
                        fewest = fewest.min(changed(&spec, &ps));
                    }
                }
                assert_eq!(changed(&spec, &reorder(&spec)), fewest, "{spec:?}");
                if !next_permutation(&mut perm) {
                    break;
                }
            }
        }
    }

    fn next_permutation(a: &mut [usize]) -> bool {
        let Some(i) = (1..a.len()).rev().find(|&i| a[i - 1] < a[i]) else {
            return false;
        };
        let j = (i..a.len()).rev().find(|&j| a[j] > a[i - 1]).expect("one");
        a.swap(i - 1, j);
        a[i..].reverse();
        true
    }
}
