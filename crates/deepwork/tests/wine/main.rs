//! deepwork.exe under Wine: what only Windows does to paths, links, batch files and process
//! trees. Every test runs the Windows build against real folders here, through Wine, with
//! `tests/fixtures/windows/fake-bridge.rs` (built for Windows) standing where `node` stands.
//!
//! These tests are ignored in the ordinary run: `scripts/test-windows.sh` builds what they need
//! and runs them (`--run-ignored only`), as the `windows` phase of `scripts/test.sh` does.
//! They drive Wine from a Linux host, so the file is Linux-only.
#![cfg(target_os = "linux")]

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;

/// How long one run under Wine may take (Wine's own start is a second or two on a busy machine).
const RUN_DEADLINE: Duration = Duration::from_secs(120);

fn var(name: &str) -> PathBuf {
    let v = std::env::var_os(name).unwrap_or_else(|| {
        panic!("{name} is not set: run these tests through scripts/test-windows.sh")
    });
    let p = PathBuf::from(v);
    assert!(p.is_file(), "{name}: {} is not a file", p.display());
    p
}

/// A path here as Wine's programs see it: the `Z:` drive is the Unix root.
fn win(p: &Path) -> String {
    let s = p.to_str().expect("test paths are UTF-8");
    assert!(s.starts_with('/'), "not absolute: {s}");
    format!("Z:{}", s.replace('/', "\\"))
}

fn write(path: &Path, content: impl AsRef<[u8]>) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, content).unwrap();
}

/// A temp folder holding the project (`root`, named as the test likes), the bridge's folder and
/// whatever lies outside the project.
struct World {
    tmp: TempDir,
    root: PathBuf,
    bridge_dir: PathBuf,
    outside: PathBuf,
}

impl World {
    fn new(project: &str) -> World {
        let tmp = tempfile::Builder::new()
            .prefix("dw-wine")
            .tempdir()
            .unwrap();
        let root = tmp.path().join(project);
        let bridge_dir = tmp.path().join("bridge");
        let outside = tmp.path().join("outside");
        for d in [&root, &bridge_dir, &outside] {
            fs::create_dir_all(d).unwrap();
        }
        World {
            tmp,
            root,
            bridge_dir,
            outside,
        }
    }

    fn file(&self, rel: &str, content: impl AsRef<[u8]>) -> &World {
        write(&self.root.join(rel), content);
        self
    }

    /// The answers of the bridge's calls 1, 2, ...
    fn answers(&self, answers: &[&str]) -> &World {
        for (i, a) in answers.iter().enumerate() {
            write(&self.bridge_dir.join(format!("answer{}.txt", i + 1)), a);
        }
        self
    }

