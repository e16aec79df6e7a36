//! What Anton is told outside the app, and when: the Catcher (his Telegram chat with the
//! daemon's bot) and PlanFix. Decided here and written to the outbox in the transaction of
//! the change it reports (a state change and its message commit together, or neither);
//! `notify` delivers the outbox and takes Anton's presses. Also the wire clients of the two
//! services and the texts, so the preflight can ask the bot without the workers.
//!
//! By day the Catcher gets only what needs Anton now: a question that is irreversible and
//! expensive, a line ready to accept, a rollback, a line that cannot pass its gate, the vault
//! closed. At night nothing is sent: what is written then is held, and goes as one digest
//! when the night ends.

pub(crate) mod planfix;
pub(crate) mod telegram;
pub(crate) mod text;

use conveyor_api::{Channel, LineState, OutboxKind, ReasonCode};
use serde::{Deserialize, Serialize};
use sqlx::SqliteConnection;

use crate::config::{Config, Lang};
use crate::error::Result;
use crate::store::{self, outbox};
use text::Words;

/// Reason codes of a line that cannot pass its gate: its checks stayed red every round, or
/// no fixer can cure what is red.
pub(crate) const GATE_CODES: [ReasonCode; 5] = [
    ReasonCode::GateFailed,
    ReasonCode::NoUiScenarios,
    ReasonCode::NoTestEvidence,
    ReasonCode::HookBlocked,
    ReasonCode::DeployRed,
];

/// What a Telegram message row says: markup, and buttons named by what they do (their
/// `callback_data` is made when sent, from the row's id: `q:<row>:<option>`, `a:<row>`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Body {
    pub text: String,
    #[serde(default)]
    pub buttons: Vec<Button>,
    /// A digest's messages, by row id.
    #[serde(default)]
    pub members: Vec<i64>,
}

/// A button of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Button {
    pub text: String,
    pub does: Does,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Does {
    /// Answers the row's question with option `n`.
    Answer(usize),
    /// Accepts the row's line.
    Accept,
}

/// The language of the Catcher's messages.
pub(crate) fn words(cfg: &Config) -> Words {
    Words(cfg.catcher.as_ref().map_or(Lang::Ru, |c| c.lang))
}

/// Whether a Telegram message written now waits for the night's digest.
fn held(cfg: &Config, now: i64) -> bool {
    cfg.night().is_some_and(|n| n.contains(now))
}

/// Writes a Telegram message, if the Catcher is configured; whether it was written.
async fn telegram(
    c: &mut SqliteConnection,
    cfg: &Config,
    kind: OutboxKind,
    dedupe: String,
    about: (Option<&str>, Option<&str>),
    body: &Body,
    now: i64,
) -> Result<bool> {
    if cfg.catcher.is_none() {
        return Ok(false);
    }
    let held = kind != OutboxKind::Test && kind != OutboxKind::Edit && held(cfg, now);
    let id = outbox::enqueue(
        c,
        &outbox::New {
            channel: Channel::Telegram,
            kind,
            dedupe,
            line_id: about.0,
            question_id: about.1,
            target: None,
            body: serde_json::to_value(body).expect("a body serializes"),
            held,
            now,
        },
    )
    .await?;
    Ok(id.is_some())
}

/// Tells Anton about a line's state change, written on the transaction that makes it: ready
/// to accept (and its PlanFix report), rolled back, cannot pass its gate. `from` is the state
/// it left. Whether anything was written.
///
/// # Errors
/// Database errors.
pub(crate) async fn on_line_state(
    c: &mut SqliteConnection,
    cfg: &Config,
    line_id: &str,
    from: LineState,
    to: LineState,
    reason: Option<(ReasonCode, &str)>,
    now: i64,
) -> Result<bool> {
    if from == to {
        return Ok(false);
    }
    let kind = match (to, reason.map(|r| r.0)) {
        (LineState::AwaitingAcceptance, _) => OutboxKind::Ready,
        (LineState::RolledBack, _) => OutboxKind::RolledBack,
        (LineState::NeedsHuman, Some(code)) if GATE_CODES.contains(&code) => OutboxKind::GateFailed,
        _ => return Ok(false),
    };
    let Some(line) = store::lines::get(c, line_id).await? else {
        return Ok(false);
    };
    let project = store::projects::get(c, &line.project_id)
        .await?
        .map_or_else(|| line.project_id.clone(), |p| p.name);
    let w = words(cfg);
    let why = reason.map(|r| r.1);
    let body = match kind {
        OutboxKind::Ready => Body {
            text: w.ready(&project, &line.title),
            buttons: vec![Button {
                text: w.accept_button().into(),
                does: Does::Accept,
            }],
            members: Vec::new(),
        },
        OutboxKind::RolledBack => Body {
            text: w.rolled_back(&project, &line.title, why),
            ..Body::default()
        },
        _ => Body {
            text: w.gate_failed(&project, &line.title, why),
            ..Body::default()
        },
    };
    let dedupe = format!("{kind}:{line_id}:{}", line.updated_at);
    let mut wrote = telegram(c, cfg, kind, dedupe, (Some(line_id), None), &body, now).await?;
    if kind == OutboxKind::Ready
        && cfg.planfix.is_some()
        && let Some(task) = &line.planfix_task
    {
        // One report per time the line is done (remarks can bring it back): its round is
        // in the comment, which is how a post whose fate is unknown is found again.
        let round = outbox::reports_of(c, line_id).await? + 1;
        wrote |= outbox::enqueue(
            c,
            &outbox::New {
                channel: Channel::Planfix,
                kind: OutboxKind::Report,
                dedupe: format!("report:{line_id}:{round}"),
                line_id: Some(line_id),
                question_id: None,
                target: Some(task.clone()),
                body: serde_json::json!({ "round": round }),
                held: false,
                now,
            },
        )
        .await?
        .is_some();
    }
    Ok(wrote)
}

