//! A project's own checklist: `.conveyor.toml` in its repository, read from fresh main (never
//! from the line's branch, so an agent cannot weaken its own gate).

use serde::Deserialize;

use super::invalid::{NotYetRead, describe_toml_error};
use crate::error::Error;
use conveyor_core::guard::Production;
use conveyor_core::plan::Check;
use conveyor_core::roles::Roles;

/// A project's `.conveyor.toml`, read from fresh main (never from the line's branch). An
/// unknown key is an error (DESIGN.md), so a misspelt gate is never silently no gate.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Checklist {
    /// The whole suite, run in the worktree and after the merge.
    #[serde(default)]
    pub regression: Option<String>,
    /// More commands the gate runs in the worktree, each with the exit code it must give.
    #[serde(default)]
    pub checklist: Vec<Check>,
    /// Browser clicks: a command the gate runs at every level when it is set; mandatory when
    /// the diff touches `ui_paths`.
    #[serde(default)]
    pub ui_scenarios: Option<String>,
    /// Run after the merge from a scratch worktree of the new main, with
    /// `CONVEYOR_PREVIOUS_COMMIT` and `CONVEYOR_COMMIT` set; one per project at a time.
    #[serde(default)]
    pub deploy: Option<String>,
    /// Tried after a deploy until it exits 0 (`health_retries`, `health_interval_secs`,
    /// `health_deadline_secs`); none: a deploy that exits 0 is green.
    #[serde(default)]
    pub health_check: Option<String>,
    /// Run when the deploy or its health check stays red; none: Anton is asked.
    #[serde(default)]
    pub rollback: Option<String>,
    /// The project's own preflight items: each command must exit with its code on the
    /// daemon's machine (e.g. that Playwright's browser is installed), or the project's lines
    /// wait, saying which.
    #[serde(default)]
    pub preflight: Vec<Check>,
    /// The project's memory: globs of files (notes, decisions, conventions) an agent reads
    /// before asking Anton. The judge reads them; a question from a step that read none of
    /// them is sent back ("read the memory first").
    #[serde(default)]
    pub memory: Vec<String>,
    /// A diff touching these globs raises the line's level to `full`.
    #[serde(default)]
    pub full_level_paths: Vec<String>,
    /// A diff touching these makes `ui_scenarios` mandatory.
    #[serde(default)]
    pub ui_paths: Vec<String>,
    /// Where the project's tests live: before deploy the diff must touch one of these, or
    /// the journal must have an `uncovered` entry saying how the change was checked by hand.
    /// Empty: the check is off (a guess at where tests live would send fixers after lines
    /// that only touch docs), and the preflight warns about it.
    #[serde(default)]
    pub tests_paths: Vec<String>,
    /// The project's own agents for the checking roles.
    #[serde(default)]
    pub roles: Roles,
    /// The project's own hooks at the three boundaries.
    #[serde(default)]
    pub hooks: Hooks,
    /// What the project's agents never do on their own, beside the built-in rules.
    #[serde(default)]
    pub never: Never,
    /// `[production]`: the variables, hosts and files that hold the project's production
    /// settings; the guard denies a command that reaches them (`env`, `hosts`, `files`).
    #[serde(default)]
    pub production: Production,
    /// `[sandbox]`: what the project's agents may reach beyond their worktree.
    #[serde(default)]
    pub sandbox: ProjectSandbox,
    /// `[telegram]`: the project's test bot and production bot, for its scenarios
    /// (`.conveyor/telegram/*.toml`).
    #[serde(default)]
    pub telegram: super::ProjectTelegram,
    /// Regexes on a red check's output that mean an external service is down, not the line's
    /// fault: the line waits and tries again (`preflight_interval_secs` later), never fails.
    #[serde(default)]
    pub external_errors: Vec<String>,
    /// How many times the health check is tried after a deploy.
    #[serde(default = "default_health_retries")]
    pub health_retries: u32,
    /// Seconds between two tries of the health check.
    #[serde(default = "default_health_interval")]
    pub health_interval_secs: u64,
    /// Seconds after the deploy by which the health check must be green.
    #[serde(default = "default_health_deadline")]
    pub health_deadline_secs: u64,
}

fn default_health_retries() -> u32 {
    5
}

fn default_health_interval() -> u64 {
    10
}

fn default_health_deadline() -> u64 {
    300
}

/// `[never]`: regexes on a Bash command that the guard denies, like its built-in rules.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Never {
    pub patterns: Vec<String>,
}

/// `[sandbox]` of `.conveyor.toml`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ProjectSandbox {
    /// Hosts the agents' network may reach through the daemon's proxy besides the Anthropic
    /// API: `host`, `host:port` or `*.suffix[:port]` (e.g. `registry.npmjs.org:443`). Never
    /// the daemon's own machine or network: local addresses are refused whatever is listed.
    pub allow_hosts: Vec<String>,
}

