//! The TypeScript types of everything that crosses IPC, generated from the Rust types into
//! `ui/src/lib/generated/types.ts`, and every value of the daemon's code enums into
//! `ui/src/lib/generated/codes.ts` (so the message catalogue's test enumerates what Rust
//! knows, not a second list). The files are committed; these tests fail when one is stale
//! (run with `UPDATE_BINDINGS=1` to rewrite them).

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
        crate::settings::DeepworkDefaults::decl(),
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
         // run `UPDATE_BINDINGS=1 cargo test -p pult bindings` after changing them.\n\n\
         import type { ErrorCode as DaemonErrorCode } from './conveyor';\n\n",
    );
    for d in decls {
        out.push_str("export ");
        out.push_str(&d);
        out.push_str("\n\n");
    }
    out.trim_end().to_owned() + "\n"
}

/// `export const NAME: readonly Type[] = [...]` for each code enum of the daemon, and the
/// daemon's numbers the pages word (the rounds before a line needs Anton).
fn codes() -> String {
    fn list<T: Copy>(name: &str, ty: &str, all: &[T], text: fn(T) -> &'static str) -> String {
        let values: Vec<String> = all.iter().map(|v| format!("'{}'", text(*v))).collect();
        format!(
            "export const {name}: readonly {ty}[] = [{}];\n",
            values.join(", ")
        )
    }
    use conveyor_api::{
        Channel, ErrorCode, OutboxKind, OutboxState, PreflightCode, ReasonCode, RunOutcome,
    };
    [
        "// Generated from the daemon's enums and constants by src-tauri/src/bindings.rs. Do not edit:\n\
         // run `UPDATE_BINDINGS=1 cargo test -p pult bindings` after changing them.\n\n\
         import type { Channel, ErrorCode, OutboxKind, OutboxState, PreflightCode, ReasonCode, RunOutcome } from './conveyor';\n\n"
            .to_owned(),
        "/** Every `ReasonCode`: why a line waits or stopped. */\n".to_owned(),
        list("REASON_CODES", "ReasonCode", ReasonCode::ALL, ReasonCode::as_str),
        "/** Every `PreflightCode`: the preflight's checks. */\n".to_owned(),
        list("PREFLIGHT_CODES", "PreflightCode", PreflightCode::ALL, PreflightCode::as_str),
        "/** Every `ErrorCode` of the daemon's API. */\n".to_owned(),
        list("DAEMON_ERROR_CODES", "ErrorCode", ErrorCode::ALL, ErrorCode::as_str),
        "/** Every `Channel` of the outbox: where a message to Anton goes. */\n".to_owned(),
        list("OUTBOX_CHANNELS", "Channel", Channel::ALL, Channel::as_str),
        "/** Every `OutboxKind`: what a message to Anton says. */\n".to_owned(),
        list("OUTBOX_KINDS", "OutboxKind", OutboxKind::ALL, OutboxKind::as_str),
        "/** Every `OutboxState`: where a message to Anton stands. */\n".to_owned(),
        list("OUTBOX_STATES", "OutboxState", OutboxState::ALL, OutboxState::as_str),
        "/** Every `RunOutcome`: how a run of a step ended, or that it has not. */\n".to_owned(),
        list("RUN_OUTCOMES", "RunOutcome", RunOutcome::ALL, RunOutcome::as_str),
        "/** Failed checking rounds in a row (`Line.rounds`) at which a line needs Anton. */\n"
            .to_owned(),
        format!(
            "export const GATE_ROUNDS = {};\n",
            conveyor::line::GATE_ROUNDS
        ),
    ]
    .concat()
}

#[test]
fn generated_types_are_fresh() {
    fresh("types.ts", &generated());
}

#[test]
fn generated_codes_are_fresh() {
    fresh("codes.ts", &codes());
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
