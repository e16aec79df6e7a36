//! The `pult` binary: everything lives in the library, so tests can build the same app.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    pult_lib::run();
}
