//! `GET /api/events`: one server-sent event per state change.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

use super::line::LineState;
use super::review::QuestionStatus;
use super::run::RunEvent;
use super::step::StepState;

named! {
    /// What an event is about.
    pub enum EventKind {
        Project = "project",
        Line = "line",
        Step = "step",
        Journal = "journal",
        Question = "question",
        Budget = "budget",
        /// The preflight's outcome changed (`GET /api/preflight` for the items).
        Preflight = "preflight",
        /// A deploy started or ended (the line's `deploys` for the details).
        Deploy = "deploy",
        /// An outbox message was queued, sent or failed (`GET /api/outbox` for the items).
        Outbox = "outbox",
        /// A run's log has new transcript events (`run` says which run and up to what `seq`;
        /// `GET /api/runs/{id}/transcript?after=` reads them).
        RunEvent = "run_event",
    }
}

/// The new state an [`Event`] reports: its line's, its step's or its question's, by the
/// event's kind. On the wire it is the bare state name (`"awaiting_acceptance"`, `"done"`,
/// `"answered"`); a line and a step share some names (`running`, `cancelled`), so an event is
/// read with its kind (see [`EventState::parse`]), never the state alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, TS)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(untagged)]
pub enum EventState {
    /// A `line` event: the line's new state.
    Line(LineState),
    /// A `step` event: the step's new state.
    Step(StepState),
    /// A `question` event: the question's new status.
    Question(QuestionStatus),
}

impl EventState {
    /// The snake_case name sent on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            EventState::Line(s) => s.as_str(),
            EventState::Step(s) => s.as_str(),
            EventState::Question(s) => s.as_str(),
        }
    }

    /// Reads the state name of an event of `kind`; `None` when that kind has no such state
    /// (project, journal, budget, preflight and deploy events carry none).
    pub fn parse(kind: EventKind, s: &str) -> Option<EventState> {
        match kind {
            EventKind::Line => LineState::parse(s).map(EventState::Line),
            EventKind::Step => StepState::parse(s).map(EventState::Step),
            EventKind::Question => QuestionStatus::parse(s).map(EventState::Question),
            EventKind::Project
            | EventKind::Journal
            | EventKind::Budget
            | EventKind::Preflight
            | EventKind::Deploy
            | EventKind::Outbox
            | EventKind::RunEvent => None,
        }
    }
}

impl From<LineState> for EventState {
    fn from(s: LineState) -> EventState {
        EventState::Line(s)
    }
}

impl From<StepState> for EventState {
    fn from(s: StepState) -> EventState {
        EventState::Step(s)
    }
}

impl From<QuestionStatus> for EventState {
    fn from(s: QuestionStatus) -> EventState {
        EventState::Question(s)
    }
}

/// One server-sent event of `GET /api/events` (SSE event name: the `kind`).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct Event {
    #[ts(type = "number")]
    pub seq: u64,
    pub kind: EventKind,
    pub line_id: Option<String>,
    pub project_id: Option<String>,
    pub step_n: Option<u32>,
    /// The new state of the line or step (or the question's new status), when the event is a
    /// state change.
    pub state: Option<EventState>,
    pub detail: Option<String>,
    pub at: String,
    /// A `run_event`'s run and how far its transcript goes; absent from every other kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub run: Option<RunEvent>,
}

// Read by hand: the state name means something only with the kind (see `EventState`).
impl<'de> Deserialize<'de> for Event {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Event, D::Error> {
        /// [`Event`] as sent, its state still a name.
        #[derive(Deserialize)]
        struct Sent {
            seq: u64,
            kind: EventKind,
            line_id: Option<String>,
            project_id: Option<String>,
            step_n: Option<u32>,
            state: Option<String>,
            detail: Option<String>,
            at: String,
            #[serde(default)]
            run: Option<RunEvent>,
        }
        let e = Sent::deserialize(d)?;
        let state = match e.state {
            None => None,
            Some(s) => Some(EventState::parse(e.kind, &s).ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "{s:?} is not a state a {:?} event carries",
                    e.kind
                ))
            })?),
        };
        Ok(Event {
            seq: e.seq,
            kind: e.kind,
            line_id: e.line_id,
            project_id: e.project_id,
            step_n: e.step_n,
            state,
            detail: e.detail,
            at: e.at,
            run: e.run,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn event_kinds_are_named_as_serde_names_them() {
        for kind in EventKind::ALL {
            assert_eq!(serde_json::to_value(kind).unwrap(), json!(kind.as_str()));
        }
    }

    fn event(kind: EventKind, state: Option<EventState>) -> Event {
        Event {
            seq: 7,
            kind,
            line_id: Some("l1".into()),
            project_id: None,
            step_n: Some(2),
            state,
            detail: Some("d".into()),
            at: "2026-01-01T00:00:00Z".into(),
            run: None,
        }
    }

    /// An event's state is the bare name on the wire, and is read back by the event's kind
    /// (a line and a step are both `running`).
    #[test]
    fn event_states_are_bare_names_read_by_the_event_kind() {
        let e = event(EventKind::Step, Some(StepState::Running.into()));
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"seq":7,"kind":"step","line_id":"l1","project_id":null,"step_n":2,"state":"running","detail":"d","at":"2026-01-01T00:00:00Z"}"#
        );
        for e in [
            e,
            event(EventKind::Line, Some(LineState::Running.into())),
            event(EventKind::Line, Some(LineState::Cancelled.into())),
            event(EventKind::Step, Some(StepState::Cancelled.into())),
            event(EventKind::Line, Some(LineState::AwaitingAcceptance.into())),
            event(EventKind::Question, Some(QuestionStatus::Answered.into())),
            event(EventKind::Question, None),
            event(EventKind::Budget, None),
            Event {
                run: Some(RunEvent { run_id: 3, seq: 9 }),
                ..event(EventKind::RunEvent, None)
            },
        ] {
            let text = serde_json::to_string(&e).unwrap();
            assert_eq!(serde_json::from_str::<Event>(&text).unwrap(), e, "{text}");
        }
        for state in LineState::ALL {
            let e = event(EventKind::Line, Some(state.into()));
            assert_eq!(
                serde_json::to_value(&e).unwrap()["state"],
                json!(state.as_str())
            );
        }
        // A state the kind does not have is a decoding error, not a guess.
        let mut v = serde_json::to_value(event(EventKind::Step, None)).unwrap();
        v["state"] = json!("awaiting_acceptance");
        assert!(serde_json::from_value::<Event>(v).is_err());
        // Absent optional fields read as null, as with the derived decoder.
        let e: Event = serde_json::from_value(json!({
            "seq": 1, "kind": "line", "state": "queued", "at": "t"
        }))
        .unwrap();
        assert_eq!(
            (e.state, e.line_id),
            (Some(EventState::Line(LineState::Queued)), None)
        );
    }
}
