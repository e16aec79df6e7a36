//! `refusals`: what the sandbox around a line's agent runs refused (DESIGN.md, "Containment"):
//! a write outside what the run may write, a host the proxy did not let through, a ref put
//! back after the run. Kept once per run and thing tried, shown on the line beside the guard's
//! denials, given to the judge as facts; a refused host may carry the daemon's question to
//! Anton about it (`question_id`).

use std::collections::HashMap;

use conveyor_api::{self as api, QuestionStatus, RefusalKind};
use sqlx::{Row, SqliteConnection};

use super::names::{Stored, column};
use super::sql::{marks, rfc3339};
use crate::error::Result;

/// A refusal as the runner reports it after a run.
#[derive(Debug, Clone)]
pub struct NewRefusal<'a> {
    pub run_id: i64,
    pub line_id: &'a str,
    pub kind: RefusalKind,
    /// The path, `host:port`, or `refs/heads/x: <old> -> <new>`.
    pub what: &'a str,
    /// When it was refused, unix ms.
    pub at: i64,
}

/// Keeps a refusal; `false` when the run had this one already (the same kind and what).
///
/// # Errors
/// Database errors.
pub async fn record(c: &mut SqliteConnection, r: &NewRefusal<'_>) -> Result<bool> {
    // `ON CONFLICT` on the one key, not `INSERT OR IGNORE`, which would also swallow a broken
    // constraint (a kind the table does not know).
    let done = sqlx::query(
        "INSERT INTO refusals (line_id, run_id, kind, what, at) VALUES (?,?,?,?,?)
         ON CONFLICT (run_id, kind, what) DO NOTHING",
    )
    .bind(r.line_id)
    .bind(r.run_id)
    .bind(r.kind.name())
    .bind(r.what)
    .bind(r.at)
    .execute(&mut *c)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// Notes the daemon's question a run's refusal raised.
///
/// # Errors
/// Database errors.
pub async fn set_question(
    c: &mut SqliteConnection,
    (run_id, kind, what): (i64, RefusalKind, &str),
    question_id: &str,
) -> Result<()> {
    sqlx::query("UPDATE refusals SET question_id = ? WHERE run_id = ? AND kind = ? AND what = ?")
        .bind(question_id)
        .bind(run_id)
        .bind(kind.name())
        .bind(what)
        .execute(&mut *c)
        .await?;
    Ok(())
}

/// The refusals of these lines' runs, by line, oldest first, each with the number of its
/// run's step.
///
/// # Errors
/// Database errors; a stored kind no variant carries.
pub async fn of_lines(
    c: &mut SqliteConnection,
    line_ids: &[String],
) -> Result<HashMap<String, Vec<api::Refusal>>> {
    let mut out: HashMap<String, Vec<api::Refusal>> = HashMap::new();
    if line_ids.is_empty() {
        return Ok(out);
    }
    let sql = format!(
        "SELECT f.line_id, s.n, f.kind, f.what, f.at
         FROM refusals f JOIN runs r ON r.id = f.run_id JOIN steps s ON s.id = r.step_id
         WHERE f.line_id IN ({}) ORDER BY f.at, f.id",
        marks(line_ids.len())
    );
    let mut q = sqlx::query(&sql);
    for id in line_ids {
        q = q.bind(id);
    }
    for r in q.fetch_all(&mut *c).await? {
        let n: i64 = r.try_get("n")?;
        out.entry(r.try_get("line_id")?)
            .or_default()
            .push(api::Refusal {
                step_n: u32::try_from(n).unwrap_or(0),
                kind: column(&r, "kind")?,
                what: r.try_get("what")?,
                at: rfc3339(r.try_get("at")?),
            });
    }
    Ok(out)
}

/// A refused host the daemon asked Anton about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AskedHost {
    /// `host:port`, as refused.
    pub what: String,
    pub line_id: String,
    /// Where its question stands.
    pub status: QuestionStatus,
    /// Anton's answer, once given.
    pub answer: Option<String>,
}

