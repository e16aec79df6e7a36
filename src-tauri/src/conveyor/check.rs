//! Whether a daemon answers, speaks our API and takes our token: the status the page shows.

use conveyor_api::{Client, ClientError};

use super::types::{ConnectionMode, ConnectionState, ConnectionStatus};

/// Whether a daemon of version `theirs` speaks our API: the same major version, and before
/// 1.0 the same minor one.
pub fn compatible(ours: &str, theirs: &str) -> bool {
    let parts = |v: &str| -> Vec<u64> {
        v.split(['.', '-', '+'])
            .take(2)
            .map(|p| p.parse().unwrap_or(u64::MAX))
            .collect()
    };
    let (a, b) = (parts(ours), parts(theirs));
    match (a.first(), b.first()) {
        (Some(0), Some(0)) => a.get(1) == b.get(1),
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// Asks the daemon who it is (`/api/health`, no token) and whether the token is good (an
/// authenticated call).
pub async fn check(client: &Client, mode: ConnectionMode, url: Option<String>) -> ConnectionStatus {
    let status = |state, message: Option<String>, version: Option<String>| ConnectionStatus {
        mode,
        url: url.clone(),
        state,
        message,
        daemon_version: version,
    };
    let health = match client.health().await {
        Ok(h) => h,
        Err(e) => return status(state_of(&e), Some(describe(&e, url.as_deref())), None),
    };
    let ours = env!("CARGO_PKG_VERSION");
    if !compatible(ours, &health.version) {
        return status(
            ConnectionState::VersionMismatch,
            Some(format!(
                "the daemon is version {}, this app speaks {ours}",
                health.version
            )),
            Some(health.version),
        );
    }
    // The lightest call behind the token.
    match client.projects().await {
        Ok(_) => status(ConnectionState::Connected, None, Some(health.version)),
        Err(e) => status(
            state_of(&e),
            Some(describe(&e, url.as_deref())),
            Some(health.version),
        ),
    }
}

pub(super) fn state_of(e: &ClientError) -> ConnectionState {
    match e {
        ClientError::Api { status: 401, .. } => ConnectionState::Unauthorized,
        ClientError::Transport(_) => ConnectionState::Unreachable,
        _ => ConnectionState::Failed,
    }
}

pub(super) fn describe(e: &ClientError, url: Option<&str>) -> String {
    let at = url.unwrap_or("the daemon");
    match e {
        ClientError::Api { status: 401, .. } => format!("{at} refused the token (401)"),
        ClientError::Transport(t) => format!("{at} does not answer: {t}"),
        other => format!("{at}: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_compatible_by_major_and_before_1_0_by_minor() {
        assert!(compatible("0.1.0", "0.1.7"));
        assert!(!compatible("0.1.0", "0.2.0"));
        assert!(compatible("1.2.0", "1.9.1"));
        assert!(!compatible("1.2.0", "2.0.0"));
        assert!(!compatible("0.1.0", "garbage"));
    }
}
