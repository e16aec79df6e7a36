//! Integration tests: the real `deepwork` binary against real Node programs
//! (`tests/fixtures/fake-bridge.mjs`, `tests/fixtures/mock-server.mjs`) in temp folders.

mod support;

mod apply;
mod bridge;
mod check;
mod config;
mod fresh;
mod limits;
mod openai;
#[cfg(target_os = "linux")]
mod prespawn;
mod protocol_cli;
mod sandbox;
mod selftest;
mod unicode;
