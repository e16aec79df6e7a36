//! Cyrillic, spaces and '#' in folder and file names (Anton's `c:\мой\проект`, `C:/#Projects`).

use serde_json::json;

use crate::support::*;

#[test]
fn cyrillic_spaces_and_hash_in_names() {
    let p = Project::named("мой проект #1");
    let content = "КИРИЛЛИЦА-СОДЕРЖИМОЕ строка один\nвторая строка\n";
    p.write("файл с пробелом.txt", content)
        .write("папка #2/вложенный файл.md", "ВЛОЖЕННЫЙ\n");

    // The bridge itself lives in a folder like `C:/#Projects/ollama_orchestro`.
    let b = Bridge::new(json!([
        { "answer": "=== NEED: файл с пробелом.txt ===\n=== FIND: КИРИЛЛИЦА ===\n=== LIST: папка #2/*.md ===" },
        { "answer": "=== FILE: новая папка/ответ #2.txt ===\n```\nпривет, мир\n\tс табом\n```\n=== END FILE ===\nГотово." }
    ]));
    let bridge_copy = write(
        b.dir(),
        "#Projects/ollama orchestro/ask.mjs",
        std::fs::read(fake_bridge_path()).unwrap(),
    );

    let out = deepwork()
        .bridge_env(&b)
        .arg("--bridge")
        .arg(&bridge_copy)
        .dir(&p)
        .args([
            "--files",
            "файл с пробелом.txt",
            "--apply",
            "--json",
            "что в файле?",
        ])
        .run();
    out.expect_code(0);
    let v = out.json();
    assert_eq!(v["stop_reason"], "no_requests", "{v:#}");
    let hits: Vec<u64> = requests(&steps(&v)[0])
        .iter()
        .map(|r| r["hits"].as_u64().unwrap())
        .collect();
    assert_eq!(hits, [1, 1, 1], "{v:#}");

    let inputs = b.inputs();
    assert_eq!(inputs.len(), 2);
    let m1 = &inputs[0];
    assert_contains(m1, "файл с пробелом.txt");
    assert_contains(m1, "КИРИЛЛИЦА-СОДЕРЖИМОЕ строка один");
    assert!(m1.trim_end().ends_with("что в файле?"));
    let m2 = &inputs[1];
    assert_contains(m2, content);
    assert_contains(
        m2,
        "файл с пробелом.txt:1: КИРИЛЛИЦА-СОДЕРЖИМОЕ строка один",
    );
    assert_eq!(
        count_lines_eq(m2, "папка #2/вложенный файл.md"),
        1,
        "{}",
        clip(m2)
    );

    let f = file_entry(&v, "новая папка/ответ #2.txt");
    assert_eq!(f["applied"], true, "{f:#}");
    assert_eq!(
        p.read_string("новая папка/ответ #2.txt"),
        "привет, мир\n\tс табом\n"
    );
    assert_eq!(
        v["answer"].as_str().unwrap().lines().last().unwrap().trim(),
        "Готово."
    );
}

#[test]
fn backup_of_a_cyrillic_file() {
    let p = Project::named("мой проект #1");
    p.write("папка/старый файл.txt", "СТАРОЕ\n");
    let b = Bridge::answers(&["=== FILE: папка/старый файл.txt ===\nНОВОЕ\n=== END FILE ==="]);
    let out = deepwork()
        .dir(&p)
        .bridge(&b)
        .args(["--apply", "--json", "обнови"])
        .run();
    out.expect_code(0);
    let v = out.json();
    let f = file_entry(&v, "папка/старый файл.txt");
    let backup = f["backup"].as_str().unwrap_or_else(|| panic!("{f:#}"));
    assert!(is_backup_path(backup, "папка/старый файл.txt"), "{backup}");
    assert_eq!(p.read_string(backup), "СТАРОЕ\n");
    assert_eq!(p.read_string("папка/старый файл.txt"), "НОВОЕ\n");
}
