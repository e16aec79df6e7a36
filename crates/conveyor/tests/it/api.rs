//! The HTTP API through `app().oneshot(..)`, and once over a real port.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use conveyor_api::{Client, LineState, NewLine, NewProject};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::support::*;

/// A daemon that serves the API but starts no line.
async fn api_only() -> Daemon {
    Daemon::builder().config("run_lines = false").start().await
}

/// One request through the router, with the token.
async fn call(d: &Daemon, method: &str, uri: &str, body: Option<Value>) -> (StatusCode, Value) {
    call_as(d, Some(TOKEN), method, uri, body).await
}

/// One request through the router, with this token or none.
async fn call_as(
    d: &Daemon,
    token: Option<&str>,
    method: &str,
    uri: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut req = Request::builder().method(method).uri(uri);
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    let req = match body {
        Some(b) => req
            .header("content-type", "application/json")
            .body(Body::from(b.to_string()))
            .unwrap(),
        None => req.body(Body::empty()).unwrap(),
    };
    let resp = conveyor::api::app(d.handle().shared().clone())
        .oneshot(req)
        .await
        .unwrap();
    let status = resp.status();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    let v = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, v)
}

/// The response is an error with this status and `code`.
#[track_caller]
fn assert_code((s, v): &(StatusCode, Value), status: StatusCode, code: &str) {
    assert_eq!((*s, v["code"].as_str()), (status, Some(code)), "{v}");
}

#[tokio::test]
async fn every_documented_route_but_health_and_the_document_needs_the_token() {
    let mut d = api_only().await;
    let (s, v) = call_as(&d, None, "GET", "/api/health", None).await;
    assert_eq!((s, v["status"].as_str()), (StatusCode::OK, Some("ok")));
    // The document is public, and says which routes are not: each must refuse no token and a
    // wrong one, whatever else it would have refused.
    let (s, doc) = call_as(&d, None, "GET", "/api/openapi.json", None).await;
    assert_eq!(s, StatusCode::OK);
    let mut public = Vec::new();
    let mut protected = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let m = method.to_uppercase();
            let uri = path.replace("{id}", "x");
            if op.get("security").is_none() {
                public.push(path.as_str());
                let (s, _) = call_as(&d, None, &m, &uri, None).await;
                assert_eq!(s, StatusCode::OK, "{m} {uri}");
                continue;
            }
            assert_eq!(op["security"], json!([{"bearer": []}]), "{m} {path}");
            assert!(
                op["responses"].get("401").is_some(),
                "{m} {path} documents no 401"
            );
            protected += 1;
            let (s, v) = call_as(&d, None, &m, &uri, Some(json!({}))).await;
            assert_eq!(s, StatusCode::UNAUTHORIZED, "{m} {uri}");
            assert_eq!(v["code"], "unauthorized");
            let (s, _) = call_as(&d, Some("wrong-token"), &m, &uri, Some(json!({}))).await;
            assert_eq!(s, StatusCode::UNAUTHORIZED, "{m} {uri}");
        }
    }
    assert_eq!(public, ["/api/health", "/api/openapi.json"]);
    assert!(protected >= 14, "{protected}");
    d.stop().await;
}

