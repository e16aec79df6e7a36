//! Anton's vault (`[vault] path, check`): the folder of notes that is every project's memory.
//! When its `check` fails (an encrypted volume not unlocked after a reboot, a share not
//! mounted), a step that needs memory does not start: its line waits `blocked` with
//! `vault_closed`, keeping its project, Anton is told once, the check runs again every
//! `recheck_secs`, and the lines go back to the state they left when it passes — without him.

use std::time::Duration;

use conveyor_api::{LineState, ReasonCode, StepKind};

use crate::error::Result;
use crate::exec::{self, Spec};
use crate::state::Shared;
use crate::store;

/// Where the time the vault was found closed is kept (across restarts: one notice per
/// closing, not one per start).
const CLOSED_SINCE: &str = "vault_closed_since";

/// The steps that need memory: they decide (plan, build, fix, answer, judge). The checking
/// roles read the diff, not the memory.
pub(crate) fn needs_memory(kind: StepKind) -> bool {
    !crate::roles::CHECKERS.contains(&kind)
}

/// Runs the vault's check now: `Some(open)`, or `None` when there is no check to run.
///
/// # Errors
/// None today: a check that cannot start counts as closed.
pub(crate) async fn check(sh: &Shared) -> Result<Option<bool>> {
    let Some(v) = &sh.cfg.vault else {
        return Ok(None);
    };
    let Some(cmd) = &v.check else {
        return Ok(None);
    };
    let spec = Spec::shell(cmd, &sh.cfg.data_dir);
    let open = match exec::run(&spec, Duration::from_secs(30), &sh.shutdown).await {
        Ok(out) => out.code == Some(0),
        Err(e) => {
            tracing::warn!(error = %e, "vault check cannot run: counted as closed");
            false
        }
    };
    *sh.vault_checked.lock().expect("vault poisoned") = Some(sh.clock.now_ms());
    Ok(Some(open))
}

/// Blocks `line` on the closed vault: `blocked` with `vault_closed` (it remembers the state
/// it left), and, for the first line of this closing, the notice to Anton — one transaction.
///
/// # Errors
/// Database errors.
pub(crate) async fn block(sh: &Shared, line_id: &str) -> Result<()> {
    let now = sh.clock.now_ms();
    let check = sh
        .cfg
        .vault
        .as_ref()
        .and_then(|v| v.check.clone())
        .unwrap_or_default();
    let why = format!("the vault is closed (`{check}` failed): waiting for it to open");
    let mut tx = sh.store.begin().await?;
    let since = match store::account::value(&mut tx, CLOSED_SINCE).await? {
        Some(s) => s.parse().unwrap_or(now),
        None => {
            store::account::set_value(&mut tx, CLOSED_SINCE, Some(&now.to_string())).await?;
            tracing::warn!(check, "the vault is closed: steps that need memory wait");
            now
        }
    };
    let t = crate::state::line_state_in(
        sh,
        &mut tx,
        line_id,
        LineState::Blocked,
        Some((ReasonCode::VaultClosed, &why)),
        None,
    )
    .await?;
    let told = crate::tell::vault_closed(&mut tx, &sh.cfg, since, now).await?;
    tx.commit().await?;
    sh.announce(t);
    if told {
        sh.told();
    }
    Ok(())
}

/// The scheduler's look at the lines the vault blocks: once `recheck_secs` have passed since
/// the last check, checks again; open, every such line goes back to the state it left.
///
/// # Errors
/// Database errors.
pub(crate) async fn recheck(sh: &Shared) -> Result<()> {
    let Some(v) = &sh.cfg.vault else {
        return Ok(());
    };
    let blocked =
        store::lines::blocked_by(&mut *sh.store.conn().await?, ReasonCode::VaultClosed).await?;
    let last = *sh.vault_checked.lock().expect("vault poisoned");
    let due = last.is_none_or(|at| {
        sh.clock.now_ms() - at >= i64::try_from(v.recheck_secs * 1000).unwrap_or(i64::MAX)
    });
    let since = store::account::value(&mut *sh.store.conn().await?, CLOSED_SINCE).await?;
    if (blocked.is_empty() && since.is_none()) || !due {
        return Ok(());
    }
    if check(sh).await? == Some(false) {
        return Ok(());
    }
    // Open (or no check any more): every line it held goes on.
    let mut tx = sh.store.begin().await?;
    store::account::set_value(&mut tx, CLOSED_SINCE, None).await?;
    let mut moved = Vec::new();
    for l in &blocked {
        let back = l.blocked_from.unwrap_or(LineState::Queued);
        moved.push(crate::state::line_state_in(sh, &mut tx, &l.id, back, None, None).await?);
    }
    tx.commit().await?;
    if !blocked.is_empty() {
        tracing::info!(lines = blocked.len(), "the vault is open: its lines go on");
    }
    for t in moved {
        sh.announce(t);
    }
    sh.wake.notify_one();
    Ok(())
}
