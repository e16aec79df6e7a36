//! The rules of the sandbox every agent run lives in (DESIGN.md, "Containment: what an agent
//! can reach"). The daemon builds the sandbox and runs the proxy; this folder decides:
//!
//! - [`bwrap`]: the command line one run starts with: what it sees, what it may write, and the
//!   bridge to the daemon's proxy ([`Plan`]);
//! - [`writes`]: which writes a run's tool results say were refused;
//! - [`net`]: which hosts and ports a run may connect to ([`Egress`], [`admit`]), and the text
//!   a refusal carries;
//! - [`head`]: how the proxy reads a request's head to learn where it goes, and how it
//!   rewrites the heads it passes on.

pub mod bwrap;
pub mod head;
pub mod net;
pub mod writes;

pub use bwrap::{BASE, Forward, Mount, Plan, PlanError, TELEGRAM_SOCKET, proxy_env};
pub use head::{HeadError, RequestHead, ResponseHead};
pub use net::{Admission, Egress, EgressError, Host, Refused, Target, admit, is_local};
pub use writes::refused_writes;