    /// The bridge's calls so far: `{"call", "argv", "input"}`.
    fn calls(&self) -> Vec<Value> {
        fs::read_to_string(self.bridge_dir.join("calls.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn input(&self, call: usize) -> String {
        let calls = self.calls();
        assert!(
            calls.len() >= call,
            "only {} calls: {calls:#?}",
            calls.len()
        );
        calls[call - 1]["input"].as_str().unwrap().to_owned()
    }

    /// `deepwork.exe --dir <project> --bridge <ask.mjs> --config <cfg>` with `node` in the
    /// config set to `node` (the fake bridge itself unless a test gives a launcher).
    fn run(&self, config: Value, args: &[&str]) -> Out {
        self.run_with(None, config, args)
    }

    fn run_with(&self, script: Option<&Path>, mut config: Value, args: &[&str]) -> Out {
        let script = script.map_or_else(|| self.bridge_dir.join("ask.mjs"), Path::to_path_buf);
        if !script.exists() {
            write(
                &script,
                "// never run: the fake bridge only checks it is there\n",
            );
        }
        if config.get("node").is_none() {
            config["node"] = json!(win(&var("DEEPWORK_WINE_BRIDGE")));
        }
        let cfg = self.tmp.path().join("config.json");
        write(&cfg, serde_json::to_vec_pretty(&config).unwrap());
        let mut all: Vec<OsString> = vec![
            "--config".into(),
            win(&cfg).into(),
            "--dir".into(),
            win(&self.root).into(),
            "--bridge".into(),
            win(&script).into(),
        ];
        all.extend(args.iter().map(OsString::from));
        run_wine(&all, &[("FAKE_BRIDGE_DIR", win(&self.bridge_dir))])
    }
}

#[derive(Debug)]
struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

impl Out {
    fn expect_code(&self, code: i32) -> &Out {
        assert_eq!(
            self.code,
            Some(code),
            "exit code\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout,
            self.stderr
        );
        self
    }
}

/// `wine deepwork.exe ARGS` with its own HOME and APPDATA, and no proxy from our environment.
fn run_wine(args: &[OsString], env: &[(&str, String)]) -> Out {
    let exe = var("DEEPWORK_WINE_EXE");
    let home = tempfile::Builder::new()
        .prefix("dw-wine-home")
        .tempdir()
        .unwrap();
    // Output goes to files, not pipes: a Windows service Wine starts on the way (winedevice.exe,
    // kept by a persistent wineserver) inherits the run's handles, and a pipe would then never
    // reach its end; a file is read once deepwork.exe itself has ended.
    let out_file = home.path().join("stdout");
    let err_file = home.path().join("stderr");
    let mut cmd = Command::new("wine");
    cmd.arg(&exe)
        .args(args)
        .env("WINEDEBUG", "-all")
        .env("APPDATA", win(&home.path().join("appdata")))
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(fs::File::create(&out_file).unwrap())
        .stderr(fs::File::create(&err_file).unwrap());
    for k in [
        "http_proxy",
        "https_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "all_proxy",
        "ALL_PROXY",
    ] {
        cmd.env_remove(k);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let start = Instant::now();
    let mut child = cmd.spawn().expect("start wine (is it installed?)");
    let (tx, rx) = mpsc::channel();
    let waiter = thread::spawn(move || {
        let status = child.wait();
        let _ = tx.send(());
        status
    });
    if rx.recv_timeout(RUN_DEADLINE).is_err() {
        panic!("deepwork.exe under Wine ran past {RUN_DEADLINE:?}");
    }
    let status = waiter.join().unwrap().unwrap();
    let elapsed = start.elapsed();
    let read = |p: &Path| String::from_utf8_lossy(&fs::read(p).unwrap()).into_owned();
    Out {
        code: status.code(),
        stdout: read(&out_file),
        stderr: read(&err_file),
        elapsed,
    }
}

fn assert_contains(hay: &str, needle: &str) {
    assert!(hay.contains(needle), "{needle:?} not in:\n{hay}");
}

fn assert_lacks(hay: &str, needle: &str) {
    assert!(!hay.contains(needle), "{needle:?} must not be in:\n{hay}");
}

// ---------------------------------------------------------------------------------------------

/// Issue 39: Wine shows a Unix symlink as the folder or file it points to. LIST, FIND and NEED
/// must all refuse what lies outside the project, through a linked folder or a linked file, as
/// they do on Linux, and the walk follows no link inside either. (A junction under Wine is such a symlink too; Wine 8's `mklink /J` cannot
/// make one, so none is made here.)
#[test]
#[ignore = "runs deepwork.exe under Wine: scripts/test-windows.sh"]
fn links_out_of_the_project_are_refused_by_every_request_kind() {
    let w = World::new("proj");
    w.file("src/a.txt", "INSIDE-1\n");
    write(&w.outside.join("secret.txt"), "SECRET-TOKEN-42\n");
    write(&w.outside.join("deeper/more.txt"), "SECRET-TOKEN-43\n");
    std::os::unix::fs::symlink(&w.outside, w.root.join("linked")).unwrap();
    std::os::unix::fs::symlink(w.outside.join("secret.txt"), w.root.join("filelink.txt")).unwrap();
    std::os::unix::fs::symlink(&w.outside, w.root.join("src/nested")).unwrap();
    // Links inside: not followed either, as on Linux (a loop back to the root would never end).
    std::os::unix::fs::symlink(&w.root, w.root.join("src/loop")).unwrap();
    std::os::unix::fs::symlink(w.root.join("src"), w.root.join("alias")).unwrap();
    w.answers(&[
        "=== LIST: **/* ===\n=== FIND: SECRET-TOKEN ===\n=== FIND: INSIDE ===\n=== NEED: linked/secret.txt, filelink.txt, src/nested/deeper/more.txt ===\n",
        "done",
    ]);
    w.run(json!({}), &["q"]).expect_code(0);
    let first = w.input(1);
    assert_lacks(&first, "secret.txt");
    assert_lacks(&first, "filelink.txt");
    let second = w.input(2);
    assert_lacks(&second, "SECRET-TOKEN-4");
    assert_contains(&second, "[LIST **/*]\nsrc/a.txt\n\n");
    assert_contains(&second, "[FIND SECRET-TOKEN]\nno hits for: SECRET-TOKEN\n");
    assert_contains(&second, "src/a.txt:1: INSIDE-1");
    for p in [
        "linked/secret.txt",
        "filelink.txt",
        "src/nested/deeper/more.txt",
    ] {
        assert_contains(
            &second,
            &format!("refused: {p}: symlink resolves outside the project folder"),
        );
    }
}

/// What is absolute on Windows is refused wherever it points, the project included; a relative
/// path spelled with backslashes is read.
#[test]
#[ignore = "runs deepwork.exe under Wine: scripts/test-windows.sh"]
fn drive_letters_and_unc_paths_are_refused_backslashes_accepted() {
    let w = World::new("proj");
    w.file("src/a.txt", "INSIDE-2\n");
    write(&w.outside.join("secret.txt"), "SECRET-TOKEN-44\n");
    let secret = win(&w.outside.join("secret.txt"));
    let inside = win(&w.root.join("src/a.txt"));
    let refused = [
        (secret.clone(), "absolute paths are not allowed"),
        (inside.clone(), "absolute paths are not allowed"),
        (format!("\\\\?\\{secret}"), "absolute paths are not allowed"),
        (
            "\\\\localhost\\c$\\windows\\win.ini".into(),
            "absolute paths are not allowed",
        ),
        (
            "//localhost/c$/windows/win.ini".into(),
            "absolute paths are not allowed",
        ),
        ("z:secret.txt".into(), "absolute paths are not allowed"),
        (
            "..\\outside\\secret.txt".into(),
            "path escapes the project folder",
        ),
        (
            "src\\..\\..\\outside\\secret.txt".into(),
            "path escapes the project folder",
        ),
    ];
    let mut need = String::new();
    for (p, _) in &refused {
        need.push_str(&format!("=== NEED: {p} ===\n"));
    }
    need.push_str("=== NEED: src\\a.txt ===\n");
    w.answers(&[&need, "done"]);
    w.run(json!({}), &["q"]).expect_code(0);
    let second = w.input(2);
    assert_lacks(&second, "SECRET-TOKEN-44");
    for (p, why) in &refused {
        assert_contains(&second, &format!("refused: {p}: {why}"));
    }
    assert_contains(&second, "INSIDE-2");
}

/// Cyrillic, spaces and `#` in the project's folder and in its files' names, through the tree,
/// LIST, FIND and NEED.
#[test]
#[ignore = "runs deepwork.exe under Wine: scripts/test-windows.sh"]
fn cyrillic_spaces_and_hash_in_names() {
    let w = World::new("мой проект #1");
    w.file("папка с пробелом/файл #2.txt", "СОДЕРЖИМОЕ-7\r\n");
    w.file("#Projects/ask.mjs", "// x\n");
    w.answers(&[
        "=== LIST: **/*.txt ===\n=== FIND: СОДЕРЖИМОЕ ===\n=== NEED: папка с пробелом/файл #2.txt ===\n",
        "готово",
    ]);
    let out = w.run(json!({}), &["что внутри?"]);
    out.expect_code(0);
    assert_contains(&out.stdout, "готово");
    let first = w.input(1);
    assert_contains(&first, "что внутри?");
    assert_contains(&first, "файл #2.txt");
    assert_contains(&first, "#Projects");
    let second = w.input(2);
    assert_contains(&second, "папка с пробелом/файл #2.txt\n");
    assert_contains(&second, "папка с пробелом/файл #2.txt:1: СОДЕРЖИМОЕ-7");
    assert_contains(&second, "СОДЕРЖИМОЕ-7\r\n");
}

/// Apply on Windows writes the answer's bytes: CRLF stays CRLF (no text-mode translation), and
/// the old version goes to backup/ byte for byte.
#[test]
#[ignore = "runs deepwork.exe under Wine: scripts/test-windows.sh"]
fn crlf_files_are_written_back_as_crlf() {
    let w = World::new("проект");
    let old = "OLD\r\n\tkeep\r\n";
    w.file("src/app.js", old);
    w.answers(&[
        "=== FILE: src/app.js ===\r\nNEW\r\n\tline 2\r\n=== END FILE ===\r\n=== FILE: новая папка/new file #3.txt ===\r\nA\r\nB\r\n=== END FILE ===\r\n",
        "unexpected second call",
    ]);
    let out = w.run(json!({}), &["--apply", "--json", "write it"]);
    out.expect_code(0);
    assert_eq!(w.calls().len(), 1);
    assert_eq!(
        fs::read(w.root.join("src/app.js")).unwrap(),
        b"NEW\r\n\tline 2\r\n"
    );
    assert_eq!(
        fs::read(w.root.join("новая папка/new file #3.txt")).unwrap(),
        b"A\r\nB\r\n"
    );
    let v: Value = serde_json::from_str(&out.stdout).expect("--json output");
    let f = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "src/app.js")
        .unwrap_or_else(|| panic!("src/app.js not in {v:#}"));
    assert_eq!(f["applied"], true, "{f:#}");
    let backup = f["backup"]
        .as_str()
        .unwrap_or_else(|| panic!("no backup: {f:#}"));
    let backup = backup.replace('\\', "/");
    assert_eq!(fs::read_to_string(w.root.join(&backup)).unwrap(), old);
}

/// Anton starts things with `.cmd` launchers: a `node` that is a batch file, in a folder with
/// Cyrillic, a space and `#`, is started through cmd.exe (Rust's std quotes its arguments by
/// cmd's rules since CVE-2024-24576) and gets every argument intact.
#[test]
#[ignore = "runs deepwork.exe under Wine: scripts/test-windows.sh"]
fn a_cmd_launcher_gets_its_arguments_intact() {
    let w = World::new("proj");
    w.file("a.txt", "A\n");
    let launcher_dir = w.tmp.path().join("мост #2 с пробелом");
    fs::create_dir_all(&launcher_dir).unwrap();
    fs::copy(
        var("DEEPWORK_WINE_BRIDGE"),
        launcher_dir.join("fake-bridge.exe"),
    )
    .unwrap();
    let launcher = launcher_dir.join("node.cmd");
    write(
        &launcher,
        "@echo off\r\n\"%~dp0fake-bridge.exe\" %*\r\nexit /b %errorlevel%\r\n",
    );
    let script = launcher_dir.join("ask bridge #1.mjs");
    w.answers(&["ответ через cmd"]);
    let out = w.run_with(
        Some(&script),
        json!({ "node": win(&launcher), "chat": "мой чат & echo INJECTED" }),
        &["q"],
    );
    out.expect_code(0);
    assert_contains(&out.stdout, "ответ через cmd");
    assert_lacks(&out.stdout, "INJECTED");
    let argv: Vec<String> = w.calls()[0]["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(argv[0], win(&script));
    assert_eq!(&argv[1..4], ["ask", "--chat", "мой чат & echo INJECTED"]);
}

/// A bridge that never answers is stopped at the timeout with everything it started: the job
/// object ends the grandchild too, which would otherwise hold the output pipes open forever.
#[test]
#[ignore = "runs deepwork.exe under Wine: scripts/test-windows.sh"]
fn a_hanging_bridge_is_stopped_with_its_whole_tree() {
    let w = World::new("proj");
    w.file("a.txt", "A\n");
    w.answers(&["never sent"]);
    write(&w.bridge_dir.join("hang1"), "");
    let out = w.run(json!({ "timeout_secs": 1 }), &["q"]);
    out.expect_code(3);
    assert!(
        out.elapsed < Duration::from_secs(60),
        "took {:?}",
        out.elapsed
    );
    assert_eq!(w.calls().len(), 1);
    // The grandchild's command line names the bridge's folder; wait for no process to have it.
    let marker = win(&w.bridge_dir);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = processes_naming(&marker);
        if left.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the bridge's tree is still running: {left:?}"
        );
        thread::sleep(Duration::from_millis(50));
    }
}

/// The command lines of this machine's processes that contain `needle` (Wine keeps a Windows
/// program's command line in its process's /proc entry).
fn processes_naming(needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(raw) = fs::read(e.path().join("cmdline")) {
            let line = String::from_utf8_lossy(&raw).replace('\0', " ");
            if line.contains(needle) && line.contains("fake-bridge") {
                out.push(line);
            }
        }
    }
    out
}
