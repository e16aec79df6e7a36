//! Delivering what `tell` wrote: the Catcher's queue ([`send`]) and Anton's presses and
//! replies there ([`poll`]), PlanFix's queue ([`planfix`]). Each runs as its own task from
//! the daemon's start, and returns at once when its channel is not configured.

pub(crate) mod planfix;
pub(crate) mod poll;
pub(crate) mod send;
