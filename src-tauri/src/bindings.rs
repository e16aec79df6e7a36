//! The TypeScript types of everything that crosses IPC, generated from the Rust types into
//! `ui/src/lib/generated/types.ts`. The file is committed; this test fails when it is stale
//! (run with `UPDATE_BINDINGS=1` to rewrite it).

use ts_rs::TS;

fn generated() -> String {
    let decls = [
        crate::error::ErrorCode::decl(),
        crate::error::AppError::decl(),
        crate::folder::TreeEntry::decl(),
        crate::commands::folder::FolderInfo::decl(),
        crate::commands::folder::FolderChanged::decl(),
        crate::commands::folder::SelectionSize::decl(),
        crate::commands::run::RunRequest::decl(),
        crate::commands::run::RunUpdate::decl(),
        crate::commands::run::ProposedView::decl(),
        crate::commands::run::RunView::decl(),
        crate::commands::run::WriteOutcome::decl(),
        crate::history::RunSummary::decl(),
        crate::history::WriteRecord::decl(),
        crate::diff::DiffLine::decl(),
        crate::diff::DiffHunk::decl(),
        crate::settings::DeepworkSettings::decl(),
        crate::settings::SettingsView::decl(),
        crate::settings::Prefs::decl(),
        crate::conveyor::ConnectionMode::decl(),
        crate::conveyor::ConnectionState::decl(),
        crate::conveyor::ConnectionStatus::decl(),
        crate::conveyor::TokenStore::decl(),
        crate::conveyor::ConnectionView::decl(),
        crate::conveyor::ConnectRequest::decl(),
        crate::conveyor::Notice::decl(),
        deepwork::Event::decl(),
        deepwork::Step::decl(),
        deepwork::StepRequest::decl(),
        deepwork::StopReason::decl(),
        deepwork::RequestKind::decl(),
        deepwork::RequestStat::decl(),
        deepwork::CheckReport::decl(),
        deepwork::CheckItem::decl(),
        deepwork::CheckKind::decl(),
    ];
    let mut out = String::from(
        "// Generated from the Rust types by src-tauri/src/bindings.rs. Do not edit:\n\
         // run `UPDATE_BINDINGS=1 cargo test -p pult bindings` after changing them.\n\n",
    );
    for d in decls {
        out.push_str("export ");
        out.push_str(&d);
        out.push_str("\n\n");
    }
    out.trim_end().to_owned() + "\n"
}

#[test]
fn generated_types_are_fresh() {
    fresh("types.ts", &generated());
}

fn fresh(name: &str, want: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ui/src/lib/generated")
        .join(name);
    if std::env::var_os("UPDATE_BINDINGS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{} is stale: run `UPDATE_BINDINGS=1 cargo test -p pult bindings`",
        path.display()
    );
}
