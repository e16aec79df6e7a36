//! Work over a list of files on every core: the index's stats, its folder checks and FIND's
//! reads, each thread with its own scratch state, the results back in the list's order.

use std::io::Read as _;
use std::num::NonZeroUsize;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Threads for work over a list: every core, as ripgrep (which caps at 12).
fn threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, NonZeroUsize::get)
        .min(12)
}

/// Runs `f` over `items` on all cores, `chunk` items at a time handed out in order; returns
/// the `Some` results with their item's position, in item order. `make` builds each thread's
/// scratch state.
pub(crate) fn par_map<T, S, R>(
    items: &[T],
    chunk: usize,
    make: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, usize, &T) -> Option<R> + Sync,
) -> Vec<(usize, R)>
where
    T: Sync,
    R: Send,
{
    let next = AtomicUsize::new(0);
    let work = || {
        let mut state = make();
        let mut out = Vec::new();
        loop {
            let start = next.fetch_add(chunk, Ordering::Relaxed);
            if start >= items.len() {
                return out;
            }
            let end = (start + chunk).min(items.len());
            for (i, item) in items[start..end].iter().enumerate() {
                if let Some(r) = f(&mut state, start + i, item) {
                    out.push((start + i, r));
                }
            }
        }
    };
    let n = threads().min(items.len().div_ceil(chunk.max(1))).max(1);
    let mut parts: Vec<Vec<(usize, R)>> = if n == 1 {
        vec![work()]
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..n).map(|_| s.spawn(work)).collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        })
    };
    let mut all: Vec<(usize, R)> = Vec::with_capacity(parts.iter().map(Vec::len).sum());
    for p in &mut parts {
        all.append(p);
    }
    all.sort_unstable_by_key(|(i, _)| *i);
    all
}

/// What a thread's read buffer starts at: most source files fit, so they take one read and a
/// second that sees the end.
const FIRST_BUF: usize = 64 * 1024;

/// Reads a whole file into `buf` (kept by the caller across files, so it is allocated once
/// per thread and grows to the largest file, not per file) and returns its length. Without
/// asking the file its size: std's `read_to_end` would (a `statx` per file), and the index
/// holds no sizes (see `index::files`). A file that grew or shrank since the walk is read as
/// it is now; the bytes past the returned length are another file's and must not be looked at.
pub(crate) fn read_into(path: &Path, buf: &mut Vec<u8>) -> std::io::Result<usize> {
    let mut file = std::fs::File::open(path)?;
    if buf.len() < FIRST_BUF {
        buf.resize(FIRST_BUF, 0);
    }
    let mut filled = 0;
    loop {
        if filled == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        match file.read(&mut buf[filled..]) {
            Ok(0) => return Ok(filled),
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn par_map_keeps_the_item_order() {
        let items: Vec<usize> = (0..1000).collect();
        let out = par_map(
            &items,
            7,
            || 0usize,
            |seen, i, x| {
                *seen += 1;
                (x % 3 == 0).then_some(i * 2)
            },
        );
        let want: Vec<(usize, usize)> = (0..1000)
            .filter(|x| x % 3 == 0)
            .map(|i| (i, i * 2))
            .collect();
        assert_eq!(out, want);
    }

    #[test]
    fn read_into_reads_whole_files_of_any_size_with_one_buffer() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let mut buf = Vec::new();
        // Past the first buffer, and past twice it: the buffer grows while reading.
        let big: Vec<u8> = (0..3 * FIRST_BUF + 7).map(|i| (i % 251) as u8).collect();
        fs::write(&p, &big).unwrap();
        let n = read_into(&p, &mut buf).unwrap();
        assert_eq!(&buf[..n], &big[..]);
        // Exactly the buffer's length: the end is seen by a read of nothing.
        let exact = vec![b'e'; buf.len()];
        fs::write(&p, &exact).unwrap();
        let n = read_into(&p, &mut buf).unwrap();
        assert_eq!(&buf[..n], &exact[..]);
        fs::write(&p, "bc").unwrap();
        let n = read_into(&p, &mut buf).unwrap();
        assert_eq!(&buf[..n], b"bc");
        fs::write(&p, "").unwrap();
        assert_eq!(read_into(&p, &mut buf).unwrap(), 0);
        assert!(read_into(&d.path().join("gone"), &mut buf).is_err());
    }
}
