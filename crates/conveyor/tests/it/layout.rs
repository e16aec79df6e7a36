//! The module layout the daemon's code keeps (issue 10): every SQL statement lives under
//! `src/store/`, and the shared state imports none of the modules that assemble the daemon,
//! so no import circle runs through it. Read from the sources, production code only (what
//! follows a file's `#[cfg(test)]` is left out).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn sources() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut out);
    out.sort();
    out
}

/// The file's code before its tests (a `tests.rs` beside a module is all tests).
fn production(path: &Path) -> String {
    if path.file_name().is_some_and(|n| n == "tests.rs") {
        return String::new();
    }
    let text = std::fs::read_to_string(path).unwrap();
    match text.find("#[cfg(test)]") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// The top-level module a source file belongs to (`src/line/step.rs` → `line`).
fn module(path: &Path) -> String {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let rel = path.strip_prefix(&src).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// Which top-level modules each module names (`crate::x`, `use crate::{x, …}`).
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in sources() {
        let m = module(&path);
        if m == "lib" || m == "main" {
            continue;
        }
        let code = production(&path);
        let mut named = BTreeSet::new();
        for (i, _) in code.match_indices("crate::") {
            let rest = &code[i + "crate::".len()..];
            if let Some(list) = rest.strip_prefix('{') {
                let list = &list[..list.find('}').unwrap_or(list.len())];
                for item in list.split(',') {
                    named.insert(item.trim().split("::").next().unwrap_or("").to_string());
                }
            } else {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                named.insert(name);
            }
        }
        let entry = graph.entry(m.clone()).or_default();
        entry.extend(named.into_iter().filter(|n| !n.is_empty() && *n != m));
    }
    let known: BTreeSet<String> = graph.keys().cloned().collect();
    for deps in graph.values_mut() {
        deps.retain(|d| known.contains(d));
    }
    graph
}

fn reachable(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from.to_string()];
    while let Some(m) = todo.pop() {
        for d in graph.get(&m).into_iter().flatten() {
            if seen.insert(d.clone()) {
                todo.push(d.clone());
            }
        }
    }
    seen
}

#[test]
fn no_sql_outside_the_store() {
    let outside: Vec<String> = sources()
        .into_iter()
        .filter(|p| module(p) != "store")
        .filter(|p| std::fs::read_to_string(p).unwrap().contains("sqlx::query"))
        .map(|p| p.display().to_string())
        .collect();
    assert!(outside.is_empty(), "SQL outside src/store: {outside:?}");
}

#[test]
fn the_state_module_reaches_none_of_the_modules_that_assemble_the_daemon() {
    let graph = imports();
    assert!(graph.contains_key("state"), "{graph:?}");
    let from_state = reachable(&graph, "state");
    for m in ["api", "scheduler", "recovery", "daemon", "line", "state"] {
        assert!(
            !from_state.contains(m),
            "state reaches {m} (so an import circle can run through it): {from_state:?}"
        );
    }
    // And the daemon's own modules form no circle at all.
    for m in graph.keys() {
        assert!(
            !reachable(&graph, m).contains(m),
            "{m} is in an import circle: {graph:?}"
        );
    }
}
