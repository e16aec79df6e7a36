//! The texts around the question: what the model is told, and where.
//!
//! The first message is PREFIX, the folder tree, the ticked files, TAIL_REMINDER and the
//! question, in that order. The tail reminder stands right before the question because the
//! live runs showed that a model ignores instructions 20 KB above the question. Later
//! messages carry the tool results and STEP_REMINDER. Each text can be overridden by a file
//! of the same name in a prompts folder.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::index::Index;
use crate::sandbox::Sandbox;
use crate::tools::{self, Limits};
use crate::tree;

/// The file names of the overridable texts.
pub const PREFIX_FILE: &str = "prefix.txt";
/// See [`PREFIX_FILE`].
pub const TAIL_REMINDER_FILE: &str = "tail_reminder.txt";
/// See [`PREFIX_FILE`].
pub const STEP_REMINDER_FILE: &str = "step_reminder.txt";

/// A prompt file that exists but cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("cannot read prompt file {}: {source}", path.display())]
pub struct PromptError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

/// The three texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompts {
    /// Tool instructions at the top of the first message.
    pub prefix: String,
    /// The short repetition right before the question.
    pub tail_reminder: String,
    /// The reminder after the tool results of later messages.
    pub step_reminder: String,
}

impl Default for Prompts {
    fn default() -> Self {
        Prompts {
            prefix: include_str!("../prompts/prefix.txt").to_owned(),
            tail_reminder: include_str!("../prompts/tail_reminder.txt").to_owned(),
            step_reminder: include_str!("../prompts/step_reminder.txt").to_owned(),
        }
    }
}

impl Prompts {
    /// The built-in texts, each replaced by `dir/<name>.txt` where that file exists.
    ///
    /// # Errors
    /// When a file exists but cannot be read.
    pub fn load(dir: Option<&Path>) -> Result<Prompts, PromptError> {
        let mut p = Prompts::default();
        let Some(dir) = dir else { return Ok(p) };
        for (name, slot) in [
            (PREFIX_FILE, &mut p.prefix),
            (TAIL_REMINDER_FILE, &mut p.tail_reminder),
            (STEP_REMINDER_FILE, &mut p.step_reminder),
        ] {
            let path = dir.join(name);
            match std::fs::read_to_string(&path) {
                Ok(text) => *slot = text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => return Err(PromptError { path, source }),
            }
        }
        Ok(p)
    }

    fn fill(&self, text: &str, limits: &Limits) -> String {
        text.replace("{need_chars}", &limits.need_chars.to_string())
            .replace("{find_hits}", &limits.find_hits.to_string())
            .replace("{list_paths}", &limits.list_paths.to_string())
    }

    /// The first message of a run; the tree comes from `index`.
    pub fn first_message(
        &self,
        sandbox: &Sandbox,
        index: &Index,
        ticked: &[String],
        question: &str,
        limits: &Limits,
    ) -> String {
        let mut m = self.fill(&self.prefix, limits);
        ensure_blank_line(&mut m);
        let _ = writeln!(m, "Project folder tree ({} files):", index.len());
        m.push_str(&tree::render(index.paths(), limits.tree));
        if !ticked.is_empty() {
            ensure_blank_line(&mut m);
            let paths: Vec<&str> = ticked.iter().map(String::as_str).collect();
            let mut budget = limits.need_chars;
            tools::need(
                sandbox,
                &paths,
                &mut budget,
                limits.need_chars,
                &mut m,
                "files attached by the user",
                // The first message has no run memory: a later NEED for a ticked file sends
                // it again, as before.
                None,
            );
        }
        ensure_blank_line(&mut m);
        m.push_str(&self.fill(&self.tail_reminder, limits));
        if !m.ends_with('\n') {
            m.push('\n');
        }
        m.push_str(question.trim());
        m
    }

    /// A later message: the results of the previous answer's requests and the reminder.
    pub fn next_message(&self, results: &str, limits: &Limits) -> String {
        let mut m = String::with_capacity(results.len() + self.step_reminder.len() + 64);
        m.push_str("Results of your requests:\n\n");
        m.push_str(results);
        ensure_blank_line(&mut m);
        m.push_str(&self.fill(&self.step_reminder, limits));
        m
    }
}

fn ensure_blank_line(m: &mut String) {
    while !m.is_empty() && !m.ends_with("\n\n") {
        m.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_message_order_prefix_tree_files_reminder_question() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("ui.html"), "<html>").unwrap();
        std::fs::write(d.path().join("ask.mjs"), "export {}").unwrap();
        let sb = Sandbox::new(d.path()).unwrap();
        let p = Prompts {
            prefix: "PREFIX {find_hits}".into(),
            tail_reminder: "TAIL".into(),
            step_reminder: "STEP".into(),
        };
        let index = Index::walk(&sb);
        let m = p.first_message(
            &sb,
            &index,
            &["ui.html".into()],
            " where? ",
            &Limits::default(),
        );
        let at = |s: &str| m.find(s).unwrap_or_else(|| panic!("{s} missing in {m}"));
        assert!(m.starts_with("PREFIX 100\n\n"));
        assert!(at("Project folder tree (2 files):\nask.mjs\nui.html\n") < at("--- ui.html"));
        assert!(at("<html>") < at("TAIL"));
        assert!(m.ends_with("TAIL\nwhere?"), "{m}");
    }

    #[test]
    fn overrides_replace_only_the_files_that_exist() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join(TAIL_REMINDER_FILE), "mine").unwrap();
        let p = Prompts::load(Some(d.path())).unwrap();
        assert_eq!(p.tail_reminder, "mine");
        assert_eq!(p.prefix, Prompts::default().prefix);
    }
}
