//! The judge's rules: what the daemon decides about an agent's journal entry before any judge
//! run ([`rules`]), the judge's verdict file and what it may say ([`verdict`]), and which files a
//! step read ([`reads`], for "read the memory first"). The judge's run, prompt and hooks are
//! the daemon's (`judge`, `line::judge`).

pub mod reads;
pub mod rules;
pub mod verdict;
