//! Reaching production: the built-in reading of a command line (a production marker and a
//! destructive or schema-changing verb on one line; a migration or database tool pointed at the
//! production environment) and the project's own declaration of what production is
//! (`[production]` in `.conveyor.toml`: the variables, hosts and files that hold it). A
//! connection string rarely appears in a command; `psql "$DATABASE_URL"`, `source
//! .env.production` and `dotenv -e .env.production -- prisma migrate deploy` reach the same
//! database, so a declared variable expanded, a declared file named, a declared host in the
//! command or in the value of a variable it expands is production, whatever the verb: the
//! guard cannot tell what `./migrate` does with the connection.

use std::sync::LazyLock;

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use regex::Regex;
use serde::{Deserialize, Serialize};

use super::shell::Simple;
use super::{Denial, Env, deny};

/// `[production]` of a project's `.conveyor.toml`: what holds its production settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Production {
    /// Names of the variables that hold production settings (`PROD_DATABASE_URL`; `*` matches
    /// any run of characters: `PROD_*`). A command that expands one is denied.
    pub env: Vec<String>,
    /// Hosts, addresses or other values whose appearance means production
    /// (`db.prod.example.com`, `10.1.2.3`, `acme_production`), matched whole and without
    /// regard to case. Denied: a command that names one, or that expands a variable whose
    /// value (in the agent's environment) holds one.
    pub hosts: Vec<String>,
    /// Globs of the files that hold production settings (`.env.production`,
    /// `config/prod.*`), relative to the repository; one without a `/` matches at any depth.
    /// Denied: a command that names one and a write to one.
    pub files: Vec<String>,
}

/// A `[production]` entry that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProductionError {
    /// An `env` entry that is not a variable name.
    #[error("env: {name:?} is not a variable name (letters, digits, `_`, and `*` for any run)")]
    Env { name: String },
    /// A `hosts` entry that would match too much or never.
    #[error("hosts: {host:?} {why}")]
    Host { host: String, why: &'static str },
    /// A `files` entry that is not a glob.
    #[error("files: {glob:?} is not a glob: {error}")]
    File { glob: String, error: String },
}

impl Production {
    /// Checks every entry, as `.conveyor.toml` is read.
    ///
    /// # Errors
    /// The first entry that cannot be used.
    pub fn validate(&self) -> Result<(), ProductionError> {
        for name in &self.env {
            let ok = !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '*')
                && name.chars().any(|c| c != '*');
            if !ok {
                return Err(ProductionError::Env { name: name.clone() });
            }
        }
        for host in &self.hosts {
            let why = if host.contains("://") || host.contains('/') {
                Some("is a URL or a path: write its host alone")
            } else if host.chars().any(char::is_whitespace) {
                Some("holds a space")
            } else if host.contains('*') {
                Some("holds `*`: a name under a host matches already, write the host")
            } else if host.chars().count() < 3 {
                Some("is shorter than 3 characters: it would match too much")
            } else {
                None
            };
            if let Some(why) = why {
                return Err(ProductionError::Host {
                    host: host.clone(),
                    why,
                });
            }
        }
        for glob in &self.files {
            if let Err(e) = Glob::new(glob) {
                return Err(ProductionError::File {
                    glob: glob.clone(),
                    error: e.kind().to_string(),
                });
            }
        }
        Ok(())
    }

    fn is_empty(&self) -> bool {
        self.env.is_empty() && self.hosts.is_empty() && self.files.is_empty()
    }
}

/// A [`Production`] made ready to match. Entries that do not compile were refused when
/// `.conveyor.toml` was read and are left out here.
struct Declared<'a> {
    env: Vec<(&'a str, Regex)>,
    hosts: &'a [String],
    files: GlobSet,
    /// One file each glob names (`config/prod.*` → `config/prod.x`), for a shell glob in a
    /// command (`cat config/*`) to be matched against.
    samples: Vec<String>,
}

impl<'a> Declared<'a> {
    fn new(p: &'a Production) -> Self {
        let env = p
            .env
            .iter()
            .filter_map(|n| {
                let re = format!("^{}$", regex::escape(n).replace(r"\*", ".*"));
                Some((n.as_str(), Regex::new(&re).ok()?))
            })
            .collect();
        let mut files = GlobSetBuilder::new();
        for g in &p.files {
            if let Ok(g) = GlobBuilder::new(g).literal_separator(true).build() {
                files.add(g);
            }
        }
        Declared {
            env,
            hosts: &p.hosts,
            files: files.build().unwrap_or_else(|_| GlobSet::empty()),
            samples: p.files.iter().map(|g| sample(g)).collect(),
        }
    }