#[tokio::test]
async fn projects_and_lines_crud_with_stable_error_codes() {
    let mut d = api_only().await;
    let demo = json!({"name": "demo", "repo_path": d.repo().display().to_string()});
    let (s, p) = call(&d, "POST", "/api/projects", Some(demo.clone())).await;
    assert_eq!(s, StatusCode::CREATED, "{p}");
    assert_eq!(p["main_branch"], "main");
    // Valid by the document, and still nothing the daemon can use: 422 with its code.
    for repo_path in ["/nope", "relative/path"] {
        let nope = json!({"name": "x", "repo_path": repo_path});
        let r = call(&d, "POST", "/api/projects", Some(nope)).await;
        assert_code(&r, StatusCode::UNPROCESSABLE_ENTITY, "not_a_repository");
        assert!(
            r.1["message"].as_str().unwrap().contains(repo_path),
            "{}",
            r.1
        );
    }
    // Invalid by the document: 400.
    for body in [
        json!({"name": 1}),
        json!({"name": " \t\n", "repo_path": "/x"}),
    ] {
        let r = call(&d, "POST", "/api/projects", Some(body)).await;
        assert_code(&r, StatusCode::BAD_REQUEST, "bad_request");
    }
    let r = call(&d, "POST", "/api/projects", Some(demo)).await;
    assert_code(&r, StatusCode::CONFLICT, "exists");

    let (s, l) = call(
        &d,
        "POST",
        "/api/lines",
        Some(json!({"project_id": p["id"], "title": "t", "task": "do it"})),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED);
    let r = call(
        &d,
        "POST",
        "/api/lines",
        Some(json!({"project_id": "nope", "title": "t", "task": "do it"})),
    )
    .await;
    assert_code(&r, StatusCode::UNPROCESSABLE_ENTITY, "unknown_project");
    for blank in [json!({"title": " "}), json!({"task": "\r\n"})] {
        let mut body = json!({"project_id": p["id"], "title": "t", "task": "do it"});
        body.as_object_mut()
            .unwrap()
            .extend(blank.as_object().unwrap().clone());
        let r = call(&d, "POST", "/api/lines", Some(body)).await;
        assert_code(&r, StatusCode::BAD_REQUEST, "bad_request");
    }
    for k in [
        "id",
        "project_id",
        "title",
        "task",
        "priority",
        "state",
        "level",
        "session_id",
        "branch",
        "reason",
        "park_until",
        "steps",
    ] {
        assert!(l.get(k).is_some(), "line lacks {k}: {l}");
    }
    assert_eq!(l["state"], "queued");
    assert!(uuid::Uuid::parse_str(l["session_id"].as_str().unwrap()).is_ok());
    let id = l["id"].as_str().unwrap().to_string();

    let (s, v) = call(
        &d,
        "PATCH",
        &format!("/api/lines/{id}"),
        Some(json!({"priority": 9})),
    )
    .await;
    assert_eq!((s, v["priority"].as_i64()), (StatusCode::OK, Some(9)));
    // JSON Schema's integer: 7.0 is one; 7.5 and 2^31 are not.
    let line = format!("/api/lines/{id}");
    let (s, v) = call(&d, "PATCH", &line, Some(json!({"priority": 7.0}))).await;
    assert_eq!((s, v["priority"].as_i64()), (StatusCode::OK, Some(7)));
    for bad in [json!(7.5), json!(2_147_483_648_i64), json!("7")] {
        let r = call(&d, "PATCH", &line, Some(json!({ "priority": bad }))).await;
        assert_code(&r, StatusCode::BAD_REQUEST, "bad_request");
    }
    call(&d, "PATCH", &line, Some(json!({"priority": 9}))).await;
    let (s, v) = call(&d, "GET", "/api/lines?state=queued", None).await;
    assert_eq!((s, v.as_array().unwrap().len()), (StatusCode::OK, 1));
    let (s, v) = call(&d, "GET", "/api/lines?state=accepted", None).await;
    assert_eq!((s, v.as_array().unwrap().len()), (StatusCode::OK, 0));
    // Filters and paging bounds are enforced as documented, not clamped.
    for query in [
        "state=bogus",
        "limit=0",
        "limit=1001",
        "limit=1.5",
        "offset=-1",
        "offset=9007199254740992",
    ] {
        let r = call(&d, "GET", &format!("/api/lines?{query}"), None).await;
        assert_code(&r, StatusCode::BAD_REQUEST, "bad_request");
    }
    let (s, v) = call(
        &d,
        "GET",
        "/api/lines?limit=1000&offset=9007199254740991",
        None,
    )
    .await;
    assert_eq!((s, v.as_array().map(Vec::len)), (StatusCode::OK, Some(0)));
    let (s, v) = call(
        &d,
        "GET",
        &format!("/api/lines?project={}", p["id"].as_str().unwrap()),
        None,
    )
    .await;
    assert_eq!((s, v.as_array().unwrap().len()), (StatusCode::OK, 1));
    let (s, v) = call(&d, "GET", &format!("/api/lines/{id}"), None).await;
    assert_eq!(s, StatusCode::OK);
    assert!(
        v["journal"].is_array() && v["budget"]["cost_usd"].is_number(),
        "{v}"
    );
    let r = call(&d, "GET", "/api/lines/nope", None).await;
    assert_code(&r, StatusCode::NOT_FOUND, "not_found");
    let r = call(&d, "POST", &format!("/api/lines/{id}/accept"), None).await;
    assert_code(&r, StatusCode::CONFLICT, "invalid_state");
    let remarks = format!("/api/lines/{id}/remarks");
    let r = call(&d, "POST", &remarks, Some(json!({"text": "x"}))).await;
    assert_code(&r, StatusCode::CONFLICT, "invalid_state");
    let (s, v) = call(&d, "POST", &format!("/api/lines/{id}/cancel"), None).await;
    assert_eq!(
        (s, v["state"].as_str()),
        (StatusCode::OK, Some("cancelled"))
    );

    let (s, v) = call(&d, "GET", "/api/budget", None).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v["pools"][0]["kind"], "window");
    assert_eq!(v["pools"][0]["span_secs"], 18000);
    assert_eq!(v["pools"][0]["threshold_usd"], 50.0);
    assert_eq!(v["pools"].as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(
        v["kinds"].as_array().map(Vec::len),
        Some(conveyor_api::StepKind::ALL.len()),
        "{v}"
    );
    assert_eq!(v["misses"]["total"], 0);
    let (s, v) = call(&d, "GET", "/api/review", None).await;
    assert_eq!(
        (s, v["projects"].as_array().map(Vec::len)),
        (StatusCode::OK, Some(0))
    );
    let (s, v) = call(&d, "GET", "/api/openapi.json", None).await;
    assert_eq!(s, StatusCode::OK);
    for path in [
        "/api/lines",
        "/api/lines/{id}",
        "/api/lines/{id}/accept",
        "/api/lines/{id}/runs",
        "/api/runs/{id}/transcript",
        "/api/events",
        "/api/questions/{id}/answer",
    ] {
        assert!(v["paths"].get(path).is_some(), "openapi lacks {path}");
    }
    let r = call(&d, "GET", "/api/nothing-here", None).await;
    assert_code(&r, StatusCode::NOT_FOUND, "not_found");
    d.stop().await;
}

