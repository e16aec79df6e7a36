use std::path::PathBuf;

/// Fails when `bindings/conveyor.ts` differs from what the Rust types generate.
/// `UPDATE_BINDINGS=1 cargo test -p conveyor-api` rewrites it.
#[test]
fn typescript_bindings_are_current() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("bindings/conveyor.ts");
    let want = conveyor_api::typescript();
    if std::env::var_os("UPDATE_BINDINGS").is_some() {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{} is stale: run `UPDATE_BINDINGS=1 cargo test -p conveyor-api` and commit it",
        path.display()
    );
}
