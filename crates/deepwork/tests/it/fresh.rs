//! One index per run, kept fresh: files created or deleted while the model thinks are seen by
//! the next LIST and FIND and named in the next message; a file NEEDed again is sent again only
//! if it changed. Through the real binary and the fake bridge.

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
    // The deleted file is named once, as removed from the tree of step 1, and found no more.
    assert_contains(
        second,
        "[files changed on disk since step 1]\nadded: src/added.rs\nadded: src/new dir/новый.rs\nremoved: src/old.rs\n",
    );
    assert_not_contains(second, "old.rs:");
    assert_not_contains(second, "src/old.rs\n[FIND");
    let v = out.json();
    let reqs = requests(&steps(&v)[0]);
    assert_eq!(reqs[0]["hits"], 3, "{v:#}");
    assert_eq!(reqs[1]["hits"], 2, "{v:#}");
}

/// A file NEEDed again is sent again only if it changed on disk since the step that sent it;
/// an unchanged one costs a line naming that step. A file added meanwhile is named.
#[test]
fn need_again_sends_only_what_changed_since_it_was_sent() {
    let p = Project::new();
    p.write("src/same.rs", "// same body that stays\n")
        .write("src/edited.rs", "// first version\n");
    // Call 2 answers only once the test has edited the folder: step 2 carried both files,
    // and step 3's answer to the second NEED must see the edit.
    let b = Bridge::new(json!([
        {"answer": "=== NEED: src/same.rs, src/edited.rs ==="},
        {"answer": "=== NEED: src/edited.rs ===\n=== NEED: src/same.rs ===", "wait_for": "edited"},
        {"answer": "Done."}
    ]));
    let dw = deepwork()
        .dir(&p)
        .bridge(&b)
        .arg("--json")
        .arg("read them twice");
    let run = std::thread::spawn(move || dw.run());
    wait_until(RUN_DEADLINE, "the second bridge call", || {
        b.calls().len() >= 2
    });
    p.write("src/edited.rs", "// second version\n")
        .write("src/late.rs", "// came after the tree\n");
    std::fs::write(b.dir().join("edited"), "").unwrap();
    let out = run.join().unwrap();
    out.expect_code(0);

    let inputs = b.inputs();
    assert_contains(&inputs[1], "// same body that stays\n");
    assert_contains(&inputs[1], "// first version\n");
    let third = &inputs[2];
    assert_contains(
        third,
        "[changed on disk since step 2]\n--- src/edited.rs (18 characters) ---\n// second version\n",
    );
    assert_contains(
        third,
        "unchanged since step 2: src/same.rs (24 characters; not sent again)\n",
    );
    assert_not_contains(third, "// same body that stays");
    // A step of NEEDs alone still names the file added since the tree (step 1; step 2 saw
    // no change).
    assert_contains(
        third,
        "[files changed on disk since step 1]\nadded: src/late.rs\n\n",
    );
    assert_not_contains(&inputs[1], "[files changed on disk");
    // The step log counts both: step 2's NEEDs, one file each.
    let v = out.json();
    let reqs = requests(&steps(&v)[1]);
    assert_eq!(
        (reqs[0]["changed"].as_u64(), reqs[0]["unchanged"].as_u64()),
        (Some(1), Some(0)),
        "{v:#}"
    );
    assert_eq!(
        (reqs[1]["changed"].as_u64(), reqs[1]["unchanged"].as_u64()),
        (Some(0), Some(1)),
        "{v:#}"
    );
    assert_eq!(reqs[1]["hits"], 0, "{v:#}");
}