#[tokio::test]
async fn accept_refuses_to_delete_unmerged_work() {
    let mut d = api_only().await;
    let l = d.line("t", "x").await;
    let id = l.id.as_str();
    let branch = l.branch.as_str();
    // The line's branch holds a commit main lacks; the line claims to be done.
    git(d.repo(), &["checkout", "-q", "-b", branch]);
    std::fs::write(d.repo().join("b.txt"), "b\n").unwrap();
    git(d.repo(), &["add", "-A"]);
    git(d.repo(), &["commit", "-qm", "unmerged"]);
    git(d.repo(), &["checkout", "-q", "main"]);
    d.handle()
        .shared()
        .set_line_state(id, conveyor_api::LineState::AwaitingAcceptance, None, None)
        .await
        .unwrap();
    let r = call(&d, "POST", &format!("/api/lines/{id}/accept"), None).await;
    assert_code(&r, StatusCode::CONFLICT, "unmerged_commits");
    assert!(git(d.repo(), &["branch", "--list", branch]).contains(branch));
    // Once main holds it, accept deletes the branch.
    git(d.repo(), &["merge", "-q", "--no-edit", branch]);
    let (s, v) = call(&d, "POST", &format!("/api/lines/{id}/accept"), None).await;
    assert_eq!(
        (s, v["state"].as_str()),
        (StatusCode::OK, Some("accepted")),
        "{v}"
    );
    assert!(
        git(d.repo(), &["branch", "--list", branch])
            .trim()
            .is_empty()
    );
    d.stop().await;
}

/// A night that ended a minute ago (UTC): it is day now.
pub fn night_just_ended() -> String {
    let now = chrono::Utc::now();
    format!(
        "night = \"{}-{}\"\ntimezone = \"UTC\"\n",
        (now - chrono::Duration::hours(2)).format("%H:%M:%S"),
        (now - chrono::Duration::minutes(1)).format("%H:%M:%S")
    )
}

