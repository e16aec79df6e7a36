//! What the sandbox refused a run of the line (DESIGN.md, "Containment"; issue 34, item 5):
//! kept on the line like the guard's denials, and a refused host turned into a question for
//! Anton — "allow this host for the project?" — rather than a step that fails again and again.
//!
//! A refusal never decides a run's or a step's outcome here: the run is recorded as it ended,
//! and its step is done or red by the daemon's own checks, as without a sandbox. The agent
//! met the refusal as an error inside its run and went on without what it asked for; what it
//! could not do shows in its work, which the checks and the judge weigh.
//!
//! What is asked, and why only that:
//! - A host: only Anton can let one through, by adding it to `[sandbox] allow_hosts` in
//!   `.conveyor.toml` on main, so the daemon asks him — once per project and host while such
//!   a question is open (two runs, two lines or two ports of one host make one question), and
//!   not again on a line where he already said to go on without it.
//! - Not a local address (loopback, private, link-local, `localhost`): no project can allow
//!   one ([`conveyor_core::sandbox::Host::is_local`]), so a question could only be answered
//!   "no"; the agent reached for the daemon's machine, which is its own mistake. Kept, shown,
//!   told to the judge, not asked.
//! - Not a write outside the run's places, nor a ref put back: nothing Anton could allow (the
//!   sandbox's places are the design's, not a project's), and the attempt had no effect.

use conveyor_api::{LineState, QuestionStatus, RefusalKind};
use conveyor_core::sandbox::{Host, Target, net};

use crate::error::Result;
use crate::state::Shared;
use crate::store::refusals::{self, AskedHost, NewRefusal};
use crate::store::{self, questions};

/// One thing the sandbox refused a run, as the runner found it.
pub use crate::sandbox::Found;

/// Anton's answer that he let the host through.
pub(crate) const ALLOWED: &str = "allowed: I added it";
/// Anton's answer that the line goes on without the host (the default: what it does until he
/// answers).
pub(crate) const NOT_NEEDED: &str = "not needed: go on without it";

/// Keeps what the sandbox refused run `run_id` of the line (once per run, kind and what),
/// asks Anton about each refused host worth a question, in one transaction, then logs it and
/// tells the subscribers (pult reloads the line). Nothing here fails the run or its step.
///
/// # Errors
/// Database errors.
pub(super) async fn record_run(
    sh: &Shared,
    line_id: &str,
    run_id: i64,
    found: &[Found],
) -> Result<()> {
    if found.is_empty() {
        return Ok(());
    }
    let now = sh.clock.now_ms();
    let mut tx = sh.store.begin().await?;
    let mut new = Vec::new();
    for f in found {
        let r = NewRefusal {
            run_id,
            line_id,
            kind: f.kind,
            what: &f.what,
            at: f.at_ms,
        };
        if refusals::record(&mut tx, &r).await? {
            new.push(f);
        }
    }
    let mut asked = 0;
    // A line that is done reads no answer (an answer to it is refused): nothing to ask.
    if let Some(line) = store::lines::get(&mut tx, line_id)
        .await?
        .filter(|l| !matches!(l.state, LineState::Accepted | LineState::Cancelled))
    {
        let before = refusals::asked_hosts(&mut tx, &line.project_id).await?;
        for (f, target) in to_ask(line_id, &new, &before) {
            let text = host_question(&target);
            let options = [ALLOWED.to_string(), NOT_NEEDED.to_string()];
            // Reversible and cheap: an `allow_hosts` line comes out as easily as it goes in,
            // and until Anton answers the line goes on without the host (it waits for him only
            // once its steps are done, as for any open question). Hence not urgent, by day
            // either: the Catcher interrupts him only for what is irreversible and expensive
            // (the guard's denials). Validated by the daemon, not the judge: only Anton edits
            // what a project's sandbox lets through, and no agent can (`.conveyor.toml` is
            // read from main).
            let q = questions::DaemonQuestion {
                text: &text,
                options: &options,
                default: Some(NOT_NEEDED),
                why: "the sandbox let the agent reach only the API and the project's allow_hosts",
                reversible: true,
                expensive: false,
                validated: "only Anton changes what a project's sandbox lets through",
                urgent: false,
            };
            if let Some(id) = questions::ask_as_daemon(&mut tx, line_id, &q, now).await? {
                refusals::set_question(&mut tx, (run_id, f.kind, &f.what), &id).await?;
                asked += 1;
            }
        }
    }
    tx.commit().await?;
    if new.is_empty() {
        return Ok(());
    }
    let listed: Vec<String> = new
        .iter()
        .take(10)
        .map(|f| format!("{} {}", f.kind, f.what))
        .collect();
    tracing::warn!(
        line = line_id,
        run = run_id,
        refused = new.len(),
        asked,
        what = %listed.join("; "),
        "the sandbox refused the agent"
    );
    sh.announce_questions(line_id, asked);
    Ok(())
}

