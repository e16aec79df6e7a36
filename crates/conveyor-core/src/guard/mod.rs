//! What an agent never does on its own, whatever a checklist says (DESIGN.md, "Deploy, and
//! what is never done autonomously"): moving money, sending mail or messages outward as Anton,
//! deleting production data or changing a production schema, publishing (or pushing to a
//! remote that is not the project's own), editing a PlanFix task other than the line's, and
//! changing accesses and tokens. Every agent run gets a `PreToolUse` hook (`conveyord hook
//! guard`) that asks [`check`] about each `Bash`, `Write` and `Edit` call, its subagents' too;
//! a denial stops the call and tells the agent to ask Anton in the journal instead. The
//! built-in rules read the programs a command runs ([`shell`]), so `sh -c '…'`, `env X=1 …`
//! and `./node_modules/.bin/npm` do not hide them; a project adds regexes of its own
//! (`[never] patterns` in `.conveyor.toml`) and says what holds its production settings
//! (`[production]`: variables, hosts, files), since production is more often reached through
//! `$DATABASE_URL` or `.env.production` than through a URL in the command.

mod production;
mod public;
pub mod shell;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use production::{Production, ProductionError};
use shell::Simple;

/// The agent's environment as the guard sees it: a variable's value by name. The hook passes
/// its own (the CLI runs it with the agent's environment); a test passes a map.
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The tools the guard looks at (a `PreToolUse` matcher).
pub const MATCHER: &str = "Bash|Write|Edit|MultiEdit|NotebookEdit";

/// What the guard knows of the line it guards (written by the daemon for each run). A field
/// missing from the file is empty, so a context written before it existed still reads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Context {
    /// The project's own remotes: names and URLs (`git remote -v` of its repository).
    pub remotes: Vec<String>,
    /// The project's `[never] patterns`: regexes on a Bash command.
    pub patterns: Vec<String>,
    /// The line's PlanFix task, the only one it may write to.
    pub planfix_task: Option<String>,
    /// The project's `[production]`: what holds its production settings.
    pub production: Production,
}

/// Why a call is denied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    /// Which rule: `publish`, `push`, `message`, `money`, `production`, `planfix`, `public`,
    /// `access`, `project`.
    pub rule: &'static str,
    pub why: String,
}

/// The guard's answer for one tool call: `None` lets it run. `env` is the agent's
/// environment, for the values of the variables a command expands.
pub fn check(tool: &str, input: &Value, cx: &Context, env: Env<'_>) -> Option<Denial> {
    match tool {
        "Bash" => bash(input["command"].as_str().unwrap_or_default(), cx, env),
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => {
            let path = input["file_path"]
                .as_str()
                .or_else(|| input["notebook_path"].as_str())
                .unwrap_or_default();
            if let Some(what) = sensitive(path) {
                return deny("access", format!("writing {path} changes {what}"));
            }
            production::production_file(path, &cx.production).then(|| Denial {
                rule: "production",
                why: format!("{path} holds production settings (`[production] files`)"),
            })
        }
        _ => None,
    }
}

/// How every reason the guard gives begins: what tells its denials from a checking role's
/// own (`roles::denials`).
pub const NEVER: &str = "never done autonomously";

/// `conveyord hook guard`: the `PreToolUse` hook's answer to its input (`None`: allowed).
pub fn hook_answer(input: &str, cx: &Context, env: Env<'_>) -> Option<String> {
    let v: Value = serde_json::from_str(input).unwrap_or_default();
    let d = check(
        v["tool_name"].as_str().unwrap_or_default(),
        &v["tool_input"],
        cx,
        env,
    )?;
    let why = format!(
        "{NEVER} ({}): {}. Do not try another way. Append a question for Anton \
         to $CONVEYOR_JOURNAL instead, with \"reversible\": false and \"expensive\": true, saying \
         what you wanted to do and why, and go on with the rest of the work.",
        d.rule, d.why
    );
    Some(
        serde_json::json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "deny", "permissionDecisionReason": why}})
        .to_string(),
    )
}

fn bash(command: &str, cx: &Context, env: Env<'_>) -> Option<Denial> {
    let simple = shell::commands(command);
    for s in &simple {
        if let Some(d) = publish(s)
            .or_else(|| push(s, cx))
            .or_else(|| message(s))
            .or_else(|| money(s))
            .or_else(|| planfix(s, cx))
            .or_else(|| public::public(s))
            .or_else(|| access(s))
        {
            return Some(d);
        }
    }
    if let Some(d) = production::production(command, &simple, &cx.production, env) {
        return Some(d);
    }
    let texts: Vec<String> = std::iter::once(command.to_string())
        .chain(
            simple
                .iter()
                .map(|s| format!("{} {}", s.program, s.args.join(" "))),
        )
        .collect();
    for p in &cx.patterns {
        // A pattern that does not compile was refused when .conveyor.toml was read.
        let Ok(re) = regex::Regex::new(p) else {
            continue;
        };
        if texts.iter().any(|t| re.is_match(t)) {
            return Some(Denial {
                rule: "project",
                why: format!("the project's [never] pattern {p:?} matches"),
            });
        }
    }
    None
}

