//! The TypeScript bindings of the wire types (`crates/conveyor-api/bindings/conveyor.ts`).

use ts_rs::TS;

use crate::types::*;

/// The whole generated TypeScript file: every wire type, in dependency order.
///
/// `cargo test -p conveyor-api` compares it with the committed `bindings/conveyor.ts`; run with
/// `UPDATE_BINDINGS=1` to rewrite the file.
pub fn typescript() -> String {
    let decls = [
        Health::decl(),
        ReasonCode::decl(),
        PreflightLevel::decl(),
        PreflightScope::decl(),
        PreflightCode::decl(),
        PreflightItem::decl(),
        Preflight::decl(),
        ApiErrorBody::decl(),
        ErrorCode::decl(),
        Project::decl(),
        NewProject::decl(),
        LineState::decl(),
        Level::decl(),
        Line::decl(),
        LineDetail::decl(),
        LineBudget::decl(),
        NewLine::decl(),
        LinePatch::decl(),
        LineOrder::decl(),
        Remarks::decl(),
        StepKind::decl(),
        StepSize::decl(),
        StepState::decl(),
        Step::decl(),
        Denial::decl(),
        RefusalKind::decl(),
        Refusal::decl(),
        DeployOutcome::decl(),
        Deploy::decl(),
        HealthCheck::decl(),
        RoleCall::decl(),
        RoleVerdict::decl(),
        Finding::decl(),
        SetLevel::decl(),
        Tokens::decl(),
        JournalKind::decl(),
        JournalEntry::decl(),
        QuestionStatus::decl(),
        QuestionKind::decl(),
        DecisionSource::decl(),
        Question::decl(),
        Decision::decl(),
        AnswerOption::decl(),
        AnswerText::decl(),
        Answer::decl(),
        Review::decl(),
        NightGlance::decl(),
        ReviewProject::decl(),
        Budget::decl(),
        PoolKind::decl(),
        BudgetPool::decl(),
        RunningStep::decl(),
        Calibration::decl(),
        KindStats::decl(),
        Misses::decl(),
        RateLimit::decl(),
        LineDiff::decl(),
        FileChange::decl(),
        FileDiff::decl(),
        Channel::decl(),
        OutboxKind::decl(),
        OutboxState::decl(),
        OutboxItem::decl(),
        Outbox::decl(),
        ChannelStatus::decl(),
        RunOutcome::decl(),
        Run::decl(),
        TranscriptKind::decl(),
        TranscriptEvent::decl(),
        Transcript::decl(),
        RunEvent::decl(),
        EventKind::decl(),
        EventState::decl(),
        Event::decl(),
    ];
    let mut out = String::from(
        "// Generated from crates/conveyor-api by ts-rs (`UPDATE_BINDINGS=1 cargo test -p conveyor-api`).\n// Do not edit by hand.\n",
    );
    for d in decls {
        out.push('\n');
        out.push_str("export ");
        out.push_str(&d);
        out.push('\n');
    }
    out
}