/// Tells Anton about a question that is irreversible and expensive, validated by day: its
/// options as buttons. Whether it was written.
///
/// # Errors
/// Database errors.
pub(crate) async fn on_urgent_question(
    c: &mut SqliteConnection,
    cfg: &Config,
    question_id: &str,
    now: i64,
) -> Result<bool> {
    let Some(q) = store::questions::get(c, question_id).await? else {
        return Ok(false);
    };
    let Some(line) = store::lines::get(c, &q.line_id).await? else {
        return Ok(false);
    };
    let project = store::projects::get(c, &line.project_id)
        .await?
        .map_or_else(|| line.project_id.clone(), |p| p.name);
    let w = words(cfg);
    let body = Body {
        text: w.question(
            &project,
            &line.title,
            q.said.text.as_deref().unwrap_or(""),
            q.said.default_opt.as_deref(),
            q.said.why.as_deref(),
        ),
        buttons: q
            .said
            .options()
            .iter()
            .enumerate()
            .map(|(i, o)| Button {
                text: text::label(o),
                does: Does::Answer(i),
            })
            .collect(),
        members: Vec::new(),
    };
    telegram(
        c,
        cfg,
        OutboxKind::Question,
        format!("question:{question_id}"),
        (Some(&q.line_id), Some(question_id)),
        &body,
        now,
    )
    .await
}

/// Records what became of a message's question or line, and queues an edit of the message
/// that carried it, where one went out already (one not sent yet shows it when it goes).
/// Whether an edit was written.
///
/// # Errors
/// Database errors.
pub(crate) async fn resolve(
    c: &mut SqliteConnection,
    cfg: &Config,
    about: outbox::About<'_>,
    resolved: &str,
    now: i64,
) -> Result<bool> {
    if cfg.catcher.is_none() {
        return Ok(false);
    }
    let mut wrote = false;
    for r in outbox::resolve(c, about, resolved).await? {
        let message = match r.digest_id {
            Some(d) => outbox::get(c, d).await?,
            None => Some(r.clone()),
        };
        let Some(m) = message.filter(|m| m.remote_id.is_some()) else {
            continue;
        };
        wrote |= outbox::enqueue(
            c,
            &outbox::New {
                channel: Channel::Telegram,
                kind: OutboxKind::Edit,
                dedupe: format!("edit:{}:{}:{now}", m.id, r.id),
                line_id: r.line_id.as_deref(),
                question_id: r.question_id.as_deref(),
                target: Some(m.id.to_string()),
                body: serde_json::json!({}),
                held: false,
                now,
            },
        )
        .await?
        .is_some();
    }
    Ok(wrote)
}

/// Tells Anton the vault is closed: once per closing (`since`). Whether it was written.
///
/// # Errors
/// Database errors.
pub(crate) async fn vault_closed(
    c: &mut SqliteConnection,
    cfg: &Config,
    since: i64,
    now: i64,
) -> Result<bool> {
    let Some(v) = &cfg.vault else {
        return Ok(false);
    };
    let body = Body {
        text: words(cfg).vault_closed(
            &v.path.display().to_string(),
            v.check.as_deref().unwrap_or(""),
        ),
        ..Body::default()
    };
    telegram(
        c,
        cfg,
        OutboxKind::VaultClosed,
        format!("vault_closed:{since}"),
        (None, None),
        &body,
        now,
    )
    .await
}

/// A test message from Settings, sent even at night. Its row id, or `None` without a Catcher.
///
/// # Errors
/// Database errors.
pub(crate) async fn test(c: &mut SqliteConnection, cfg: &Config, now: i64) -> Result<Option<i64>> {
    if cfg.catcher.is_none() {
        return Ok(None);
    }
    let Some(id) = outbox::enqueue(
        c,
        &outbox::New {
            channel: Channel::Telegram,
            kind: OutboxKind::Test,
            dedupe: format!("test:{now}:{}", uuid::Uuid::new_v4()),
            line_id: None,
            question_id: None,
            target: None,
            body: serde_json::json!({}),
            held: false,
            now,
        },
    )
    .await?
    else {
        return Ok(None);
    };
    // Its number in the text: Settings' list and the chat can be matched up.
    let body = Body {
        text: words(cfg).test(id),
        ..Body::default()
    };
    outbox::set_body(
        c,
        id,
        &serde_json::to_value(&body).expect("a body serializes"),
    )
    .await?;
    Ok(Some(id))
}