/// The refused hosts of `new` (the line's, just kept) worth a question, each with the address
/// it names: not local, and not one the project's open questions already ask about, nor one
/// Anton told this line to go on without. One per host, whatever its ports.
fn to_ask<'f>(line_id: &str, new: &[&'f Found], asked: &[AskedHost]) -> Vec<(&'f Found, Target)> {
    let asked: Vec<(Host, &AskedHost)> = asked
        .iter()
        .filter_map(|a| target(&a.what).map(|t| (t.host, a)))
        .collect();
    let mut out: Vec<(&Found, Target)> = Vec::new();
    for f in new.iter().copied().filter(|f| f.kind == RefusalKind::Host) {
        let Some(t) = target(&f.what) else {
            continue;
        };
        let settled = asked.iter().any(|(host, a)| {
            *host == t.host
                && (a.status == QuestionStatus::Validated
                    || (a.line_id == line_id
                        && a.status == QuestionStatus::Answered
                        && a.answer.as_deref() != Some(ALLOWED)))
        });
        if !t.host.is_local() && !settled && !out.iter().any(|(_, o)| o.host == t.host) {
            out.push((f, t));
        }
    }
    out
}

/// `host:port` as the runner writes it (`[v6]:port` for an IPv6 address); `None` for anything
/// else.
fn target(what: &str) -> Option<Target> {
    let (host, port) = what.rsplit_once(':')?;
    Some(Target {
        host: Host::parse(host).ok()?,
        port: net::parse_port(port).ok()?,
    })
}

/// The question about a refused host.
fn host_question(t: &Target) -> String {
    let [any_port, this_port] = allow_entries(t);
    format!(
        "The agent needed {t}, which this project's sandbox does not allow. Allow it? Add \
         `\"{any_port}\"` (any port) or `\"{this_port}\"` to `[sandbox] allow_hosts` in \
         .conveyor.toml on main; until then the line goes on without it."
    )
}