#[tokio::test]
async fn questions_are_answered_with_an_option_or_text() {
    // By day, so the daemon's rules decide the question by default without a judge run.
    let mut d = Daemon::builder()
        .config(&format!("run_lines = false\n{}", night_just_ended()))
        .start()
        .await;
    let l = d.line("t", "x").await;
    let id = l.id.as_str();
    let journal = d.handle().shared().agent_dir(id).join("journal.jsonl");
    std::fs::create_dir_all(journal.parent().unwrap()).unwrap();
    std::fs::write(
        &journal,
        "{\"kind\":\"question\",\"text\":\"Which DB?\",\"options\":[\"sqlite\",\"pg\"],\"default\":\"sqlite\"}\n{broken\n",
    )
    .unwrap();
    conveyor::line::ingest_journal(d.handle().shared(), id, None)
        .await
        .unwrap();
    // Ingesting again stores nothing twice.
    conveyor::line::ingest_journal(d.handle().shared(), id, None)
        .await
        .unwrap();
    let (_, v) = call(&d, "GET", &format!("/api/lines/{id}"), None).await;
    assert_eq!(v["journal"].as_array().unwrap().len(), 2);
    assert_eq!(v["journal"][1]["valid"], false);
    assert_eq!(v["journal"][1]["raw"], "{broken");
    // Not judged yet: counted, not listed, and not answerable.
    let (_, r) = call(&d, "GET", "/api/review", None).await;
    assert_eq!(r["pending_judgement"], 1, "{r}");
    assert!(r["frozen_at"].is_string(), "by day the list is frozen: {r}");
    assert_eq!(r["projects"].as_array().map(Vec::len), Some(0), "{r}");
    let (_, qs) = call(&d, "GET", "/api/decisions", None).await;
    assert_eq!(qs.as_array().map(Vec::len), Some(0), "{qs}");
    conveyor::line::judge_by_rules(d.handle().shared(), id)
        .await
        .unwrap();
    let (_, r) = call(&d, "GET", "/api/review", None).await;
    assert_eq!(r["pending_judgement"], 0, "{r}");
    let decided = &r["projects"][0]["decided"][0];
    assert_eq!(decided["source"], "daemon", "{r}");
    assert!(decided["why"].as_str().unwrap().contains("by day"), "{r}");
    let (_, all) = call(
        &d,
        "GET",
        &format!("/api/decisions?project={}", l.project_id),
        None,
    )
    .await;
    assert_eq!(all[0]["id"], decided["id"], "{all}");
    let r = call(&d, "GET", "/api/decisions?limit=0", None).await;
    assert_code(&r, StatusCode::BAD_REQUEST, "bad_request");
    // A decided default can still be overridden by Anton.
    let qid = decided["id"].as_str().unwrap();
    let answer = format!("/api/questions/{qid}/answer");
    let r = call(&d, "POST", &answer, Some(json!({"option": "mysql"}))).await;
    assert_code(&r, StatusCode::UNPROCESSABLE_ENTITY, "not_an_option");
    for body in [
        json!({}),
        json!({"option": "pg", "text": "pg"}),
        json!({"text": " "}),
        json!({"option": ""}),
    ] {
        let r = call(&d, "POST", &answer, Some(body)).await;
        assert_code(&r, StatusCode::BAD_REQUEST, "bad_request");
    }
    let (s, v) = call(&d, "POST", &answer, Some(json!({"option": "pg"}))).await;
    assert_eq!(
        (s, v["status"].as_str(), v["answer"].as_str()),
        (StatusCode::OK, Some("answered"), Some("pg"))
    );
    // The morning page still shows it, as answered, no longer decided; an answer step waits
    // to carry it to the line's session.
    let (_, r) = call(&d, "GET", "/api/review", None).await;
    let block = &r["projects"][0];
    assert_eq!(block["decided"].as_array().map(Vec::len), Some(0), "{r}");
    assert_eq!(block["answered"][0]["id"].as_str(), Some(qid), "{r}");
    assert_eq!(block["answered"][0]["answer"].as_str(), Some("pg"), "{r}");
    assert_eq!(block["answered"][0]["changeable"], true, "{r}");
    // Last night at a glance: the queued line counts as running; nothing judged away yet.
    let night = &r["night"];
    assert!(night["since"].is_string(), "{r}");
    assert_eq!(
        (
            &night["running"],
            &night["awaiting_acceptance"],
            &night["sent_back"],
            &night["duplicates"]
        ),
        (&json!(1), &json!(0), &json!(0), &json!(0)),
        "{r}"
    );
    assert_eq!(night["window_threshold_usd"], 50.0, "{r}");
    // Taken back before its step starts: decided again, its answer step gone; then again.
    let (s, v) = call(&d, "DELETE", &answer, None).await;
    assert_eq!(
        (s, v["status"].as_str(), v["answer"].is_null()),
        (StatusCode::OK, Some("decided"), true),
        "{v}"
    );
    let r = call(&d, "DELETE", &answer, None).await;
    assert_code(&r, StatusCode::CONFLICT, "invalid_state");
    let (_, v) = call(&d, "GET", &format!("/api/lines/{id}"), None).await;
    assert_eq!(v["steps"].as_array().map(Vec::len), Some(0), "{v}");
    let (s, _) = call(&d, "POST", &answer, Some(json!({"option": "pg"}))).await;
    assert_eq!(s, StatusCode::OK);
    let (_, v) = call(&d, "GET", &format!("/api/lines/{id}"), None).await;
    let kinds: Vec<&str> = v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["answer"], "{v}");
    // Once the line is cancelled, no step would carry an answer: refused.
    let (s, _) = call(&d, "POST", &format!("/api/lines/{id}/cancel"), None).await;
    assert_eq!(s, StatusCode::OK);
    let r = call(&d, "POST", &answer, Some(json!({"option": "sqlite"}))).await;
    assert_code(&r, StatusCode::CONFLICT, "invalid_state");
    assert!(
        r.1["message"].as_str().unwrap().contains("cancelled"),
        "{}",
        r.1
    );
    d.stop().await;
}

