//! The never-autonomous guard's place in a run: the hook's command line and its context file.
//! What the guard allows is `conveyor_core::guard` ([`check`]).

pub use conveyor_core::guard::{
    Context, Denial, Env, MATCHER, Production, ProductionError, check, hook_answer, shell,
};

/// The hook's command line: `conveyord hook guard --context <file>`.
pub fn hook_command(bin: &std::path::Path, context: &std::path::Path) -> String {
    format!(
        "{} hook guard --context {}",
        crate::hook::quote(&bin.to_string_lossy()),
        crate::hook::quote(&context.to_string_lossy())
    )
}

/// `conveyord hook guard`: the answer for one input, the context read from its file. A
/// context that cannot be read is the empty one (no remote is the project's own): the guard
/// fails closed. The values of the variables a command expands are the hook's own: the CLI
/// runs its hooks with the agent's environment, so they are what the command would see, and
/// no production secret is written to the context file.
pub fn hook_with_context_file(input: &str, context: &std::path::Path) -> Option<String> {
    hook_answer(input, &read_context(context), &|name| {
        std::env::var(name).ok()
    })
}

/// The context file's context; one that cannot be read is the empty one.
pub fn read_context(context: &std::path::Path) -> Context {
    std::fs::read_to_string(context)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}
