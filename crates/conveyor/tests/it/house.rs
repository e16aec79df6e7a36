//! The house every crate of the workspace keeps (issue 33): no import circle between the files
//! of a crate (a folder's `mod.rs` is its door: what lies behind it does not import back
//! through it), and no source file longer than [`MAX_LINES`] (tests aside), examples and the
//! app's front end included. Read from the
//! sources, production code only (what follows a file's `#[cfg(test)]` is left out, and so
//! are comments).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The longest a source file may be: past ~500 lines only when splitting would scatter one
/// concept, never past this.
const MAX_LINES: usize = 600;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every library crate's `src` folder: `crates/*/src` and the app's `src-tauri/src`.
fn crate_roots() -> Vec<PathBuf> {
    let ws = workspace();
    let mut out: Vec<PathBuf> = std::fs::read_dir(ws.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path().join("src"))
        .filter(|p| p.join("lib.rs").is_file())
        .collect();
    out.push(ws.join("src-tauri/src"));
    out.sort();
    out
}

fn files_under(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files_under(&p, exts, out);
        } else if p.extension().is_some_and(|x| exts.iter().any(|e| x == *e)) {
            out.push(p);
        }
    }
}

/// A file's module path inside its crate: `src/line/judge/run.rs` → `line::judge::run`,
/// `src/line/mod.rs` → `line`, `src/lib.rs` → the root (empty).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// The file's code before its tests, without comments (a `tests.rs` beside a module is all
/// tests).
fn production(file: &Path) -> String {
    if file.file_name().is_some_and(|n| n == "tests.rs") {
        return String::new();
    }
    let text = std::fs::read_to_string(file).unwrap();
    let code = match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => &text[..],
    };
    code.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e` (a `self` in a group is its prefix).
fn expand(tree: &str, prefix: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let head = tree[..open].trim().trim_end_matches("::");
        let close = tree.rfind('}').unwrap_or(tree.len());
        let inner = &tree[open + 1..close];
        let base = join(prefix, head);
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&inner[start..i], &base, out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand(&inner[start..], &base, out);
    } else if !tree.is_empty() {
        let path = tree.split(" as ").next().unwrap_or(tree).trim();
        if path == "self" {
            out.push(prefix.to_string());
        } else {
            out.push(join(prefix, path));
        }
    }
}

fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a}::{b}"),
    }
}

/// Every path the code names: its `use` declarations expanded, and every other `crate::…`,
/// `super::…` and `self::…` path in it.
fn paths_named(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    // `use` declarations (they may span lines and carry groups).
    while let Some(i) = find_word(rest, "use") {
        let after = &rest[i + 3..];
        let end = after.find(';').unwrap_or(after.len());
        expand(&after[..end], "", &mut out);
        rest = &after[end..];
    }
    for start in ["crate::", "super::", "self::"] {
        for (i, _) in code.match_indices(start) {
            let before = code[..i].chars().next_back();
            if before.is_some_and(|c| ident_char(c) || c == ':') {
                continue;
            }
            let path: String = code[i..]
                .chars()
                .take_while(|c| ident_char(*c) || *c == ':')
                .collect();
            out.push(path.trim_end_matches(':').to_string());
        }
    }
    out
}

/// The next `word` standing alone as a statement's first word (`use`, `pub use`,
/// `pub(crate) use`).
fn find_word(text: &str, word: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(j) = text[from..].find(word) {
        let i = from + j;
        let before = text[..i].trim_end();
        let after = text[i + word.len()..].chars().next();
        let starts = before.is_empty()
            || before.ends_with(';')
            || before.ends_with('}')
            || before.ends_with('{')
            || before.ends_with("pub")
            || before.ends_with(')');
        let stands = !text[..i].chars().next_back().is_some_and(ident_char)
            && after.is_some_and(char::is_whitespace);
        if starts && stands {
            return Some(i);
        }
        from = i + word.len();
    }
    None
}

/// One crate's files and the files each imports.
struct Crate {
    files: BTreeMap<Vec<String>, PathBuf>,
    /// What each module re-exports or imports by name: `name` → the path it stands for.
    names: BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>>,
    paths: BTreeMap<Vec<String>, Vec<Vec<String>>>,
}

impl Crate {
    fn read(src: &Path) -> Crate {
        let mut list = Vec::new();
        files_under(src, &["rs"], &mut list);
        let mut c = Crate {
            files: BTreeMap::new(),
            names: BTreeMap::new(),
            paths: BTreeMap::new(),
        };
        for f in list {
            // A binary's root is a crate of its own; a folder of binaries too.
            let rel = f.strip_prefix(src).unwrap();
            if rel == Path::new("main.rs") || rel.starts_with("bin") {
                continue;
            }
            let m = module_of(src, &f);
            let code = production(&f);
            let mut names = BTreeMap::new();
            let mut paths = Vec::new();
            for p in paths_named(&code) {
                let Some(abs) = absolute(&m, &p) else {
                    continue;
                };
                if let Some(last) = abs.last()
                    && last != "*"
                {
                    names.insert(last.clone(), abs.clone());
                }
                paths.push(abs);
            }
            c.names.insert(m.clone(), names);
            c.paths.insert(m.clone(), paths);
            c.files.insert(m, f);
        }
        c
    }

    /// The file a path lands in: the longest prefix that is a file, followed through what
    /// that file imports or re-exports under the next name when the file is the door of the
    /// importing one (its folder's `mod.rs`, or the crate's `lib.rs`).
    fn file_of(&self, from: &[String], path: &[String], depth: usize) -> Option<Vec<String>> {
        let n = (0..=path.len())
            .rev()
            .find(|n| self.files.contains_key(&path[..*n]))?;
        let file = path[..n].to_vec();
        let door = from.starts_with(&file) && from != file.as_slice();
        if door && depth < 8 {
            let next = path.get(n)?;
            let target = self.names.get(&file)?.get(next)?;
            let mut whole = target.clone();
            whole.extend_from_slice(&path[n + 1..]);
            if whole.first().is_some_and(|s| s == "@extern") {
                return None;
            }
            return self.file_of(from, &whole, depth + 1);
        }
        Some(file)
    }

    fn graph(&self) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
        let mut g = BTreeMap::new();
        for (m, paths) in &self.paths {
            let mut to = BTreeSet::new();
            for p in paths {
                if let Some(f) = self.file_of(m, p, 0)
                    && &f != m
                {
                    to.insert(f);
                }
            }
            g.insert(m.clone(), to);
        }
        g
    }
}

/// A path named in module `m` made absolute (segments from the crate root); a path into
/// another crate is `@extern`.
fn absolute(m: &[String], path: &str) -> Option<Vec<String>> {
    let mut segs = path.split("::").filter(|s| !s.is_empty()).peekable();
    let mut out: Vec<String> = match segs.peek().copied() {
        Some("crate") => {
            segs.next();
            Vec::new()
        }
        Some("super" | "self") => m.to_vec(),
        // A name a sibling `use` brought in or another crate: neither is a file of this one,
        // except the first segment of a relative `use` (`use step::run_step` in a `mod.rs`).
        Some(first) => {
            let mut child = m.to_vec();
            child.push(first.to_string());
            return Some(if first.chars().next()?.is_lowercase() {
                child.extend(segs.skip(1).map(str::to_string));
                child
            } else {
                vec!["@extern".to_string()]
            });
        }
        None => return None,
    };
    for s in segs {
        match s {
            "super" => {
                out.pop();
            }
            "self" => {}
            s => out.push(s.to_string()),
        }
    }
    Some(out)
}

/// The circles of a graph (Tarjan's strongly connected components of more than one file).
fn circles(g: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<Vec<String>>> {
    struct T<'a> {
        g: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'a Vec<String>, usize>,
        low: BTreeMap<&'a Vec<String>, usize>,
        stack: Vec<&'a Vec<String>>,
        on: BTreeSet<&'a Vec<String>>,
        out: Vec<Vec<Vec<String>>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a Vec<String>) {
        let i = t.index.len();
        t.index.insert(v, i);
        t.low.insert(v, i);
        t.stack.push(v);
        t.on.insert(v);
        for w in t.g.get(v).into_iter().flatten() {
            let Some((w, _)) = t.g.get_key_value(w) else {
                continue;
            };
            if !t.index.contains_key(w) {
                visit(t, w);
                let l = t.low[v].min(t.low[w]);
                t.low.insert(v, l);
            } else if t.on.contains(w) {
                let l = t.low[v].min(t.index[w]);
                t.low.insert(v, l);
            }
        }
        if t.low[v] == t.index[v] {
            let mut c = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                c.push(w.clone());
                if w == v {
                    break;
                }
            }
            if c.len() > 1 {
                t.out.push(c);
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}

#[test]
fn no_crate_has_an_import_circle_between_its_files() {
    let mut found = Vec::new();
    for src in crate_roots() {
        let c = Crate::read(&src);
        let g = c.graph();
        let name = |m: &Vec<String>| {
            let f = &c.files[m];
            f.strip_prefix(workspace())
                .unwrap_or(f)
                .display()
                .to_string()
        };
        for circle in circles(&g) {
            // Each file of the circle with the files of it that it imports.
            let ties: Vec<String> = circle
                .iter()
                .map(|m| {
                    let to: Vec<String> = g[m]
                        .iter()
                        .filter(|t| circle.contains(t))
                        .map(name)
                        .collect();
                    format!("{} -> {}", name(m), to.join(", "))
                })
                .collect();
            found.push(ties);
        }
    }
    assert!(found.is_empty(), "import circles: {found:#?}");
}

#[test]
fn no_source_file_is_over_the_limit() {
    let ws = workspace();
    let mut files = Vec::new();
    for src in crate_roots() {
        files_under(&src, &["rs"], &mut files);
    }
    for dir in std::fs::read_dir(ws.join("crates")).unwrap() {
        let examples = dir.unwrap().path().join("examples");
        if examples.is_dir() {
            files_under(&examples, &["rs"], &mut files);
        }
    }
    files_under(&ws.join("ui/src"), &["ts", "svelte"], &mut files);
    let long: Vec<String> = files
        .into_iter()
        .filter(|f| {
            let name = f.file_name().unwrap().to_string_lossy();
            // Tests aside, and what a generator writes.
            !(name == "tests.rs" || name.contains(".test.") || f.iter().any(|c| c == "generated"))
        })
        .filter_map(|f| {
            let n = std::fs::read_to_string(&f).unwrap().lines().count();
            (n > MAX_LINES)
                .then(|| format!("{} ({n} lines)", f.strip_prefix(&ws).unwrap().display()))
        })
        .collect();
    assert!(long.is_empty(), "over {MAX_LINES} lines: {long:#?}");
}

#[test]
fn the_reader_sees_a_circle_and_a_door() {
    // The reader itself: a `use` group expands, `super` climbs, and a child that imports
    // through its folder's door lands in the file the door names.
    let mut v = Vec::new();
    expand("crate::{a, b::{c, d as e}, f::{self}}", "", &mut v);
    assert_eq!(v, ["crate::a", "crate::b::c", "crate::b::d", "crate::f"]);
    let m = vec!["line".to_string(), "judge".to_string(), "run".to_string()];
    assert_eq!(
        absolute(&m, "super::super::facts::open").unwrap(),
        ["line", "facts", "open"]
    );
    let g: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = [
        (vec!["a".to_string()], [vec!["b".to_string()]].into()),
        (vec!["b".to_string()], [vec!["a".to_string()]].into()),
        (vec!["c".to_string()], [vec!["a".to_string()]].into()),
    ]
    .into();
    assert_eq!(circles(&g).len(), 1);
}

#[test]
fn the_policy_core_pulls_in_no_runtime_database_server_git_or_http() {
    // `cargo tree` of the core's normal dependencies, as a reader would run it.
    let out = std::process::Command::new(env!("CARGO"))
        .args(["tree", "-p", "conveyor-core", "-e", "normal"])
        .args(["--prefix", "none", "--format", "{p}"])
        .current_dir(workspace())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8_lossy(&out.stdout);
    let names: BTreeSet<&str> = tree.lines().filter_map(|l| l.split(' ').next()).collect();
    assert!(names.contains("conveyor-core"), "{tree}");
    let pulled: Vec<&str> = ["tokio", "sqlx", "axum", "git2", "reqwest", "hyper", "rmcp"]
        .into_iter()
        .filter(|b| names.contains(b))
        .collect();
    assert!(
        pulled.is_empty(),
        "conveyor-core depends on {pulled:?}:\n{tree}"
    );
}
