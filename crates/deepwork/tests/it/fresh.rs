//! One index per run, kept fresh: files created or deleted while the model thinks are seen by
//! the next LIST and FIND, through the real binary and the fake bridge.

use serde_json::json;

use crate::support::*;

#[test]
fn list_and_find_see_files_created_and_deleted_while_the_model_thinks() {
    let p = Project::named("мой проект #1");
    p.write("src/old.rs", "// needle in the old file\n")
        .write("src/keep.rs", "// nothing here\n")
        .write("README.md", "# readme\n");
    // Call 1 answers only once the test has edited the folder: the run has built its index
    // (the first message is on its way) and must notice the edit before it runs the requests.
    let b = Bridge::new(json!([
        {"answer": "=== LIST: **/*.rs ===\n=== FIND: needle ===", "wait_for": "edited"},
        {"answer": "Done."}
    ]));
    let dw = deepwork()
        .dir(&p)
        .bridge(&b)
        .arg("--json")
        .arg("where is the needle?");
    let run = std::thread::spawn(move || dw.run());
    wait_until(RUN_DEADLINE, "the first bridge call", || {
        !b.calls().is_empty()
    });
    p.write("src/new dir/новый.rs", "// needle in a new folder\n")
        .write("src/added.rs", "// needle added\n");
    std::fs::remove_file(p.path("src/old.rs")).unwrap();
    std::fs::write(b.dir().join("edited"), "").unwrap();
    let out = run.join().unwrap();
    out.expect_code(0);

    let inputs = b.inputs();
    assert_contains(&inputs[0], "old.rs");
    assert_not_contains(&inputs[0], "added.rs");
    let second = &inputs[1];
    assert_contains(
        second,
        "[LIST **/*.rs]\nsrc/added.rs\nsrc/keep.rs\nsrc/new dir/новый.rs\n",
    );
    assert_contains(
        second,
        "[FIND needle]\nsrc/added.rs:1: // needle added\nsrc/new dir/новый.rs:1: // needle in a new folder\n",
    );
    assert_not_contains(second, "old.rs");
    let v = out.json();
    let reqs = requests(&steps(&v)[0]);
    assert_eq!(reqs[0]["hits"], 3, "{v:#}");
    assert_eq!(reqs[1]["hits"], 2, "{v:#}");
}
