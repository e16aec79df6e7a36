//! A project's own agent (`.claude/agents/<name>.md`: YAML front matter with `name`,
//! `description`, `tools`, `model`, then the prompt), turned into the `--agents` JSON the
//! run is given.
//!
//! Observed with the CLI 2.1.332 against the mock (docs/conveyor.md, "Roles"): `--agent <name>`
//! makes the agent's prompt the session's whole system prompt and its `tools` the run's tools;
//! an agent defined with `--agents` wins over a file of the same name in the worktree. So the
//! daemon reads the file from fresh main and passes it with `--agents`: a line's branch that
//! edits its own reviewer changes nothing for its own review.

use serde_json::{Map, Value, json};

/// The definition read from the file.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentDef {
    pub name: String,
    pub description: String,
    pub prompt: String,
    /// `None`: every tool.
    pub tools: Option<Vec<String>>,
    pub model: Option<String>,
}

/// Why an agent file cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AgentFileError {
    #[error("it has no front matter (a `---` line, `key: value` lines, a `---` line)")]
    NoFrontMatter,
    #[error("its prompt (the text after the front matter) is empty")]
    NoPrompt,
}

/// Parses an agent file. A missing `description` is the name; `tools` is a comma-separated
/// list (or a YAML list on one line, `[Read, Grep]`).
///
/// # Errors
/// [`AgentFileError`]: what is missing.
pub fn parse(name: &str, text: &str) -> Result<AgentDef, AgentFileError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    if lines.next().map(str::trim) != Some("---") {
        return Err(AgentFileError::NoFrontMatter);
    }
    let mut front = Vec::new();
    let mut closed = false;
    for l in lines.by_ref() {
        if l.trim() == "---" {
            closed = true;
            break;
        }
        front.push(l);
    }
    if !closed {
        return Err(AgentFileError::NoFrontMatter);
    }
    let prompt = lines.collect::<Vec<_>>().join("\n").trim().to_string();
    if prompt.is_empty() {
        return Err(AgentFileError::NoPrompt);
    }
    let field = |k: &str| {
        front.iter().find_map(|l| {
            let (key, v) = l.split_once(':')?;
            (key.trim() == k).then(|| unquote(v.trim()).to_string())
        })
    };
    let tools = field("tools").filter(|t| !t.is_empty()).map(|t| {
        t.trim_start_matches('[')
            .trim_end_matches(']')
            .split(',')
            .map(|x| unquote(x.trim()).to_string())
            .filter(|x| !x.is_empty())
            .collect()
    });
    Ok(AgentDef {
        name: name.to_string(),
        description: field("description")
            .filter(|d| !d.is_empty())
            .unwrap_or_else(|| name.to_string()),
        prompt,
        tools,
        model: field("model").filter(|m| !m.is_empty() && m != "inherit"),
    })
}

fn unquote(s: &str) -> &str {
    s.strip_prefix('"')
        .and_then(|x| x.strip_suffix('"'))
        .or_else(|| s.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')))
        .unwrap_or(s)
}

impl AgentDef {
    /// The `--agents` JSON for this one agent. A role must write its verdict file: an agent
    /// whose `tools` leave out `Write` gets it (the run's guard lets it write nothing else).
    pub fn agents_json(&self) -> String {
        let mut def = Map::new();
        def.insert("description".into(), json!(self.description));
        def.insert("prompt".into(), json!(self.prompt));
        if let Some(t) = &self.tools {
            let mut t = t.clone();
            if !t.iter().any(|x| x == "Write") {
                t.push("Write".into());
            }
            def.insert("tools".into(), json!(t));
        }
        if let Some(m) = &self.model {
            def.insert("model".into(), json!(m));
        }
        let mut all = Map::new();
        all.insert(self.name.clone(), Value::Object(def));
        Value::Object(all).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_front_matter_and_prompt_become_the_agents_json() {
        let d = parse(
            "code-reviewer",
            "---\nname: code-reviewer\ndescription: \"Reviews code\"\ntools: Read, Grep, Bash\nmodel: inherit\n---\n\nYou review.\nCarefully.\n",
        )
        .unwrap();
        assert_eq!(d.description, "Reviews code");
        assert_eq!(d.prompt, "You review.\nCarefully.");
        assert_eq!(d.model, None);
        let v: Value = serde_json::from_str(&d.agents_json()).unwrap();
        assert_eq!(
            v["code-reviewer"]["tools"],
            json!(["Read", "Grep", "Bash", "Write"])
        );
        assert_eq!(v["code-reviewer"]["prompt"], "You review.\nCarefully.");

        let d = parse("s", "---\ntools: [Read, Glob]\n---\nx").unwrap();
        assert_eq!(d.description, "s");
        assert_eq!(d.tools.unwrap(), ["Read", "Glob"]);
        let d = parse("s", "---\nname: s\n---\nx").unwrap();
        let v: Value = serde_json::from_str(&d.agents_json()).unwrap();
        assert!(v["s"].get("tools").is_none(), "no list: every tool");
    }

    #[test]
    fn a_file_without_front_matter_or_prompt_is_refused_saying_which() {
        assert_eq!(parse("a", "just text"), Err(AgentFileError::NoFrontMatter));
        assert_eq!(
            parse("a", "---\nname: a\nno end"),
            Err(AgentFileError::NoFrontMatter)
        );
        assert_eq!(
            parse("a", "---\nname: a\n---\n \n"),
            Err(AgentFileError::NoPrompt)
        );
    }
}
