//! Making things public: an upload or a grant that lets anyone read (a public ACL on a bucket
//! or an object, `allUsers` in a policy, a public gist or repository, a file on a paste or
//! file-share host) and a public deploy from an agent's shell (`vercel --prod`, `netlify
//! deploy --prod`, `surge`). Deploying is the project's `deploy` command's job, after the
//! gate; an agent's upload of the same files is a publication nobody reviewed.

use super::shell::Simple;
use super::{Denial, deny, first_word, writes};

/// Hosts whose uploads anyone with the link may read.
const SHARE_HOSTS: [&str; 24] = [
    "0x0.st",
    "transfer.sh",
    "file.io",
    "paste.rs",
    "termbin.com",
    "ix.io",
    "sprunge.us",
    "pastebin.com",
    "hastebin.com",
    "dpaste.com",
    "dpaste.org",
    "paste.ee",
    "catbox.moe",
    "bashupload.com",
    "temp.sh",
    "oshi.at",
    "tmpfiles.org",
    "gofile.io",
    "pixeldrain.com",
    "uguu.se",
    "clbin.com",
    "envs.sh",
    "bpa.st",
    "paste.debian.net",
];

/// The host a word names, as a URL (`https://u@0x0.st:443/x`) or without a scheme
/// (`0x0.st/x`, `termbin.com`), lower-cased.
fn host_of(word: &str) -> String {
    let rest = word.split_once("://").map_or(word, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or_default();
    host.split(':')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase()
}

/// The values of an option, as `--name value` or `--name=value`.
fn values<'a>(args: &'a [String], names: &[&str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    for (i, a) in args.iter().enumerate() {
        if names.contains(&a.as_str()) {
            out.extend(args.get(i + 1).map(String::as_str));
        } else if let Some((o, v)) = a.split_once('=')
            && names.contains(&o)
        {
            out.push(v);
        }
    }
    out
}

fn lower(args: &[String]) -> Vec<String> {
    args.iter().map(|a| a.to_ascii_lowercase()).collect()
}

/// A grant to everyone: AWS's `AllUsers`/`AuthenticatedUsers` groups, Google's
/// `allUsers`/`allAuthenticatedUsers`.
fn everyone(word: &str) -> bool {
    let w = word.to_ascii_lowercase();
    w.contains("allusers") || w.contains("authenticatedusers")
}

fn public_acl(v: &str) -> bool {
    matches!(
        v.to_ascii_lowercase().as_str(),
        "public-read"
            | "public-read-write"
            | "authenticated-read"
            | "publicread"
            | "publicreadwrite"
    )
}

/// What `s` makes public, if anything.
fn what(s: &Simple) -> Option<&'static str> {
    let args = &s.args;
    let low = lower(args);
    let has = |w: &str| low.iter().any(|a| a == w);
    let sub = first_word(args).unwrap_or_default();
    let made_public = match s.program.as_str() {
        "aws" => {
            let acl = values(args, &["--acl"]).into_iter().any(public_acl);
            let grant = args
                .iter()
                .enumerate()
                .filter(|(_, a)| a.starts_with("--grant"))
                .any(|(i, a)| everyone(a) || args.get(i + 1).is_some_and(|v| everyone(v)));
            let policy = values(args, &["--policy"]).into_iter().any(|p| {
                p.starts_with("file://")
                    || p.starts_with("fileb://")
                    || p.replace(char::is_whitespace, "").contains("\"*\"")
            });
            let unblocked = values(args, &["--public-access-block-configuration"])
                .into_iter()
                .any(|c| c.to_ascii_lowercase().contains("false"));
            ((has("s3") || has("s3api")) && (acl || grant))
                || (has("put-bucket-policy") && policy)
                || has("delete-public-access-block")
                || (has("put-public-access-block") && unblocked)
        }
        "gsutil" => low.iter().any(|a| everyone(a) || public_acl(a)),
        "gcloud" => {
            low.iter().any(|a| everyone(a) || a.contains("publicread"))
                || has("--allow-unauthenticated")
        }
        "az" => {
            let open = values(args, &["--public-access"])
                .into_iter()
                .any(|v| !v.eq_ignore_ascii_case("off"));
            let allowed = values(args, &["--allow-blob-public-access"])
                .into_iter()
                .any(|v| v.eq_ignore_ascii_case("true"));
            // `$web` is the static website's container: anything in it is served to all.
            let web = has("storage") && has("$web");
            open || allowed || web || has("--static-website")
        }
        "s3cmd" => args.iter().any(|a| a == "--acl-public" || a == "-P"),
        "mc" => {
            let grant = args
                .iter()
                .position(|a| matches!(a.as_str(), "anonymous" | "policy"));
            grant.is_some_and(|i| {
                low.get(i + 1).is_some_and(|a| a.starts_with("set"))
                    && low
                        .get(i + 2)
                        .is_some_and(|p| p != "none" && p != "private")
            }) || sub == "share"
        }
        "rclone" => sub == "link",
        "gh" => {
            let w: Vec<&str> = low.iter().map(String::as_str).collect();
            let visibility = values(args, &["--visibility"])
                .into_iter()
                .any(|v| v.eq_ignore_ascii_case("public"));
            (w.windows(2).any(|p| p == ["gist", "create"]) && (has("--public") || has("-p")))
                || (w.windows(2).any(|p| p == ["repo", "create"]) && has("--public"))
                || (w.windows(2).any(|p| p == ["repo", "edit"]) && visibility)
        }
        "surge" => !matches!(
            sub,
            "list" | "whoami" | "help" | "--help" | "-h" | "--version" | "-V"
        ),
        "netlify" => {
            sub == "deploy"
                && low
                    .iter()
                    .any(|a| a == "--prod" || a == "-p" || a.starts_with("--prod-"))
        }
        "vercel" | "now" => {
            low.iter()
                .any(|a| a == "--prod" || a == "--prod=true" || a == "--production")
                || sub == "promote"
        }
        "firebase" => sub == "deploy",
        "wrangler" => {
            matches!(sub, "deploy" | "publish")
                || low
                    .windows(2)
                    .any(|p| p[0] == "pages" && matches!(p[1].as_str(), "deploy" | "publish"))
        }
        "gh-pages" => true,
        "fly" | "flyctl" => sub == "deploy",
        _ => false,
    };
    if made_public {
        let deploys = matches!(
            s.program.as_str(),
            "surge"
                | "netlify"
                | "vercel"
                | "now"
                | "firebase"
                | "wrangler"
                | "gh-pages"
                | "fly"
                | "flyctl"
        );
        return Some(if deploys {
            "deploys publicly, which is the project's deploy command's job"
        } else {
            "makes it readable by anyone"
        });
    }
    let share = s.args.iter().any(|a| {
        let host = host_of(a);
        SHARE_HOSTS
            .iter()
            .any(|h| host == *h || host.ends_with(&format!(".{h}")))
    });
    let uploads = match s.program.as_str() {
        "curl" | "wget" => writes(s),
        "http" | "https" | "xh" | "httpie" | "nc" | "ncat" | "netcat" | "socat" | "telnet" => true,
        _ => false,
    };
    (share && uploads).then_some("uploads to a host where anyone with the link reads it")
}

/// The public rule for one simple command.
pub(super) fn public(s: &Simple) -> Option<Denial> {
    let what = what(s)?;
    deny(
        "public",
        format!("`{} {}` {what}", s.program, s.args.join(" ")),
    )
}