/// The refused hosts the daemon asked Anton about in the project's lines that are not done
/// (accepted or cancelled), oldest first.
///
/// # Errors
/// Database errors; a stored status no variant carries.
pub async fn asked_hosts(c: &mut SqliteConnection, project_id: &str) -> Result<Vec<AskedHost>> {
    let rows = sqlx::query(
        "SELECT f.what, f.line_id, q.status, q.answer
         FROM refusals f JOIN questions q ON q.id = f.question_id JOIN lines l ON l.id = f.line_id
         WHERE l.project_id = ? AND f.kind = 'host'
           AND l.state NOT IN ('accepted', 'cancelled')
         ORDER BY f.at, f.id",
    )
    .bind(project_id)
    .fetch_all(&mut *c)
    .await?;
    let asked = rows
        .iter()
        .map(|r| {
            Ok(AskedHost {
                what: r.try_get("what")?,
                line_id: r.try_get("line_id")?,
                status: column(r, "status")?,
                answer: r.try_get("answer")?,
            })
        })
        .collect::<std::result::Result<_, sqlx::Error>>()?;
    Ok(asked)
}

#[cfg(test)]
mod tests {
    use super::super::{questions, steps, testing};
    use super::*;
    use conveyor_api::StepKind;

    fn new<'a>(
        run: i64,
        line: &'a str,
        kind: RefusalKind,
        what: &'a str,
        at: i64,
    ) -> NewRefusal<'a> {
        NewRefusal {
            run_id: run,
            line_id: line,
            kind,
            what,
            at,
        }
    }

    /// A run that refuses the same thing twice keeps it once; another run, or another kind
    /// with the same text, is another refusal.
    #[tokio::test]
    async fn a_refusal_is_kept_once_per_run_kind_and_what() {
        let (_d, store) = testing::store().await;
        let line = testing::line(&store, "p", "l", 0, "running").await;
        let step = testing::step(&store, &line, StepKind::Executor).await;
        let first = testing::run(&store, &step.id, &line).await;
        let second = testing::run(&store, &step.id, &line).await;
        let c = &mut store.conn().await.unwrap();
        let host = RefusalKind::Host;
        assert!(
            record(c, &new(first, &line, host, "example.com:443", 10))
                .await
                .unwrap()
        );
        assert!(
            !record(c, &new(first, &line, host, "example.com:443", 11))
                .await
                .unwrap()
        );
        assert!(
            record(c, &new(second, &line, host, "example.com:443", 12))
                .await
                .unwrap()
        );
        assert!(
            record(
                c,
                &new(first, &line, RefusalKind::Write, "example.com:443", 13)
            )
            .await
            .unwrap()
        );
        let all = of_lines(c, std::slice::from_ref(&line))
            .await
            .unwrap()
            .remove(&line)
            .unwrap();
        assert_eq!(
            all.iter()
                .map(|r| (r.kind, r.at.as_str()))
                .collect::<Vec<_>>(),
            [
                (host, "1970-01-01T00:00:00.010Z"),
                (host, "1970-01-01T00:00:00.012Z"),
                (RefusalKind::Write, "1970-01-01T00:00:00.013Z"),
            ]
        );
    }

    /// Each line gets its own, oldest first whatever order they were written in, with the
    /// number of the step whose run was refused; a line without any is absent.
    #[tokio::test]
    async fn refusals_come_by_line_oldest_first_with_their_step() {
        let (_d, store) = testing::store().await;
        let a = testing::line(&store, "p", "a", 0, "running").await;
        let b = testing::line(&store, "p", "b", 1, "queued").await;
        let quiet = testing::line(&store, "p", "quiet", 2, "queued").await;
        let plan = testing::step(&store, &a, StepKind::Planner).await;
        let exec = testing::step(&store, &a, StepKind::Executor).await;
        let other = testing::step(&store, &b, StepKind::Planner).await;
        let (r1, r2, r3) = (
            testing::run(&store, &plan.id, &a).await,
            testing::run(&store, &exec.id, &a).await,
            testing::run(&store, &other.id, &b).await,
        );
        let c = &mut store.conn().await.unwrap();
        let branch = "refs/heads/main: aaa -> bbb";
        record(c, &new(r2, &a, RefusalKind::Ref, branch, 300))
            .await
            .unwrap();
        record(c, &new(r1, &a, RefusalKind::Write, "/etc/hosts", 100))
            .await
            .unwrap();
        record(c, &new(r3, &b, RefusalKind::Host, "pypi.org:443", 200))
            .await
            .unwrap();
        let got = of_lines(c, &[a.clone(), b.clone(), quiet.clone()])
            .await
            .unwrap();
        let of = |l: &str| -> Vec<(u32, RefusalKind, String)> {
            got[l]
                .iter()
                .map(|r| (r.step_n, r.kind, r.what.clone()))
                .collect()
        };
        let (n1, n2) = (
            u32::try_from(plan.n).unwrap(),
            u32::try_from(exec.n).unwrap(),
        );
        assert_ne!(n1, n2);
        assert_eq!(
            of(&a),
            [
                (n1, RefusalKind::Write, "/etc/hosts".into()),
                (n2, RefusalKind::Ref, branch.into()),
            ]
        );
        assert_eq!(
            of(&b),
            [(
                u32::try_from(other.n).unwrap(),
                RefusalKind::Host,
                "pypi.org:443".into()
            )]
        );
        assert!(!got.contains_key(&quiet));
        assert!(of_lines(c, &[]).await.unwrap().is_empty());
        // The run's step is what counts, not the line's latest.
        steps::add(c, &a, StepKind::Fixer, "s", "t", &[])
            .await
            .unwrap();
        let again = of_lines(c, std::slice::from_ref(&a)).await.unwrap();
        assert_eq!(again[&a][0].step_n, n1);
    }

    /// Only refused hosts with a question are asked ones, and only in the project's lines that
    /// are not done.
    #[tokio::test]
    async fn asked_hosts_are_those_with_a_question_in_open_lines_of_the_project() {
        let (_d, store) = testing::store().await;
        let open = testing::line(&store, "p", "open", 0, "running").await;
        let done = testing::line(&store, "p", "done", 1, "accepted").await;
        let elsewhere = testing::line(&store, "other", "elsewhere", 2, "running").await;
        let mut runs = Vec::new();
        for l in [&open, &done, &elsewhere] {
            let s = testing::step(&store, l, StepKind::Executor).await;
            runs.push(testing::run(&store, &s.id, l).await);
        }
        let c = &mut store.conn().await.unwrap();
        for (run, line) in runs.iter().zip([&open, &done, &elsewhere]) {
            record(c, &new(*run, line, RefusalKind::Host, "pypi.org:443", 1))
                .await
                .unwrap();
            record(
                c,
                &new(*run, line, RefusalKind::Host, "not-asked.org:443", 2),
            )
            .await
            .unwrap();
            let q = questions::ask_as_daemon(
                c,
                line,
                &questions::DaemonQuestion {
                    text: "allow pypi.org?",
                    options: &[],
                    default: None,
                    why: "w",
                    reversible: true,
                    expensive: false,
                    validated: "v",
                    urgent: false,
                },
                1,
            )
            .await
            .unwrap()
            .unwrap();
            set_question(c, (*run, RefusalKind::Host, "pypi.org:443"), &q)
                .await
                .unwrap();
            if line == &open {
                assert!(questions::answer(c, &q, "allowed", 2).await.unwrap());
            }
        }
        assert_eq!(
            asked_hosts(c, "p").await.unwrap(),
            [AskedHost {
                what: "pypi.org:443".into(),
                line_id: open.clone(),
                status: QuestionStatus::Answered,
                answer: Some("allowed".into()),
            }]
        );
    }
}
