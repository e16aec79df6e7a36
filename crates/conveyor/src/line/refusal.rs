//! What the sandbox refused a line's agents (a write outside, a host, a ref), recorded on the
//! line. Placeholder until the store's table lands: logged only.

use crate::error::Result;
use crate::sandbox::Found;
use crate::state::Shared;

/// Records what one run was refused.
///
/// # Errors
/// Database errors.
pub(super) async fn record_run(
    _sh: &Shared,
    line_id: &str,
    run_id: i64,
    found: &[Found],
) -> Result<()> {
    for f in found {
        tracing::warn!(line = line_id, run = run_id, kind = ?f.kind, what = %f.what, "the sandbox refused");
    }
    Ok(())
}