#[tokio::test]
async fn over_a_real_port_with_the_client_and_sse() {
    let mut d = api_only().await;
    let anon = Client::new(d.url(), None);
    assert_eq!(anon.health().await.unwrap().status, "ok");
    let e = anon.projects().await.unwrap_err();
    assert_eq!(e.code(), Some(conveyor_api::ErrorCode::Unauthorized));
    let c = d.client();
    let mut events = c.events().await.unwrap();
    let p = c
        .create_project(&NewProject {
            name: "real".into(),
            repo_path: d.repo().display().to_string(),
            main_branch: None,
        })
        .await
        .unwrap();
    let l = c
        .create_line(&NewLine {
            project_id: p.id.clone(),
            title: "t".into(),
            task: "x".into(),
            priority: Some(1),
            planfix_task: None,
        })
        .await
        .unwrap();
    let ev = tokio::time::timeout(std::time::Duration::from_secs(5), events.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(ev.kind, conveyor_api::EventKind::Project);
    let ev = tokio::time::timeout(std::time::Duration::from_secs(5), events.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        (ev.kind, ev.line_id.as_deref()),
        (conveyor_api::EventKind::Line, Some(l.id.as_str()))
    );
    assert_eq!(
        c.lines(Some(LineState::Queued), Some(&p.id))
            .await
            .unwrap()
            .len(),
        1
    );
    assert_eq!(c.set_priority(&l.id, 3).await.unwrap().priority, 3);
    d.stop().await;
}

/// The ids of `GET /api/lines?<query>`, in the daemon's order.
async fn listed(d: &Daemon, query: &str) -> Vec<String> {
    let (s, v) = call(d, "GET", &format!("/api/lines?{query}"), None).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    v.as_array()
        .unwrap()
        .iter()
        .map(|l| l["id"].as_str().unwrap().to_string())
        .collect()
}

/// The priority of each line of `GET /api/lines`, by id.
async fn priorities(d: &Daemon) -> std::collections::HashMap<String, i64> {
    let (_, v) = call(d, "GET", "/api/lines", None).await;
    v.as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["id"].as_str().unwrap().to_string(),
                l["priority"].as_i64().unwrap(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queued_lines_are_reordered_at_once_and_listed_so() {
    let mut d = api_only().await;
    let p = d.project().await.to_string();
    let q = d.add_project("q", &[("b.txt", "b\n")]).await;
    let mut mine = Vec::new();
    for title in ["a", "b", "c", "d"] {
        mine.push(d.line_in(&p, title, "do it", 0).await.id);
    }
    // A queued line of another project, not listed below: it keeps its priority.
    let other = d.line_in(&q, "e", "do it", 5).await.id;
    let before = listed(&d, &format!("state=queued&project={p}")).await;
    assert_eq!(before.len(), 4);

    // The project's queued lines reversed: the answer is them in that order, and so is the
    // daemon's list (the scheduler's order, the same ORDER BY: its own unit test,
    // `a_reorder_is_the_order_lines_start_in`, starts lines in a reordered queue).
    let reversed: Vec<String> = before.iter().rev().cloned().collect();
    let (s, v) = call(
        &d,
        "PUT",
        "/api/lines/order",
        Some(json!({ "line_ids": reversed })),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let answered: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["id"].as_str().unwrap())
        .collect();
    assert_eq!(answered, reversed);
    assert!(
        v.as_array().unwrap().iter().all(|l| l["state"] == "queued"),
        "{v}"
    );
    assert_eq!(
        listed(&d, &format!("state=queued&project={p}")).await,
        reversed
    );
    assert_eq!(priorities(&d).await[&other], 5);
    assert_eq!(listed(&d, "state=queued").await[0], other);

    // The whole queued group, the other project's line moved from first to third.
    let mut whole = reversed.clone();
    whole.insert(2, other.clone());
    let (s, v) = call(
        &d,
        "PUT",
        "/api/lines/order",
        Some(json!({ "line_ids": whole })),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(listed(&d, "state=queued").await, whole);
    assert_eq!(listed(&d, "").await, whole);

    // Refused, and nothing changes: a malformed body or no ids or too many (400), an id twice
    // (422), an id no line has (404), a line that is not queued (409).
    let cancelled = mine[1].clone();
    let (s, _) = call(&d, "POST", &format!("/api/lines/{cancelled}/cancel"), None).await;
    assert_eq!(s, StatusCode::OK);
    let kept = priorities(&d).await;
    let order = listed(&d, "").await;
    let too_many: Vec<String> = (0..=conveyor_api::ORDER_MAX_LINES)
        .map(|n| n.to_string())
        .collect();
    for body in [
        json!({}),
        json!({"line_ids": []}),
        json!({"line_ids": mine[0]}),
        json!({"line_ids": [1]}),
        json!({ "line_ids": too_many }),
    ] {
        let r = call(&d, "PUT", "/api/lines/order", Some(body)).await;
        assert_code(&r, StatusCode::BAD_REQUEST, "bad_request");
    }
    let twice = json!({"line_ids": [mine[0], mine[2], mine[0]]});
    let r = call(&d, "PUT", "/api/lines/order", Some(twice)).await;
    assert_code(&r, StatusCode::UNPROCESSABLE_ENTITY, "duplicate_line");
    assert!(
        r.1["message"].as_str().unwrap().contains(&mine[0]),
        "{}",
        r.1
    );
    let unknown = json!({"line_ids": [mine[2], "nope", mine[0]]});
    let r = call(&d, "PUT", "/api/lines/order", Some(unknown)).await;
    assert_code(&r, StatusCode::UNPROCESSABLE_ENTITY, "unknown_line");
    assert!(r.1["message"].as_str().unwrap().contains("nope"), "{}", r.1);
    let started = json!({"line_ids": [mine[2], cancelled, mine[0]]});
    let r = call(&d, "PUT", "/api/lines/order", Some(started)).await;
    assert_code(&r, StatusCode::CONFLICT, "invalid_state");
    let msg = r.1["message"].as_str().unwrap();
    assert!(
        msg.contains(&cancelled) && msg.contains("cancelled"),
        "{msg}"
    );
    assert_eq!(priorities(&d).await, kept);
    assert_eq!(listed(&d, "").await, order);

    // The typed client, over a real port.
    let c = d.client();
    let first_last = vec![mine[3].clone(), mine[2].clone(), mine[0].clone()];
    let lines = c.reorder(&first_last).await.unwrap();
    let ids: Vec<&str> = lines.iter().map(|l| l.id.as_str()).collect();
    assert_eq!(ids, first_last);
    assert_eq!(
        c.lines(Some(LineState::Queued), Some(&p))
            .await
            .unwrap()
            .iter()
            .map(|l| l.id.clone())
            .collect::<Vec<_>>(),
        first_last
    );
    let e = c
        .reorder(&[mine[0].clone(), mine[0].clone()])
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(conveyor_api::ErrorCode::DuplicateLine));

    // The document says all of it.
    let (_, doc) = call(&d, "GET", "/api/openapi.json", None).await;
    let op = &doc["paths"]["/api/lines/order"]["put"];
    assert_eq!(op["operationId"], "reorder_lines");
    for status in ["200", "400", "401", "409", "422", "500"] {
        assert!(op["responses"].get(status).is_some(), "no {status}: {op}");
    }
    // What the handler checks of the list's shape, the schema says: 1 to 1000 ids, each once.
    let ids = &doc["components"]["schemas"]["LineOrder"]["properties"]["line_ids"];
    assert_eq!(
        (&ids["minItems"], &ids["maxItems"], &ids["uniqueItems"]),
        (&json!(1), &json!(1000), &json!(true)),
        "{ids}"
    );
    // No 404: the order is always there; an id no line has is the body naming nothing (422).
    assert!(op["responses"].get("404").is_none(), "{op}");
    // A new line's id leads to a reorder of it (a client, or the fuzzer's stateful phase), as
    // the whole body: schemathesis is told not to merge it into a list of its own.
    let links = &doc["paths"]["/api/lines"]["post"]["responses"]["201"]["links"];
    assert!(
        links.as_object().unwrap().values().any(|l| *l
            == json!({"operationId": "reorder_lines", "requestBody": {"line_ids": ["$response.body#/id"]}, "x-schemathesis": {"merge_body": false}})),
        "{links}"
    );
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_line_list_pages_visibly_and_the_client_gets_every_line() {
    let mut d = api_only().await;
    let base = d.url();
    let c = d.client();
    let p = d.project().await;
    // More than one default page (200).
    const N: usize = 230;
    let mut ids = std::collections::BTreeSet::new();
    for i in 0..N {
        let l = c
            .create_line(&NewLine {
                project_id: p.into(),
                title: format!("line {i}"),
                task: "x".into(),
                priority: Some(i32::try_from(i % 3).unwrap()),
                planfix_task: None,
            })
            .await
            .unwrap();
        ids.insert(l.id);
    }
    // The first page says how many there are and where the next page starts.
    let http = reqwest::Client::new();
    let first = http
        .get(format!("{base}/api/lines?project={}", p))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), 200);
    let h = |r: &reqwest::Response, k: &str| {
        r.headers().get(k).map(|v| v.to_str().unwrap().to_string())
    };
    assert_eq!(h(&first, "x-total-count").as_deref(), Some("230"));
    assert_eq!(h(&first, "x-next-offset").as_deref(), Some("200"));
    let link = h(&first, "link").expect("a Link header");
    assert_eq!(
        link,
        format!(
            "</api/lines?limit=200&offset=200&project={}>; rel=\"next\"",
            p
        )
    );
    assert_eq!(first.json::<Vec<Value>>().await.unwrap().len(), 200);
    // The Link is followable; the last page has no next.
    let last = http
        .get(format!("{base}{}", &link[1..link.find('>').unwrap()]))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(h(&last, "x-total-count").as_deref(), Some("230"));
    assert_eq!(h(&last, "x-next-offset"), None);
    assert_eq!(h(&last, "link"), None);
    assert_eq!(last.json::<Vec<Value>>().await.unwrap().len(), 30);
    // The client follows the pages: every line, once.
    let all = c.lines(None, Some(p)).await.unwrap();
    assert_eq!(all.len(), N);
    let got: std::collections::BTreeSet<String> = all.into_iter().map(|l| l.id).collect();
    assert_eq!(got, ids);
    // Small pages, through the client: disjoint, complete, with the total.
    let mut paged = std::collections::BTreeSet::new();
    let mut offset = 0;
    loop {
        let page = c
            .lines_page(Some(LineState::Queued), Some(p), Some(7), offset)
            .await
            .unwrap();
        assert_eq!(page.total, N as u64);
        for l in page.lines {
            assert!(paged.insert(l.id), "a line on two pages");
        }
        match page.next_offset {
            Some(n) => offset = n,
            None => break,
        }
    }
    assert_eq!(paged, ids);
    // A filter that matches nothing: total 0, no next page.
    let none = c
        .lines_page(Some(LineState::Accepted), Some(p), None, 0)
        .await
        .unwrap();
    assert_eq!(
        (none.total, none.lines.len(), none.next_offset),
        (0, 0, None)
    );
    // The OpenAPI document describes the paging.
    let (_, doc) = call(&d, "GET", "/api/openapi.json", None).await;
    let get = &doc["paths"]["/api/lines"]["get"];
    let params: Vec<&str> = get["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert!(
        params.contains(&"limit") && params.contains(&"offset"),
        "{params:?}"
    );
    let headers = &get["responses"]["200"]["headers"];
    for k in ["X-Total-Count", "X-Next-Offset", "Link"] {
        assert!(headers.get(k).is_some(), "openapi lacks header {k}: {get}");
    }
    d.stop().await;
}
