//! A bare Tauri window showing a static page: what pult's launch time and memory are compared
//! against (`scripts/bench-app.sh`).

#![allow(clippy::print_stderr)]

fn main() {
    if let Err(e) = tauri::Builder::default().run(tauri::generate_context!()) {
        eprintln!("bare-window: {e}");
        std::process::exit(1);
    }
}
