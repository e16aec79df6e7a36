//! Integration tests of conveyor: the real `claude` binary (from `node_modules`) against a
//! scripted mock of the Anthropic API, real git repositories and SQLite files in temp folders.

mod api;
mod budget_live;
mod catcher;
mod checker_denials;
mod cli;
mod crash;
mod dead_ends;
mod deploy;
mod flow;
mod fuzz;
mod guard;
mod house;
mod judge;
mod layout;
mod line_e2e;
mod mcp;
mod roles;
mod sandbox_net;
mod sandbox_preflight;
mod sandbox_red;
mod storm;
mod support;
mod telegram;
mod transcript;
mod usage_limit;
mod user_mode;