    fn variable(&self, name: &str) -> Option<&'a str> {
        self.env
            .iter()
            .find(|(_, re)| re.is_match(name))
            .map(|(n, _)| *n)
    }

    fn host_in(&self, text: &str) -> Option<&'a str> {
        self.hosts
            .iter()
            .find(|h| host_in(text, h))
            .map(String::as_str)
    }

    /// Whether a word of a command names a declared file: the word itself, an option's value
    /// (`--env-file=.env.production`), a `@file` upload, any tail of its path, or a shell glob
    /// that would match one.
    fn file(&self, word: &str) -> bool {
        let mut candidates = vec![word];
        candidates.extend(word.match_indices('=').map(|(i, _)| &word[i + 1..]));
        let candidates: Vec<&str> = candidates
            .into_iter()
            .map(|w| w.trim_start_matches('@').trim_start_matches("file://"))
            .collect();
        for c in &candidates {
            let c = c.trim_start_matches("./");
            let tails = std::iter::once(c).chain(c.match_indices('/').map(|(i, _)| &c[i + 1..]));
            for t in tails {
                if !t.is_empty() && self.files.is_match(t) {
                    return true;
                }
            }
            if c.contains(['*', '?', '['])
                && let Ok(g) = GlobBuilder::new(c).literal_separator(true).build()
            {
                let m = g.compile_matcher();
                if self.samples.iter().any(|s| m.is_match(s)) {
                    return true;
                }
            }
        }
        false
    }
}