/// The `allow_hosts` entries that let `t` through: for any port (the host alone, an IPv6
/// address in brackets), and for its port only.
fn allow_entries(t: &Target) -> [String; 2] {
    let any_port = match &t.host {
        Host::Ip(std::net::IpAddr::V6(ip)) => format!("[{ip}]"),
        h => h.to_string(),
    };
    [any_port, t.to_string()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(what: &str) -> Found {
        Found {
            kind: RefusalKind::Host,
            what: what.into(),
            at_ms: 1,
        }
    }

    fn asked(what: &str, line: &str, status: QuestionStatus, answer: Option<&str>) -> AskedHost {
        AskedHost {
            what: what.into(),
            line_id: line.into(),
            status,
            answer: answer.map(str::to_string),
        }
    }

    fn whats(out: &[(&Found, Target)]) -> Vec<String> {
        out.iter().map(|(f, _)| f.what.clone()).collect()
    }

    /// One question per host, whatever its ports and however it is spelled; a local address,
    /// something that is not `host:port`, a write and a ref are never asked about.
    #[test]
    fn one_question_per_host_and_none_for_local_addresses_or_other_kinds() {
        let found = [
            host("registry.npmjs.org:443"),
            host("Registry.NPMJS.org.:80"),
            host("127.0.0.1:5432"),
            host("[::1]:8080"),
            host("localhost:3000"),
            host("10.1.2.3:22"),
            host("169.254.169.254:80"),
            host("[2606:4700::1111]:443"),
            host("no port"),
            Found {
                kind: RefusalKind::Write,
                what: "/etc/x:1".into(),
                at_ms: 1,
            },
            Found {
                kind: RefusalKind::Ref,
                what: "refs/heads/main: a -> b".into(),
                at_ms: 1,
            },
        ];
        let refs: Vec<&Found> = found.iter().collect();
        assert_eq!(
            whats(&to_ask("l", &refs, &[])),
            ["registry.npmjs.org:443", "[2606:4700::1111]:443"]
        );
    }

    /// An open question in the project about the host (any line, any port) holds a second
    /// one; an answered one does not, unless Anton told this line to go on without it.
    #[test]
    fn an_open_question_or_a_go_on_without_it_holds_another() {
        let found = [host("pypi.org:443")];
        let refs: Vec<&Found> = found.iter().collect();
        let ask = |a: AskedHost| whats(&to_ask("l", &refs, &[a]));
        let open = QuestionStatus::Validated;
        let answered = QuestionStatus::Answered;
        assert!(ask(asked("pypi.org:80", "other", open, None)).is_empty());
        assert!(ask(asked("pypi.org:443", "l", answered, Some(NOT_NEEDED))).is_empty());
        assert!(ask(asked("pypi.org:443", "l", answered, Some("use a mirror"))).is_empty());
        // He said he allowed it, and it was refused again: the allowance did not take.
        assert_eq!(
            ask(asked("pypi.org:443", "l", answered, Some(ALLOWED))),
            ["pypi.org:443"]
        );
        // Another line's settled question: this line's work may need it for another reason.
        assert_eq!(
            ask(asked("pypi.org:443", "other", answered, Some(NOT_NEEDED))),
            ["pypi.org:443"]
        );
        assert_eq!(
            ask(asked("files.pythonhosted.org:443", "l", open, None)),
            ["pypi.org:443"]
        );
    }

    /// The entries the question suggests are ones the sandbox reads, and they admit the host.
    #[test]
    fn the_question_names_the_host_and_entries_that_let_it_through() {
        for what in ["pypi.org:443", "8.8.8.8:53", "[2606:4700::1111]:443"] {
            let t = target(what).unwrap();
            for entry in allow_entries(&t) {
                let egress = net::Egress::new(None, &[entry.as_str()]).unwrap();
                let host = t.host.to_string();
                assert_eq!(
                    net::admit(&egress, &host, t.port),
                    net::Admission::Listed,
                    "{entry}"
                );
            }
        }
        let t = target("[2606:4700::1111]:443").unwrap();
        let q = host_question(&t);
        assert!(
            q.starts_with("The agent needed [2606:4700::1111]:443, which"),
            "{q}"
        );
        assert!(q.contains("`\"[2606:4700::1111]\"` (any port)"), "{q}");
        assert!(
            q.contains("`[sandbox] allow_hosts` in .conveyor.toml on main"),
            "{q}"
        );
    }

    /// A running line with an executor step and `runs` runs of it; the daemon, the step and
    /// the runs' ids.
    async fn line_with_runs(
        tmp: &std::path::Path,
        runs: usize,
    ) -> (
        crate::daemon::ServerHandle,
        std::sync::Arc<Shared>,
        store::StepRow,
        Vec<i64>,
    ) {
        let d = crate::daemon::testing::start(&tmp.join("data"), "").await;
        let sh = d.shared().clone();
        let line = store::testing::line(&sh.store, "p", "l", 0, "running").await;
        let step = store::testing::step(&sh.store, &line, conveyor_api::StepKind::Executor).await;
        let mut ids = Vec::new();
        for _ in 0..runs {
            ids.push(store::testing::run(&sh.store, &step.id, &line).await);
        }
        (d, sh, step, ids)
    }

    fn found(kind: RefusalKind, what: &str, at_ms: i64) -> Found {
        Found {
            kind,
            what: what.into(),
            at_ms,
        }
    }

    async fn open_questions(sh: &Shared) -> Vec<store::QuestionRow> {
        questions::of_line(
            &mut sh.store.conn().await.unwrap(),
            "l",
            &[QuestionStatus::Validated],
        )
        .await
        .unwrap()
    }

    /// The next event on `rx`, without waiting.
    fn event(
        rx: &mut tokio::sync::broadcast::Receiver<conveyor_api::Event>,
    ) -> conveyor_api::Event {
        rx.try_recv().expect("an event")
    }

    /// A host refused in two runs is one question; a local address, a write and a ref are
    /// kept without one; a run reported twice keeps each once. All of it shows on the line,
    /// each time the subscribers hear of it, and the step and its runs are as they were.
    #[tokio::test]
    async fn a_host_refused_in_two_runs_is_asked_once_and_the_rest_only_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let (d, sh, step, runs) = line_with_runs(tmp.path(), 2).await;
        let mut rx = sh.events.subscribe();
        let first = [
            found(RefusalKind::Host, "registry.npmjs.org:443", 10),
            found(RefusalKind::Write, "/home/agent/.npmrc", 11),
            found(RefusalKind::Ref, "refs/heads/main: aaa -> bbb", 12),
            found(RefusalKind::Host, "127.0.0.1:5432", 13),
        ];
        record_run(&sh, "l", runs[0], &first).await.unwrap();
        let asked = open_questions(&sh).await;
        assert_eq!(asked.len(), 1);
        let q = &asked[0];
        assert!(
            q.said
                .text
                .as_deref()
                .unwrap()
                .starts_with("The agent needed registry.npmjs.org:443"),
            "{:?}",
            q.said.text
        );
        assert_eq!(q.decided_by, Some(conveyor_api::DecisionSource::Daemon));
        assert_eq!(q.said.options(), [ALLOWED, NOT_NEEDED]);
        assert_eq!(q.said.default_opt.as_deref(), Some(NOT_NEEDED));
        assert_eq!(
            (q.said.reversible, q.said.expensive, q.urgent),
            (Some(true), Some(false), false)
        );
        let e = event(&mut rx);
        assert_eq!(
            (e.kind, e.line_id.as_deref()),
            (conveyor_api::EventKind::Question, Some("l"))
        );
        assert_eq!(e.state, Some(QuestionStatus::Validated.into()));

        // The same host in the next run, on another port: kept, not asked again.
        let second = [found(RefusalKind::Host, "registry.npmjs.org:80", 20)];
        record_run(&sh, "l", runs[1], &second).await.unwrap();
        assert_eq!(open_questions(&sh).await.len(), 1);
        let e = event(&mut rx);
        assert_eq!((e.kind, e.state), (conveyor_api::EventKind::Question, None));
        // The first run reported again: nothing new, nothing told.
        record_run(&sh, "l", runs[0], &first).await.unwrap();
        assert!(rx.try_recv().is_err());

        let line = store::line_view::get(&mut sh.store.conn().await.unwrap(), "l")
            .await
            .unwrap()
            .unwrap();
        let n = u32::try_from(step.n).unwrap();
        assert_eq!(
            line.refusals
                .iter()
                .map(|r| (r.step_n, r.kind, r.what.as_str()))
                .collect::<Vec<_>>(),
            [
                (n, RefusalKind::Host, "registry.npmjs.org:443"),
                (n, RefusalKind::Write, "/home/agent/.npmrc"),
                (n, RefusalKind::Ref, "refs/heads/main: aaa -> bbb"),
                (n, RefusalKind::Host, "127.0.0.1:5432"),
                (n, RefusalKind::Host, "registry.npmjs.org:80"),
            ]
        );
        // Nothing failed: the step and its runs are as the runner left them.
        let now = store::steps::of_line(&mut sh.store.conn().await.unwrap(), "l")
            .await
            .unwrap();
        assert_eq!(now.len(), 1);
        assert_eq!(now[0].state, conveyor_api::StepState::Pending);
        for r in &runs {
            assert_eq!(store::testing::run_outcome(&sh.store, *r).await, "running");
        }
        drop(sh);
        d.stop().await;
    }

    /// Answered "go on without it", the line carries the answer in an `answer` step and goes
    /// on; a later run of it refused the same host again is not asked about again. Answered
    /// "allowed", a refusal after it means the allowance did not take, and is asked again.
    #[tokio::test]
    async fn answered_the_line_goes_on_and_is_asked_again_only_when_the_allowance_did_not_take() {
        let tmp = tempfile::tempdir().unwrap();
        let (d, sh, step, runs) = line_with_runs(tmp.path(), 3).await;
        let pypi = |at| [found(RefusalKind::Host, "pypi.org:443", at)];
        record_run(&sh, "l", runs[0], &pypi(1)).await.unwrap();
        let q = open_questions(&sh).await.remove(0);
        // Its steps done, the line waits for the answer; the answer sends it on.
        let mut conn = sh.store.conn().await.unwrap();
        let c = &mut *conn;
        store::steps::set_state(c, &step.id, conveyor_api::StepState::Done, None)
            .await
            .unwrap();
        store::lines::set_state(c, "l", LineState::WaitingAnswer, None, None)
            .await
            .unwrap();
        assert_eq!(
            super::super::answer::answer(&sh, &q, NOT_NEEDED)
                .await
                .unwrap(),
            Ok(())
        );
        let steps = store::steps::of_line(c, "l").await.unwrap();
        assert_eq!(
            steps.iter().map(|s| (s.kind, s.state)).collect::<Vec<_>>(),
            [
                (
                    conveyor_api::StepKind::Executor,
                    conveyor_api::StepState::Done
                ),
                (
                    conveyor_api::StepKind::Answer,
                    conveyor_api::StepState::Pending
                ),
            ]
        );
        assert_eq!(
            store::lines::state_of(c, "l").await.unwrap(),
            Some(LineState::Running)
        );
        // The answer step's run tries the host again: kept, not asked.
        record_run(&sh, "l", runs[1], &pypi(2)).await.unwrap();
        assert!(open_questions(&sh).await.is_empty());

        // Had he said he allowed it, a refusal after that is asked about again.
        let q = questions::get(c, &q.id).await.unwrap().unwrap();
        assert_eq!(
            super::super::answer::answer(&sh, &q, ALLOWED)
                .await
                .unwrap(),
            Ok(())
        );
        record_run(&sh, "l", runs[2], &pypi(3)).await.unwrap();
        assert_eq!(open_questions(&sh).await.len(), 1);
        drop(conn);
        drop(sh);
        d.stop().await;
    }

    /// A line that is done asks nothing: no answer could reach it.
    #[tokio::test]
    async fn a_done_line_keeps_its_refusals_and_asks_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let (d, sh, _step, runs) = line_with_runs(tmp.path(), 1).await;
        let mut conn = sh.store.conn().await.unwrap();
        let c = &mut *conn;
        store::lines::set_state(c, "l", LineState::Cancelled, None, None)
            .await
            .unwrap();
        record_run(
            &sh,
            "l",
            runs[0],
            &[found(RefusalKind::Host, "pypi.org:443", 1)],
        )
        .await
        .unwrap();
        assert!(open_questions(&sh).await.is_empty());
        let kept = refusals::of_lines(c, &["l".to_string()]).await.unwrap();
        assert_eq!(kept["l"].len(), 1);
        drop(conn);
        drop(sh);
        d.stop().await;
    }

    /// `GET /api/lines/{id}` and `GET /api/lines` carry the line's refusals as the wire says
    /// (`{step_n, kind, what, at}`), and its question about the host among its questions.
    #[tokio::test]
    async fn the_api_shows_the_refusals_on_the_line() {
        use http_body_util::BodyExt;
        use tower::ServiceExt;
        let tmp = tempfile::tempdir().unwrap();
        let (d, sh, step, runs) = line_with_runs(tmp.path(), 1).await;
        let refused = [
            found(RefusalKind::Host, "pypi.org:443", 1_700_000_000_000),
            found(RefusalKind::Write, "/usr/lib/x", 1_700_000_000_500),
        ];
        record_run(&sh, "l", runs[0], &refused).await.unwrap();
        let get = |uri: &'static str| {
            let app = crate::api::app(sh.clone());
            async move {
                let req = axum::http::Request::get(uri)
                    .header("authorization", "Bearer t")
                    .body(axum::body::Body::empty())
                    .unwrap();
                let resp = app.oneshot(req).await.unwrap();
                assert_eq!(resp.status(), axum::http::StatusCode::OK, "{uri}");
                let body = resp.into_body().collect().await.unwrap().to_bytes();
                serde_json::from_slice::<serde_json::Value>(&body).unwrap()
            }
        };
        let one = get("/api/lines/l").await;
        assert_eq!(
            one["refusals"],
            serde_json::json!([
                {"step_n": step.n, "kind": "host", "what": "pypi.org:443",
                 "at": "2023-11-14T22:13:20.000Z"},
                {"step_n": step.n, "kind": "write", "what": "/usr/lib/x",
                 "at": "2023-11-14T22:13:20.500Z"},
            ])
        );
        let questions = one["questions"].as_array().unwrap();
        assert_eq!(questions.len(), 1);
        assert_eq!(questions[0]["status"], "validated");
        assert_eq!(questions[0]["decided_by"], "daemon");
        let all = get("/api/lines").await;
        assert_eq!(all[0]["refusals"], one["refusals"]);
        drop(sh);
        d.stop().await;
    }
}
