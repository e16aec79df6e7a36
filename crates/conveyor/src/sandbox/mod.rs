//! The sandbox's network (DESIGN.md, "Containment: what an agent can reach"): a run's own
//! network namespace whose only way out is the daemon. The rules are
//! [`conveyor_core::sandbox`]'s; this folder holds the effects:
//!
//! - [`proxy`]: outside the sandbox, one per run: [`Proxy`], an HTTP forward proxy on a Unix
//!   socket that admits the API and the project's `allow_hosts` and records every
//!   [`Refusal`]; [`ApiForward`], a second socket piped straight to the API, for a loopback
//!   base URL the CLI reaches without the proxy (the tests' mock).
//! - [`wrap`]: one run's [`Sandbox`]: the paths this machine has for the run's bwrap command
//!   line, its proxy served while it runs, and what it was refused ([`Found`]) once it ends.
//! - [`bridge`]: inside, `conveyord bridge`: TCP on the sandbox's loopback piped to those
//!   sockets, then the agent's command.
//!
//! What the runner puts together (bwrap binds the sockets in; `HTTPS_PROXY` and friends point
//! at the bridge) is told in docs/conveyor.md, "Containment".

pub mod bridge;
pub mod proxy;
pub mod wrap;

pub use conveyor_core::sandbox::Egress;

// Off Unix the Unix sockets are stand-ins (`crate::no_unix`), so the daemon compiles on Windows.
#[cfg(not(unix))]
use crate::no_unix;

pub use proxy::{ApiForward, Proxy, ProxyBuilder, Refusal};
pub use wrap::{Found, Sandbox, Setup};