/// The first argument that is not an option.
fn first_word(args: &[String]) -> Option<&str> {
    args.iter()
        .map(String::as_str)
        .find(|a| !a.starts_with('-'))
}

fn deny(rule: &'static str, why: String) -> Option<Denial> {
    Some(Denial { rule, why })
}

fn publish(s: &Simple) -> Option<Denial> {
    let sub = first_word(&s.args).unwrap_or_default();
    let words: Vec<&str> = s.args.iter().map(String::as_str).collect();
    let publishes = match s.program.as_str() {
        "npm" | "pnpm" | "bun" => matches!(sub, "publish" | "unpublish" | "deprecate"),
        "yarn" => sub == "publish" || words.windows(2).any(|w| w == ["npm", "publish"]),
        "cargo" => matches!(sub, "publish" | "yank" | "owner"),
        "docker" | "podman" | "buildah" | "nerdctl" => {
            sub == "push"
                || words.windows(2).any(|w| w == ["image", "push"])
                || words.contains(&"--push")
        }
        "twine" => sub == "upload",
        "gem" => sub == "push",
        "poetry" | "flit" | "hatch" => sub == "publish",
        "gh" => words
            .windows(2)
            .any(|w| w[0] == "release" && matches!(w[1], "create" | "upload")),
        "dotnet" => words.windows(2).any(|w| w == ["nuget", "push"]),
        "mvn" | "mvnw" => words.contains(&"deploy"),
        "gradle" | "gradlew" => words.iter().any(|w| w.starts_with("publish")),
        _ => false,
    };
    publishes.then(|| Denial {
        rule: "publish",
        why: format!("`{} {}` publishes", s.program, s.args.join(" ")),
    })
}

fn push(s: &Simple, cx: &Context) -> Option<Denial> {
    if s.program != "git" {
        return None;
    }
    // Options before the subcommand, some with a value.
    let mut i = 0;
    while let Some(a) = s.args.get(i) {
        if matches!(
            a.as_str(),
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace"
        ) {
            i += 2;
        } else if a.starts_with('-') {
            i += 1;
        } else {
            break;
        }
    }
    if s.args.get(i).map(String::as_str) != Some("push") {
        return None;
    }
    let rest = &s.args[i + 1..];
    let mut remote = None;
    let mut j = 0;
    while let Some(a) = rest.get(j) {
        if let Some(r) = a.strip_prefix("--repo=") {
            remote = Some(r.to_string());
            break;
        }
        if matches!(
            a.as_str(),
            "--repo" | "-o" | "--push-option" | "--receive-pack"
        ) {
            if a == "--repo" {
                remote = rest.get(j + 1).cloned();
                break;
            }
            j += 2;
            continue;
        }
        if !a.starts_with('-') {
            remote = Some(a.clone());
            break;
        }
        j += 1;
    }
    // No remote named: the branch's own upstream, which is the project's.
    let remote = remote?;
    if cx.remotes.contains(&remote) {
        return None;
    }
    deny(
        "push",
        format!(
            "`git push` to {remote}, which is not one of the project's own remotes ({})",
            if cx.remotes.is_empty() {
                "it has none".to_string()
            } else {
                cx.remotes.join(", ")
            }
        ),
    )
}

/// The URLs among a command's arguments (a `-d url=…` value included).
fn urls(s: &Simple) -> Vec<&str> {
    s.args
        .iter()
        .filter_map(|a| {
            ["https://", "http://", "smtp://", "smtps://"]
                .iter()
                .filter_map(|p| a.find(p))
                .min()
                .map(|i| &a[i..])
        })
        .collect()
}

const MESSAGING: [&str; 9] = [
    "api.telegram.org",
    "hooks.slack.com",
    "slack.com/api/chat.",
    "discord.com/api/webhooks",
    "discordapp.com/api/webhooks",
    "api.sendgrid.com",
    "api.mailgun.net",
    "api.twilio.com",
    "smtp",
];

fn message(s: &Simple) -> Option<Denial> {
    if matches!(
        s.program.as_str(),
        "sendmail" | "mail" | "mailx" | "mutt" | "swaks" | "msmtp" | "ssmtp" | "telegram-send"
    ) {
        return deny(
            "message",
            format!("`{}` sends mail or messages outward", s.program),
        );
    }
    let url = urls(s).into_iter().find(|u| {
        MESSAGING.iter().any(|m| {
            if *m == "smtp" {
                u.starts_with("smtp")
            } else {
                u.contains(m)
            }
        })
    })?;
    deny(
        "message",
        format!("a request to {url} sends a message outward"),
    )
}

const MONEY: [&str; 7] = [
    "api.stripe.com",
    "api.paypal.com",
    "api-m.paypal.com",
    "api.yookassa.ru",
    "securepay.tinkoff.ru",
    "api.cloudpayments.ru",
    "api.wise.com",
];

