//! The lines table's tests: a line's state, its vault block and its order of making.

use super::super::testing;
use super::*;

/// A state no variant carries is an error, never read as some other state.
#[tokio::test]
async fn an_unknown_state_in_the_database_is_an_error() {
    let (_d, store) = testing::store().await;
    let id = testing::line(&store, "p", "l", 0, "queued").await;
    testing::exec(&store, "UPDATE lines SET state = 'exploded'").await;
    let e = get(&mut store.conn().await.unwrap(), &id)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown line state \"exploded\""), "{e}");
    let e = state_of(&mut store.conn().await.unwrap(), &id)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("exploded"), "{e}");
}

/// Only the vault's block remembers the state a line left (and keeps it through a second
/// such block); any other state forgets it, and a line that remembers holds its project.
#[tokio::test]
async fn a_line_blocked_by_the_vault_remembers_the_state_it_left_and_holds_its_project() {
    let (_d, store) = testing::store().await;
    let id = testing::line(&store, "p", "l", 0, "queued").await;
    let c = &mut store.conn().await.unwrap();
    async fn held(c: &mut SqliteConnection, id: &str) -> bool {
        projects_in_states(c, &[LineState::Running])
            .await
            .unwrap()
            .iter()
            .any(|(_, l)| l == id)
    }
    set_state(c, &id, LineState::Gate, None, None)
        .await
        .unwrap();
    set_state(c, &id, LineState::Merging, None, None)
        .await
        .unwrap();
    let l = get(c, &id).await.unwrap().unwrap();
    assert_eq!(l.blocked_from, None);
    assert!(
        l.updated_at > 1_000_000,
        "updated_at is a time: {}",
        l.updated_at
    );
    assert!(!held(c, &id).await);
    let vault = Some((ReasonCode::VaultClosed, "closed"));
    for _ in 0..2 {
        set_state(c, &id, LineState::Blocked, vault, None)
            .await
            .unwrap();
        let l = get(c, &id).await.unwrap().unwrap();
        assert_eq!(l.blocked_from, Some(LineState::Merging));
    }
    assert!(held(c, &id).await);
    assert_eq!(
        blocked_by(c, ReasonCode::VaultClosed).await.unwrap().len(),
        1
    );
    set_state(c, &id, LineState::Merging, None, None)
        .await
        .unwrap();
    assert_eq!(get(c, &id).await.unwrap().unwrap().blocked_from, None);
    assert!(!held(c, &id).await);
    // Blocked for another reason remembers nothing.
    let other = Some((ReasonCode::Internal, "boom"));
    set_state(c, &id, LineState::Blocked, other, None)
        .await
        .unwrap();
    assert_eq!(get(c, &id).await.unwrap().unwrap().blocked_from, None);
}

/// Two lines made in the same millisecond run in the order they were made, not in the order
/// of their random ids (CI once saw the second line of a test run first): the second is
/// made a millisecond later.
#[tokio::test]
async fn lines_made_in_the_same_millisecond_keep_the_order_they_were_made_in() {
    let (_d, store) = testing::store().await;
    // The later line's id sorts first.
    let first = testing::line(&store, "p", "z-first", 0, "queued").await;
    let c = &mut store.conn().await.unwrap();
    let made = get(c, &first).await.unwrap().unwrap().created_at;
    let mut row = LineRow::new("p".into(), "second".into(), "task".into(), 0, made);
    row.id = "a-second".into();
    insert(c, &mut row).await.unwrap();
    assert_eq!(row.created_at, made + 1);
    let stored = get(c, "a-second").await.unwrap().unwrap();
    assert_eq!((stored.created_at, stored.updated_at), (made + 1, made + 1));
    let ids = |ls: Vec<LineRow>| ls.into_iter().map(|l| l.id).collect::<Vec<_>>();
    let order = vec![first.clone(), row.id.clone()];
    assert_eq!(
        ids(in_states(c, &[LineState::Queued]).await.unwrap()),
        order
    );
    assert_eq!(ids(page(c, None, None, 10, 0).await.unwrap()), order);
    // A line made later keeps its own time.
    let mut third = LineRow::new("p".into(), "third".into(), "task".into(), 0, made + 50);
    insert(c, &mut third).await.unwrap();
    assert_eq!(third.created_at, made + 50);
}

#[tokio::test]
async fn a_cancelled_line_keeps_its_state() {
    let (_d, store) = testing::store().await;
    let id = testing::line(&store, "p", "l", 0, "queued").await;
    assert!(
        set_state(
            &mut store.conn().await.unwrap(),
            &id,
            LineState::Cancelled,
            Some((ReasonCode::Cancelled, "by Anton")),
            None
        )
        .await
        .unwrap()
    );
    assert!(
        !set_state(
            &mut store.conn().await.unwrap(),
            &id,
            LineState::Running,
            None,
            None
        )
        .await
        .unwrap()
    );
    let l = get(&mut store.conn().await.unwrap(), &id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(l.state, LineState::Cancelled);
    assert_eq!(l.reason.as_deref(), Some("by Anton"));
    assert_eq!(l.reason_code, Some(ReasonCode::Cancelled));
}
