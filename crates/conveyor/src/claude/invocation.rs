//! What one run is, and the command line it becomes: `-p`, `--session-id` or `--resume`,
//! stream-json output, the settings, the permission mode, the tools and agents, and the
//! run's own `--max-budget-usd` cap.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::exec::Spec;

/// What to run.
#[derive(Debug, Clone)]
pub struct Invocation {
    pub claude_bin: PathBuf,
    pub cwd: PathBuf,
    pub prompt: String,
    pub session_id: String,
    /// `--resume` instead of `--session-id`.
    pub resume: bool,
    pub settings: PathBuf,
    pub permission_mode: String,
    pub allowed_tools: Vec<String>,
    /// `--tools`: the built-in tools the run has (all when `None`).
    pub tools: Option<String>,
    /// `--agent`: the session's main thread runs as this agent (a checking role's own).
    pub agent: Option<String>,
    /// `--agents`: JSON defining agents for this run (the project's, read from fresh main).
    pub agents: Option<String>,
    /// `--add-dir` (the line's folder, for the non-bypass modes).
    pub add_dir: Option<PathBuf>,
    pub model: Option<String>,
    pub env: BTreeMap<String, String>,
    pub user: Option<(u32, u32)>,
    /// Inherit the daemon's environment (else only `PATH` and `env`).
    pub inherit_env: bool,
    /// `--max-budget-usd`: the run stops (`error_max_budget_usd`) once it has cost this much.
    /// The CLI counts the run's own cost, not the resumed session's cumulative total.
    pub max_budget_usd: Option<f64>,
    /// Where the raw stream-json goes.
    pub log: PathBuf,
    pub timeout: Duration,
    /// The sandbox the run starts in (`bwrap … -- conveyord bridge … --` before the CLI's own
    /// command line, and the environment that sends its traffic to the bridge); `None` with
    /// `[sandbox] mode = "off"`.
    pub wrap: Option<Wrap>,
}

/// What a sandboxed run starts with before the CLI.
#[derive(Debug, Clone, Default)]
pub struct Wrap {
    /// The program and its arguments, up to the `--` after which the CLI's command line comes.
    pub prefix: Vec<String>,
    /// Set on top of the run's environment.
    pub env: BTreeMap<String, String>,
}

impl Invocation {
    pub(super) fn spec(&self) -> Spec {
        let mut s = Spec::new(&self.claude_bin, &self.cwd).args([
            "-p".to_string(),
            self.prompt.clone(),
            if self.resume {
                "--resume"
            } else {
                "--session-id"
            }
            .to_string(),
            self.session_id.clone(),
            "--output-format".into(),
            "stream-json".into(),
            "--verbose".into(),
            "--settings".into(),
            self.settings.to_string_lossy().into_owned(),
            "--permission-mode".into(),
            self.permission_mode.clone(),
        ]);
        if !self.allowed_tools.is_empty() {
            s = s.args(["--allowedTools".to_string(), self.allowed_tools.join(",")]);
        }
        if let Some(t) = &self.tools {
            s = s.args(["--tools".to_string(), t.clone()]);
        }
        if let Some(a) = &self.agents {
            s = s.args(["--agents".to_string(), a.clone()]);
        }
        if let Some(a) = &self.agent {
            s = s.args(["--agent".to_string(), a.clone()]);
        }
        if let Some(d) = &self.add_dir {
            s = s.args(["--add-dir".to_string(), d.to_string_lossy().into_owned()]);
        }
        if let Some(m) = &self.model {
            s = s.args(["--model".to_string(), m.clone()]);
        }
        if let Some(usd) = self.max_budget_usd {
            s = s.args(["--max-budget-usd".to_string(), format!("{usd:.4}")]);
        }
        s.env = self.env.clone();
        s.user = self.user;
        s.clear_env = !self.inherit_env;
        if let Some(w) = &self.wrap
            && let Some((program, args)) = w.prefix.split_first()
        {
            let mut all = args.to_vec();
            all.push(s.program.to_string_lossy().into_owned());
            all.append(&mut s.args);
            s.program = program.into();
            s.args = all;
            s.env.extend(w.env.clone());
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_is_passed_to_the_cli() {
        let inv = Invocation {
            agent: None,
            agents: None,
            claude_bin: "claude".into(),
            cwd: "/tmp".into(),
            prompt: "p".into(),
            session_id: "s".into(),
            resume: true,
            settings: "/tmp/s.json".into(),
            permission_mode: "bypassPermissions".into(),
            allowed_tools: Vec::new(),
            tools: None,
            add_dir: None,
            model: None,
            env: BTreeMap::new(),
            user: None,
            inherit_env: true,
            max_budget_usd: Some(1.5),
            log: "/tmp/log".into(),
            timeout: Duration::from_secs(1),
            wrap: None,
        };
        let args = inv.spec().args;
        let at = args.iter().position(|a| a == "--max-budget-usd").unwrap();
        assert_eq!(args[at + 1], "1.5000");
        let none = Invocation {
            max_budget_usd: None,
            ..inv
        };
        assert!(!none.spec().args.iter().any(|a| a == "--max-budget-usd"));
    }

    #[test]
    fn a_sandboxed_run_starts_with_the_wrap_and_the_cli_after_its_double_dash() {
        let inv = Invocation {
            agent: None,
            agents: None,
            claude_bin: "/opt/claude".into(),
            cwd: "/tmp".into(),
            prompt: "p".into(),
            session_id: "s".into(),
            resume: false,
            settings: "/tmp/s.json".into(),
            permission_mode: "bypassPermissions".into(),
            allowed_tools: Vec::new(),
            tools: None,
            add_dir: None,
            model: None,
            env: BTreeMap::from([("HOME".into(), "/h".into())]),
            user: None,
            inherit_env: true,
            max_budget_usd: None,
            log: "/tmp/log".into(),
            timeout: Duration::from_secs(1),
            wrap: Some(Wrap {
                prefix: vec!["/usr/bin/bwrap".into(), "--unshare-all".into(), "--".into()],
                env: BTreeMap::from([("HTTPS_PROXY".into(), "http://127.0.0.1:3128".into())]),
            }),
        };
        let s = inv.spec();
        assert_eq!(s.program, std::path::Path::new("/usr/bin/bwrap"));
        assert_eq!(&s.args[..4], ["--unshare-all", "--", "/opt/claude", "-p"]);
        assert_eq!(s.env["HOME"], "/h");
        assert_eq!(s.env["HTTPS_PROXY"], "http://127.0.0.1:3128");
    }
}