fn money(s: &Simple) -> Option<Denial> {
    if s.program == "stripe"
        && s.args.iter().any(|a| {
            matches!(
                a.as_str(),
                "create" | "post" | "delete" | "update" | "cancel" | "capture"
            )
        })
    {
        return deny(
            "money",
            format!("`stripe {}` moves money", s.args.join(" ")),
        );
    }
    let url = urls(s)
        .into_iter()
        .find(|u| MONEY.iter().any(|m| u.contains(m)))?;
    deny("money", format!("a request to {url} moves money"))
}

/// Whether a request writes (curl's `-X POST`, `-d`, `--json`, `-F`; wget's `--post-data`).
fn writes(s: &Simple) -> bool {
    let mut it = s.args.iter().map(String::as_str).peekable();
    while let Some(a) = it.next() {
        let method = if a == "-X" || a == "--request" || a == "--method" {
            it.peek().copied()
        } else {
            a.strip_prefix("-X")
                .or_else(|| a.strip_prefix("--request="))
                .or_else(|| a.strip_prefix("--method="))
                .filter(|m| !m.is_empty())
        };
        if method.is_some_and(|m| {
            matches!(
                m.to_ascii_uppercase().as_str(),
                "POST" | "PUT" | "PATCH" | "DELETE"
            )
        }) {
            return true;
        }
        if a.starts_with("-d")
            || a.starts_with("--data")
            || a.starts_with("--json")
            || a.starts_with("-F")
            || a.starts_with("--form")
            || a.starts_with("--post-")
            || a.starts_with("--body-")
            || a.starts_with("--upload-file")
            || a == "-T"
        {
            return true;
        }
    }
    false
}

fn planfix(s: &Simple, cx: &Context) -> Option<Denial> {
    let url = urls(s).into_iter().find(|u| u.contains("planfix"))?;
    if !writes(s) {
        return None;
    }
    let own = cx.planfix_task.as_deref().is_some_and(|t| {
        url.contains(&format!("/task/{t}/")) || url.ends_with(&format!("/task/{t}"))
    });
    if own {
        return None;
    }
    deny(
        "planfix",
        format!(
            "a write to {url} edits a PlanFix task other than the line's own ({})",
            cx.planfix_task.as_deref().unwrap_or("it has none")
        ),
    )
}

/// Paths whose change changes who may do what.
fn sensitive(path: &str) -> Option<&'static str> {
    const PATHS: [(&str, &str); 9] = [
        ("authorized_keys", "who may log in (ssh keys)"),
        ("/etc/sudoers", "who may act as root"),
        ("/etc/passwd", "the machine's users"),
        ("/etc/shadow", "the machine's passwords"),
        ("/.ssh/", "ssh keys and access"),
        (".netrc", "stored credentials"),
        (".pgpass", "stored database passwords"),
        (".pypirc", "publishing tokens"),
        (".npmrc", "publishing tokens"),
    ];
    PATHS
        .iter()
        .find(|(p, _)| path.contains(p) || (p.starts_with("/.") && path.starts_with(&p[1..])))
        .map(|(_, what)| *what)
}

fn access(s: &Simple) -> Option<Denial> {
    let words: Vec<&str> = s.args.iter().map(String::as_str).collect();
    let sub = first_word(&s.args).unwrap_or_default();
    let changes = match s.program.as_str() {
        "passwd" | "chpasswd" | "usermod" | "useradd" | "userdel" | "groupmod" | "visudo"
        | "ssh-copy-id" | "chage" => true,
        "gh" => matches!(sub, "auth" | "secret" | "ssh-key" | "gpg-key" | "variable"),
        "aws" => {
            sub == "iam"
                || words
                    .windows(2)
                    .any(|w| w == ["secretsmanager", "put-secret-value"])
        }
        "gcloud" => words.contains(&"iam") || words.iter().any(|w| w.contains("iam-policy")),
        "az" => matches!(sub, "role" | "ad"),
        "kubectl" => words.windows(2).any(|w| {
            w[0] == "create"
                && matches!(
                    w[1],
                    "secret" | "rolebinding" | "clusterrolebinding" | "token"
                )
        }),
        "vault" => {
            matches!(sub, "write" | "token" | "policy")
                || words.windows(2).any(|w| w == ["kv", "put"])
        }
        "npm" => matches!(sub, "token" | "owner" | "access" | "adduser" | "login"),
        "git" => words
            .windows(2)
            .any(|w| w[0] == "config" && w[1].starts_with("credential")),
        _ => false,
    };
    if changes {
        return deny(
            "access",
            format!(
                "`{} {}` changes accesses or tokens",
                s.program,
                s.args.join(" ")
            ),
        );
    }
    // Output sent to, or a file copied over, an access file.
    let writes_to = match s.program.as_str() {
        "tee" | "cp" | "mv" | "install" | "ln" | "chmod" | "chown" | "rm" | "truncate" => words
            .iter()
            .find_map(|w| sensitive(w).map(|what| (*w, what))),
        _ => None,
    }
    .or_else(|| {
        words
            .windows(2)
            .filter(|w| w[0].starts_with('>'))
            .find_map(|w| sensitive(w[1]).map(|what| (w[1], what)))
    });
    writes_to.and_then(|(path, what)| deny("access", format!("writing {path} changes {what}")))
}

#[cfg(test)]
mod tests;
