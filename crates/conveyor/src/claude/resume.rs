//! The command that continues a run's session by hand on the daemon's machine, as pult's
//! "copy" button and the MCP server give it: `cd <worktree> && claude --resume <session>`.
//!
//! The CLI finds a session by its folder (`$HOME/.claude/projects/<cwd>`), so the command runs
//! in the worktree, as the agent's user and with the agent's `HOME` and `CLAUDE_CONFIG_DIR`
//! when the daemon gives its agents their own: otherwise `--resume` answers "No conversation
//! found" to whoever pastes it.

use std::collections::BTreeMap;
use std::path::Path;

/// Who the agent runs as, and where its CLI keeps its sessions.
#[derive(Debug, Clone)]
pub struct Resumer<'a> {
    pub claude_bin: &'a Path,
    /// The agent's own user (`root_mode = { user = … }`), when it has one.
    pub user: Option<&'a str>,
    /// The agent's environment (its `HOME` and `CLAUDE_CONFIG_DIR` are what matter).
    pub env: &'a BTreeMap<String, String>,
    /// The daemon's own `HOME`: an agent `HOME` equal to it needs no mention.
    pub own_home: Option<&'a str>,
}

impl Resumer<'_> {
    /// The command for `session` run in `worktree`.
    pub fn command(&self, worktree: &str, session: &str) -> String {
        let mut vars = Vec::new();
        if let Some(home) = self.env.get("HOME")
            && Some(home.as_str()) != self.own_home
        {
            vars.push(format!("HOME={}", word(home)));
        }
        if let Some(dir) = self.env.get("CLAUDE_CONFIG_DIR") {
            vars.push(format!("CLAUDE_CONFIG_DIR={}", word(dir)));
        }
        let mut cmd = String::new();
        if let Some(user) = self.user {
            // sudo's `-H` would set the target's home: the agent's may be another.
            cmd.push_str(&format!("sudo -u {} ", word(user)));
            if !vars.is_empty() {
                cmd.push_str("env ");
            }
        }
        for v in &vars {
            cmd.push_str(v);
            cmd.push(' ');
        }
        cmd.push_str(&word(&self.claude_bin.to_string_lossy()));
        cmd.push_str(" --resume ");
        cmd.push_str(&word(session));
        format!("cd {} && {cmd}", word(worktree))
    }
}

/// `s` as one word for a POSIX shell: as it is when nothing in it is special (the command is
/// read before it is pasted), else quoted as the hooks quote.
fn word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_./:@%+=,-".contains(&b));
    if plain {
        s.to_string()
    } else {
        crate::hook::quote(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    }

    #[test]
    fn the_plain_case_is_cd_and_resume() {
        let e = env(&[]);
        let r = Resumer {
            claude_bin: Path::new("claude"),
            user: None,
            env: &e,
            own_home: None,
        };
        assert_eq!(
            r.command("/srv/conveyor/worktrees/l1", "3f1c-9a"),
            "cd /srv/conveyor/worktrees/l1 && claude --resume 3f1c-9a"
        );
    }

    #[test]
    fn the_agents_own_home_and_user_are_kept_and_odd_paths_quoted() {
        let e = env(&[("HOME", "/var/lib/agent home"), ("CLAUDE_CONFIG_DIR", "/c")]);
        let r = Resumer {
            claude_bin: Path::new("/opt/it's/claude"),
            user: Some("conveyor"),
            env: &e,
            own_home: Some("/root"),
        };
        assert_eq!(
            r.command("/w/мой проект", "s"),
            "cd '/w/мой проект' && sudo -u conveyor env HOME='/var/lib/agent home' \
             CLAUDE_CONFIG_DIR=/c '/opt/it'\\''s/claude' --resume s"
        );
        // The daemon's own home is not repeated.
        let e = env(&[("HOME", "/root")]);
        let r = Resumer {
            claude_bin: Path::new("claude"),
            user: None,
            env: &e,
            own_home: Some("/root"),
        };
        assert_eq!(r.command("/w", "s"), "cd /w && claude --resume s");
    }
}