/// `[hooks]`: commands run through `sh -c` in the line's worktree with JSON on stdin
/// (`{"boundary", "line_id", "project_id", "entry"?, "diff_stat"}`); exit 0 passes, anything
/// else blocks with stdout as the reason.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Hooks {
    /// Before a question reaches Anton.
    pub before_question: Option<String>,
    /// Before the line counts as done (at the gate).
    pub before_done: Option<String>,
    /// Before the merge and deploy.
    pub before_deploy: Option<String>,
}

impl Checklist {
    /// Parses `.conveyor.toml` text.
    ///
    /// # Errors
    /// [`Error::Checklist`] with line and column.
    pub fn parse(text: &str) -> Result<Checklist, Error> {
        let list: Checklist = toml::from_str(text).map_err(|e| Error::Checklist {
            message: describe_toml_error(text, &e),
        })?;
        let regexes = list
            .never
            .patterns
            .iter()
            .map(|p| ("[never] patterns", p))
            .chain(list.external_errors.iter().map(|p| ("external_errors", p)));
        if let Err(e) = list.production.validate() {
            return Err(Error::Checklist {
                message: format!(".conveyor.toml: [production] {e}"),
            });
        }
        if let Err(e) = conveyor_core::sandbox::Egress::new(None, &list.sandbox.allow_hosts) {
            return Err(Error::Checklist {
                message: format!(".conveyor.toml: [sandbox] allow_hosts: {e}"),
            });
        }
        for (key, p) in regexes {
            if let Err(e) = regex::Regex::new(p) {
                return Err(Error::Checklist {
                    message: format!(".conveyor.toml: {key}: {p:?} is not a regex: {e}"),
                });
            }
        }
        Ok(list)
    }

    /// Whether `output` (a red check's) says an external service is down.
    pub fn external(&self, output: &str) -> Option<&str> {
        self.external_errors
            .iter()
            .find(|p| regex::Regex::new(p).is_ok_and(|re| re.is_match(output)))
            .map(String::as_str)
    }

    /// The keys this checklist sets that no code reads yet: none since the deploy came.
    pub fn not_yet_read(&self) -> Vec<NotYetRead> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checklist_parses_the_design_example() {
        let c = Checklist::parse(
            r#"regression = "cargo test"
checklist = [{ cmd = "npm run lint", expect_exit = 0 }]
full_level_paths = ["migrations/**"]
"#,
        )
        .unwrap();
        assert_eq!(c.regression.as_deref(), Some("cargo test"));
        assert_eq!(c.checklist[0].cmd, "npm run lint");
    }

    #[test]
    fn a_never_pattern_that_is_no_regex_is_an_error_that_names_it() {
        let e = Checklist::parse("[never]\npatterns = [\"deploy(\"]\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("[never] patterns") && e.contains("deploy("),
            "{e}"
        );
        let ok = Checklist::parse("[never]\npatterns = [\"make\\\\s+release\"]\n").unwrap();
        assert_eq!(ok.never.patterns, [r"make\s+release"]);
    }

    /// A misspelt key in a project's checklist is an error naming it, not a gate that
    /// silently checks less.
    #[test]
    fn an_unknown_checklist_key_is_an_error_that_names_it() {
        let e = Checklist::parse("regresion = \"cargo test\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("regresion"), "{e}");
        assert!(e.contains(".conveyor.toml"), "{e}");
    }

    #[test]
    fn production_is_read_and_a_bad_entry_is_an_error_that_names_it() {
        let ok = Checklist::parse(
            "[production]\nenv = [\"PROD_DATABASE_URL\", \"PROD_*\"]\nhosts = [\"db.prod.example.com\"]\nfiles = [\".env.production\", \"config/prod.*\"]\n",
        )
        .unwrap();
        assert_eq!(ok.production.env, ["PROD_DATABASE_URL", "PROD_*"]);
        assert_eq!(ok.production.hosts, ["db.prod.example.com"]);
        assert_eq!(ok.production.files.len(), 2);
        for (text, names) in [
            ("env = [\"PROD-DB\"]", "[production] env"),
            ("hosts = [\"postgres://db.prod/app\"]", "[production] hosts"),
            ("files = [\"config/[prod\"]", "[production] files"),
            ("envs = []", "envs"),
        ] {
            let e = Checklist::parse(&format!("[production]\n{text}\n"))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(".conveyor.toml") && e.contains(names),
                "{text}: {e}"
            );
        }
    }

    #[test]
    fn sandbox_hosts_are_read_and_a_bad_one_is_an_error_that_names_it() {
        let ok = Checklist::parse(
            "[sandbox]\nallow_hosts = [\"registry.npmjs.org:443\", \"*.crates.io\"]\n",
        )
        .unwrap();
        assert_eq!(ok.sandbox.allow_hosts.len(), 2);
        let e = Checklist::parse("[sandbox]\nallow_hosts = [\"http://x/\"]\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("[sandbox] allow_hosts") && e.contains("http://x/"),
            "{e}"
        );
        let e = Checklist::parse("[sandbox]\nallowed_hosts = []\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("allowed_hosts"), "{e}");
    }
}