/// A file a glob names: each `*` or `?` as `x`, a class as its first character, a choice as
/// its first branch, `**/` as nothing.
fn sample(glob: &str) -> String {
    let mut out = String::new();
    let glob = glob.replace("**/", "");
    let mut it = glob.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '*' | '?' => out.push('x'),
            '[' => {
                let mut first = None;
                for x in it.by_ref() {
                    if x == ']' {
                        break;
                    }
                    if first.is_none() && x != '!' && x != '^' {
                        first = Some(x);
                    }
                }
                out.extend(first);
            }
            '{' => {
                let mut level = 1;
                let mut taking = true;
                for x in it.by_ref() {
                    match x {
                        '{' => level += 1,
                        '}' => level -= 1,
                        ',' if level == 1 => taking = false,
                        _ if taking => out.push(x),
                        _ => {}
                    }
                    if level == 0 {
                        break;
                    }
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// Whether `host` appears whole in `text` (case aside): not inside a longer name or address
/// (`10.1.2.3` is not in `10.1.2.30`), though a name under it is (`replica.db.prod.x`).
fn host_in(text: &str, host: &str) -> bool {
    let text = text.to_ascii_lowercase();
    let host = host.to_ascii_lowercase();
    let inner = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    text.match_indices(&host).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let mut after = text[i + host.len()..].chars();
        let (a, b) = (after.next(), after.next());
        let longer = before.is_some_and(inner)
            || a.is_some_and(inner)
            || (a == Some('.') && b.is_some_and(inner));
        !longer
    })
}

/// Programs whose words are text, not a connection: a host named there is written or looked
/// for, not reached.
const TEXT: [&str; 9] = [
    "echo", "printf", "grep", "egrep", "fgrep", "rg", "ag", "ack", "git",
];

/// The variables that select an application's environment.
const ENV_SELECTORS: [&str; 11] = [
    "DJANGO_SETTINGS_MODULE",
    "NODE_ENV",
    "RAILS_ENV",
    "RACK_ENV",
    "APP_ENV",
    "MIX_ENV",
    "FLASK_ENV",
    "DJANGO_ENV",
    "ENVIRONMENT",
    "STAGE",
    "ENV",
];

/// Database clients and migration tools that do nothing else.
const DB_TOOLS: [&str; 16] = [
    "psql",
    "mysql",
    "mariadb",
    "mongosh",
    "mongo",
    "redis-cli",
    "sqlcmd",
    "flyway",
    "liquibase",
    "dbmate",
    "goose",
    "migrate",
    "alembic",
    "atlas",
    "db-migrate",
    "node-pg-migrate",
];

/// `production`, `prod`, or a settings module named so (`config.settings.production`).
fn is_production(value: &str) -> bool {
    let last = value.rsplit('.').next().unwrap_or_default();
    matches!(last.to_ascii_lowercase().as_str(), "production" | "prod")
}

/// A migration or database tool: a client, or a command whose words ask for a migration, a
/// seed, a schema change or a database console (`knex migrate:latest`, `npm run migrate`,
/// `rake db:migrate`, `prisma db push`, `rails console`), not a build that merely runs in the
/// production environment (`NODE_ENV=production npm run build`).
fn is_db_tool(s: &Simple) -> bool {
    let program = s.program.as_str();
    if TEXT.contains(&program) {
        return false;
    }
    DB_TOOLS.contains(&program)
        || s.args.iter().any(|a| {
            let a = a.to_ascii_lowercase();
            a.contains("migrat")
                || a.starts_with("db:")
                || a.contains(":db:")
                || a.starts_with("seed")
                || a.starts_with("schema:")
                || (matches!(program, "prisma" | "drizzle-kit")
                    && matches!(a.as_str(), "db" | "push" | "studio"))
                || (matches!(program, "rails" | "rake" | "bundle")
                    && matches!(a.as_str(), "console" | "dbconsole" | "runner"))
        })
}

/// The option that selects production: `--env production`, `--env=production`, `-e prod`,
/// `--environment production`, `--settings=config.settings.production`.
fn selects_production(args: &[String]) -> Option<String> {
    args.iter().enumerate().find_map(|(i, a)| {
        let (opt, value) = match a.split_once('=') {
            Some((o, v)) if o.starts_with('-') => (o, Some(v)),
            _ => (a.as_str(), args.get(i + 1).map(String::as_str)),
        };
        let value = value?;
        (matches!(opt, "--env" | "-e" | "--environment" | "--settings") && is_production(value))
            .then(|| format!("{opt} {value}"))
    })
}

/// Whether any command of the line sets an environment selector to production
/// (`NODE_ENV=production cmd`, `export RAILS_ENV=production`, `rake db:migrate
/// RAILS_ENV=production`).
fn production_selected(simple: &[Simple]) -> Option<String> {
    simple.iter().find_map(|s| {
        let sets = matches!(s.program.as_str(), "export" | "declare" | "typeset");
        let exported = if sets || is_db_tool(s) {
            s.args
                .iter()
                .filter_map(|a| a.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        } else {
            Vec::new()
        };
        s.env
            .iter()
            .chain(&exported)
            .find(|(k, v)| ENV_SELECTORS.contains(&k.as_str()) && is_production(v))
            .map(|(k, v)| format!("{k}={v}"))
    })
}

/// The production rule over a whole command line and its simple commands.
pub(super) fn production(
    command: &str,
    simple: &[Simple],
    p: &Production,
    env: Env<'_>,
) -> Option<Denial> {
    if !p.is_empty() {
        let d = Declared::new(p);
        for s in simple {
            if let Some(d) = declared(s, &d, env) {
                return Some(d);
            }
        }
    }
    let selected = production_selected(simple);
    for s in simple.iter().filter(|s| is_db_tool(s)) {
        let by = selects_production(&s.args).or_else(|| selected.clone());
        if let Some(by) = by {
            return deny(
                "production",
                format!(
                    "`{} {}` runs against the production environment ({by})",
                    s.program,
                    s.args.join(" ")
                ),
            );
        }
    }
    marked(command)
}

/// The project's declaration applied to one simple command.
fn declared(s: &Simple, d: &Declared<'_>, env: Env<'_>) -> Option<Denial> {
    // `printenv X` reads a variable as surely as `$X` does.
    let printed = (s.program == "printenv").then_some(&s.args);
    let names = s.refs.iter().chain(printed.into_iter().flatten());
    for name in names {
        if let Some(declared) = d.variable(name) {
            return deny(
                "production",
                format!(
                    "`${name}` holds production settings (`[production] env` has {declared:?})"
                ),
            );
        }
        if let Some(host) = env(name).and_then(|v| d.host_in(&v)) {
            return deny(
                "production",
                format!("`${name}` holds {host}, a production host (`[production] hosts`)"),
            );
        }
    }
    if let Some(w) = s.words.iter().find(|w| d.file(w)) {
        return deny(
            "production",
            format!("`{w}` holds production settings (`[production] files`)"),
        );
    }
    if !TEXT.contains(&s.program.as_str())
        && let Some(host) = s.words.iter().find_map(|w| d.host_in(w))
    {
        return deny(
            "production",
            format!(
                "`{}` reaches {host}, a production host (`[production] hosts`)",
                s.words.join(" ")
            ),
        );
    }
    None
}

/// Whether a write to `path` changes a declared production file.
pub(super) fn production_file(path: &str, p: &Production) -> bool {
    !p.files.is_empty() && Declared::new(p).file(path)
}

/// A production marker and a destructive or schema-changing verb on one line of the command.
fn marked(command: &str) -> Option<Denial> {
    static MARK: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)\b(prod|production)\b").expect("valid"));
    static VERB: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?i)\b(drop\s+(table|database|schema|index|column)|truncate|delete\s+from|alter\s+table|dropdb|db:(migrate|drop|reset|rollback|schema:load)|migrate(\s+|:)(deploy|up|reset|rollback)|alembic\s+(upgrade|downgrade)|flyway\s+(migrate|clean)|liquibase\s+update|terraform\s+(apply|destroy)|kubectl\s+delete|s3\s+(rm|rb)|gsutil\s+rm|redis-cli\s+flush(all|db))\b",
        )
        .expect("valid")
    });
    // Per line of the script: a marker in one command and a verb in another far away are
    // usually unrelated.
    for line in command.lines() {
        if let (Some(m), Some(v)) = (MARK.find(line), VERB.find(line)) {
            return deny(
                "production",
                format!(
                    "`{}` with `{}` touches production data or its schema",
                    v.as_str(),
                    m.as_str()
                ),
            );
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_matches_whole_and_a_name_under_it() {
        assert!(host_in(
            "postgres://u@DB.prod.example.com:5432/app",
            "db.prod.example.com"
        ));
        assert!(host_in(
            "replica.db.prod.example.com",
            "db.prod.example.com"
        ));
        assert!(host_in("10.1.2.3", "10.1.2.3"));
        assert!(!host_in("10.1.2.30", "10.1.2.3"));
        assert!(!host_in("110.1.2.3", "10.1.2.3"));
        assert!(!host_in(
            "db.prod.example.com.evil.org",
            "db.prod.example.com"
        ));
        assert!(!host_in(
            "mydb.prod.example.community",
            "db.prod.example.com"
        ));
    }

    #[test]
    fn a_file_is_named_by_path_tail_option_value_or_shell_glob() {
        let p = Production {
            files: vec![".env.production".into(), "config/prod.*".into()],
            ..Production::default()
        };
        let d = Declared::new(&p);
        for w in [
            ".env.production",
            "./.env.production",
            "/work/wt/apps/api/.env.production",
            "--env-file=.env.production",
            "file=@config/prod.json",
            "config/*",
            ".env.prod*",
        ] {
            assert!(d.file(w), "{w}");
        }
        for w in [
            ".env.example",
            ".env",
            "config/dev.json",
            "prod.json",
            "notes",
        ] {
            assert!(!d.file(w), "{w}");
        }
        assert_eq!(sample("config/{prod,live}.[jt]s"), "config/prod.js");
    }

    #[test]
    fn entries_that_cannot_be_used_are_named() {
        let bad = |p: Production| p.validate().unwrap_err().to_string();
        let e = bad(Production {
            env: vec!["PROD-DB".into()],
            ..Production::default()
        });
        assert!(e.starts_with("env:") && e.contains("PROD-DB"), "{e}");
        let e = bad(Production {
            hosts: vec!["https://db.prod/".into()],
            ..Production::default()
        });
        assert!(e.starts_with("hosts:") && e.contains("URL"), "{e}");
        let e = bad(Production {
            files: vec!["config/[prod".into()],
            ..Production::default()
        });
        assert!(e.starts_with("files:") && e.contains("config/[prod"), "{e}");
        let ok = Production {
            env: vec!["PROD_*".into(), "DATABASE_URL".into()],
            hosts: vec!["db.prod.example.com".into(), "10.1.2.3".into()],
            files: vec![".env.production".into(), "config/prod.*".into()],
        };
        assert_eq!(ok.validate(), Ok(()));
    }
}
