//! What a step's agent actually read, from its runs' stream-json (`assistant` events'
//! `tool_use` blocks, a subagent's among them): the files of `Read`, the paths of `Grep` and
//! `Glob`, and the commands of `Bash`. The judge is shown the list, and the memory rule asks
//! whether any of it is the project's memory.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

/// The reads of one or more runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reads {
    /// `Read` files, and the paths `Grep` and `Glob` searched, as given.
    pub paths: BTreeSet<String>,
    /// `Bash` commands, as given.
    pub commands: Vec<String>,
}

impl Reads {
    /// Adds what one stream-json log shows; lines that are not JSON are skipped (a log cut by
    /// a kill ends mid-line).
    pub fn add_log(&mut self, text: &str) {
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            if v["type"] != "assistant" {
                continue;
            }
            let Some(blocks) = v["message"]["content"].as_array() else {
                continue;
            };
            for b in blocks.iter().filter(|b| b["type"] == "tool_use") {
                let input = &b["input"];
                let s = |k: &str| input[k].as_str().map(str::to_string);
                match b["name"].as_str().unwrap_or_default() {
                    "Read" | "NotebookRead" => {
                        if let Some(p) = s("file_path").or_else(|| s("notebook_path")) {
                            self.paths.insert(p);
                        }
                    }
                    "Grep" | "Glob" => {
                        if let Some(p) = s("path") {
                            self.paths.insert(p);
                        }
                    }
                    "Bash" => {
                        if let Some(c) = s("command") {
                            self.commands.push(c);
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    /// Whether any read is one of `memory` (absolute paths of files or folders): a file read,
    /// a search inside it, or a command that names it (absolute, or relative to `cwd`).
    pub fn touch(&self, memory: &[PathBuf], cwd: &Path) -> bool {
        let hit = |p: &Path| memory.iter().any(|m| p == m || p.starts_with(m));
        let read = self.paths.iter().any(|p| {
            let p = Path::new(p);
            hit(&normal(&if p.is_absolute() {
                p.to_path_buf()
            } else {
                cwd.join(p)
            }))
        });
        read || self.commands.iter().any(|c| {
            memory.iter().any(|m| {
                c.contains(&*m.to_string_lossy())
                    || m.strip_prefix(cwd).is_ok_and(|rel| {
                        !rel.as_os_str().is_empty() && c.contains(&*rel.to_string_lossy())
                    })
            })
        })
    }

    /// The list the judge is shown: paths, then commands, at most `max` items.
    pub fn listing(&self, max: usize) -> Vec<String> {
        self.paths
            .iter()
            .cloned()
            .chain(self.commands.iter().map(|c| format!("$ {c}")))
            .take(max)
            .collect()
    }
}

/// `a/./b/../c` as `a/c`, without touching the disk.
fn normal(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = r#"{"type":"system","subtype":"init"}
{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Read","input":{"file_path":"/w/docs/memory.md"}}]}}
{"type":"assistant","parent_tool_use_id":"toolu_1","message":{"content":[{"type":"tool_use","name":"Grep","input":{"pattern":"x","path":"src"}}]}}
{"type":"assistant","message":{"content":[{"type":"text","text":"hi"},{"type":"tool_use","name":"Bash","input":{"command":"cat notes/adr.md"}}]}}
{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Wri"#;

    #[test]
    fn reads_come_from_every_tool_use_a_subagent_s_too() {
        let mut r = Reads::default();
        r.add_log(LOG);
        assert_eq!(
            r.paths.iter().map(String::as_str).collect::<Vec<_>>(),
            ["/w/docs/memory.md", "src"]
        );
        assert_eq!(r.commands, ["cat notes/adr.md"]);
        assert_eq!(r.listing(2).len(), 2);
    }

    #[test]
    fn the_memory_is_touched_by_a_read_a_search_inside_it_or_a_command_naming_it() {
        let mut r = Reads::default();
        r.add_log(LOG);
        let cwd = Path::new("/w");
        assert!(r.touch(&[PathBuf::from("/w/docs/memory.md")], cwd));
        assert!(!r.touch(&[PathBuf::from("/w/src/a.rs")], cwd));
        assert!(
            r.touch(&[PathBuf::from("/w/src")], cwd),
            "a search inside a memory folder"
        );
        assert!(
            r.touch(&[PathBuf::from("/w/notes/adr.md")], cwd),
            "a command naming it"
        );
        assert!(!r.touch(&[PathBuf::from("/vault")], cwd));
        let mut dots = Reads::default();
        dots.paths.insert("./docs/../docs/memory.md".into());
        assert!(dots.touch(&[PathBuf::from("/w/docs/memory.md")], cwd));
        assert!(!Reads::default().touch(&[PathBuf::from("/w/docs/memory.md")], cwd));
    }
}
