//! Just enough of a shell's grammar to see which programs a command line runs: words with
//! their quotes removed, split into simple commands at `;`, `&&`, `||`, `|`, `&`, newlines and
//! parentheses and braces, with the scripts inside `sh -c '…'`, `bash -lc "…"`, `eval …`,
//! `$(…)`, backticks and here-documents fed to a shell taken apart too (other here-documents
//! are data, not commands), and the wrappers a command hides behind (`env X=1`, `sudo -u u`,
//! `nohup`, `timeout 5`, `xargs`, `command`, `exec`, `npx`, `dotenv -e file --`, a path like
//! `./node_modules/.bin/npm`) peeled off. Each simple command also keeps what a rule about
//! production needs: the variables set for it, the variables it expands and every word as
//! written. It is a reading for a guard, not an interpreter: what it cannot see through (a
//! program name built at run time) it leaves as it is.

use std::iter::Peekable;
use std::str::Chars;

/// One simple command: the program's base name and its arguments, wrappers removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Simple {
    /// Empty for a command that only sets variables (`X=$(cat f)`).
    pub program: String,
    pub args: Vec<String>,
    /// The variables set for it: `X=1 cmd`, `env X=1 cmd`, as `(name, value)`.
    pub env: Vec<(String, String)>,
    /// Every word as written, wrappers and assignments included (quotes removed).
    pub words: Vec<String>,
    /// The variables it expands outside single quotes: `$X`, `${X}`, `${X:-…}`.
    pub refs: Vec<String>,
}

/// The simple commands `text` runs, nested scripts included (at most `depth` levels).
pub fn commands(text: &str) -> Vec<Simple> {
    let mut out = Vec::new();
    walk(text, 0, &mut out);
    out
}

const MAX_DEPTH: usize = 6;
const SHELLS: [&str; 6] = ["sh", "bash", "zsh", "dash", "ksh", "fish"];

fn walk(text: &str, depth: usize, out: &mut Vec<Simple>) {
    if depth > MAX_DEPTH {
        return;
    }
    for inner in substitutions(text) {
        walk(&inner, depth + 1, out);
    }
    for Words {
        words: raw,
        refs,
        scripts,
    } in split(text)
    {
        for script in &scripts {
            walk(script, depth + 1, out);
        }
        let (words, env) = peel(raw.clone());
        let Some((first, rest)) = words.split_first() else {
            // Assignments only: no program, but what they read and expand is kept.
            out.push(Simple {
                program: String::new(),
                args: Vec::new(),
                env,
                words: raw,
                refs,
            });
            continue;
        };
        let program = base_name(first);
        let mut simple = Simple {
            program,
            args: rest.to_vec(),
            env,
            words: raw,
            refs,
        };
        if SHELLS.contains(&simple.program.as_str()) {
            // `sh -c 'script'`, `bash -lc "script"`: the script is the word after the option
            // that holds a `c`.
            if let Some(i) = rest
                .iter()
                .position(|w| w.starts_with('-') && !w.starts_with("--") && w.contains('c'))
                && let Some(script) = rest.get(i + 1)
            {
                walk(script, depth + 1, out);
                // The shell itself only when it expands something or passes arguments to
                // the script (`bash -c 'psql "$1"' _ "$PROD_DB"`).
                if !simple.refs.is_empty() || rest.len() > i + 2 {
                    out.push(simple);
                }
                continue;
            }
        }
        if simple.program == "eval" {
            walk(&rest.join(" "), depth + 1, out);
            continue;
        }
        simple.args = rest.to_vec();
        out.push(simple);
    }
}

/// The base name of a program word: `./node_modules/.bin/npm` → `npm`.
fn base_name(w: &str) -> String {
    w.rsplit('/').next().unwrap_or(w).to_string()
}

/// `NAME=value` as `(NAME, value)`.
fn assignment(word: &str) -> Option<(String, String)> {
    let (k, v) = word.split_once('=')?;
    let name = !k.is_empty()
        && !k.starts_with(|c: char| c.is_ascii_digit())
        && k.chars().all(|c| c.is_alphanumeric() || c == '_');
    name.then(|| (k.to_string(), v.to_string()))
}

/// Drops assignments and the wrappers that run the rest of the line as a command; the
/// variables they set are returned beside the rest.
fn peel(mut words: Vec<String>) -> (Vec<String>, Vec<(String, String)>) {
    let mut env = Vec::new();
    loop {
        let Some(first) = words.first() else {
            return (words, env);
        };
        if let Some(kv) = assignment(first) {
            env.push(kv);
            words.remove(0);
            continue;
        }
        let program = base_name(first);
        // How many words after the wrapper's own name are its options (with their values).
        let skip = match program.as_str() {
            "env" => {
                let mut i = 1;
                while let Some(w) = words.get(i) {
                    if let Some(kv) = assignment(w) {
                        env.push(kv);
                        i += 1;
                    } else if w.starts_with('-') || w.contains('=') {
                        i += if matches!(w.as_str(), "-u" | "-C" | "-S") {
                            2
                        } else {
                            1
                        };
                    } else {
                        break;
                    }
                }
                i
            }
            // `dotenv -e .env.x -- cmd`, `dotenvx run -f .env.x -- cmd`, `env-cmd -f .env.x cmd`.
            "dotenv" | "dotenvx" | "env-cmd" => match words.iter().position(|w| w == "--") {
                Some(p) => p + 1,
                None => {
                    let mut i = 1;
                    while let Some(w) = words.get(i) {
                        if w == "run" {
                            i += 1;
                        } else if w.starts_with('-') {
                            i += if matches!(
                                w.as_str(),
                                "-e" | "-f" | "-c" | "-v" | "-p" | "--file" | "--env-file"
                            ) {
                                2
                            } else {
                                1
                            };
                        } else {
                            break;
                        }
                    }
                    i
                }
            },
            "sudo" | "doas" => {
                let mut i = 1;
                while let Some(w) = words.get(i) {
                    if w.starts_with('-') {
                        i += if matches!(w.as_str(), "-u" | "-g" | "-C" | "-h" | "-p") {
                            2
                        } else {
                            1
                        };
                    } else {
                        break;
                    }
                }
                i
            }
            "timeout" => {
                let mut i = 1;
                while words.get(i).is_some_and(|w| w.starts_with('-')) {
                    i += 1;
                }
                i + 1
            }
            "nice" | "ionice" | "xargs" | "npx" | "stdbuf" => {
                let mut i = 1;
                while let Some(w) = words.get(i) {
                    if w.starts_with('-') {
                        i += if matches!(w.as_str(), "-n" | "-I" | "-P" | "-p" | "-L" | "-c") {
                            2
                        } else {
                            1
                        };
                    } else {
                        break;
                    }
                }
                i
            }
            "nohup" | "time" | "command" | "exec" | "builtin" | "then" | "do" | "else" | "!" => 1,
            _ => return (words, env),
        };
        if skip >= words.len() {
            return (words, env);
        }
        words.drain(..skip);
    }
}

/// The text inside `$(…)` and backticks, outside single quotes.
fn substitutions(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut single = false;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && !single {
            i += 2;
            continue;
        }
        if c == '\'' {
            single = !single;
        } else if !single && c == '$' && chars.get(i + 1) == Some(&'(') {
            let mut level = 1;
            let start = i + 2;
            let mut j = start;
            while j < chars.len() && level > 0 {
                match chars[j] {
                    '(' => level += 1,
                    ')' => level -= 1,
                    _ => {}
                }
                j += 1;
            }
            out.push(
                chars[start..j.saturating_sub(1).max(start)]
                    .iter()
                    .collect(),
            );
            i = j;
            continue;
        } else if !single && c == '`' {
            let start = i + 1;
            let end = chars[start..]
                .iter()
                .position(|&x| x == '`')
                .map_or(chars.len(), |p| start + p);
            out.push(chars[start..end].iter().collect());
            i = end + 1;
            continue;
        }
        i += 1;
    }
    out
}

/// The words of one simple command and the variables they expand.
struct Words {
    words: Vec<String>,
    refs: Vec<String>,
    /// The bodies of here-documents fed to a shell (`bash <<'EOF'`): scripts to read too.
    scripts: Vec<String>,
}

/// A here-document whose body starts at the next line.
struct Heredoc {
    delimiter: String,
    /// `<<'EOF'`: the body is not expanded.
    quoted: bool,
    /// `<<-EOF`: leading tabs are stripped.
    strip_tabs: bool,
}

/// The body of a here-document, up to its delimiter line (consumed).
fn heredoc_body(chars: &mut Peekable<Chars<'_>>, h: &Heredoc) -> String {
    let mut body = String::new();
    loop {
        let mut line = String::new();
        let mut ended = false;
        for x in chars.by_ref() {
            if x == '\n' {
                ended = true;
                break;
            }
            line.push(x);
        }
        let bare = if h.strip_tabs {
            line.trim_start_matches('\t')
        } else {
            &line
        };
        if bare == h.delimiter {
            return body;
        }
        body.push_str(&line);
        body.push('\n');
        if !ended {
            return body;
        }
    }
}

/// The variables an unquoted here-document's body expands (`\\$X` is not one).
fn expansions(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '$' => out.extend(reference(&chars)),
            _ => {}
        }
    }
    out
}

/// The name of the variable a `$` just read expands (`$X`, `${X}`, `${X:-…}`, `${#X}`), read
/// ahead of `rest` without consuming it; `None` for `$(`, `$1`, `$@`, `$$`.
fn reference(rest: &Peekable<Chars<'_>>) -> Option<String> {
    let mut it = rest.clone();
    if it.peek() == Some(&'{') {
        it.next();
        while matches!(it.peek(), Some('#' | '!')) {
            it.next();
        }
    }
    let name: String = it
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        .then_some(name)
}

/// Words of each simple command, quotes removed, split at the control operators.
fn split(text: &str) -> Vec<Words> {
    let mut out = Vec::new();
    let mut cmd: Vec<String> = Vec::new();
    let mut refs: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars().peekable();
    let end_word = |word: &mut String, in_word: &mut bool, cmd: &mut Vec<String>| {
        if *in_word {
            cmd.push(std::mem::take(word));
            *in_word = false;
        }
    };
    let mut heredocs: Vec<Heredoc> = Vec::new();
    let mut scripts: Vec<String> = Vec::new();
    let end_cmd = |cmd: &mut Vec<String>,
                   refs: &mut Vec<String>,
                   scripts: &mut Vec<String>,
                   out: &mut Vec<Words>| {
        if !cmd.is_empty() || !refs.is_empty() || !scripts.is_empty() {
            out.push(Words {
                words: std::mem::take(cmd),
                refs: std::mem::take(refs),
                scripts: std::mem::take(scripts),
            });
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for x in chars.by_ref() {
                    if x == '\'' {
                        break;
                    }
                    word.push(x);
                }
            }
            '"' => {
                in_word = true;
                while let Some(x) = chars.next() {
                    match x {
                        '"' => break,
                        '\\' => {
                            if let Some(n) = chars.next() {
                                word.push(n);
                            }
                        }
                        _ => {
                            if x == '$' {
                                refs.extend(reference(&chars));
                            }
                            word.push(x);
                        }
                    }
                }
            }
            '\\' => {
                if let Some(n) = chars.next()
                    && n != '\n'
                {
                    in_word = true;
                    word.push(n);
                }
            }
            '\n' => {
                end_word(&mut word, &mut in_word, &mut cmd);
                // Here-documents begin after the line that opens them. Fed to a shell, a body
                // is a script; to anything else it is data (`cat >> "$CONVEYOR_JOURNAL"
                // <<'EOF'`), whose variables count only when the shell expands them.
                let to_shell = peel(cmd.clone())
                    .0
                    .first()
                    .is_some_and(|p| SHELLS.contains(&base_name(p).as_str()));
                for h in std::mem::take(&mut heredocs) {
                    let body = heredoc_body(&mut chars, &h);
                    if to_shell {
                        scripts.push(body);
                    } else if !h.quoted {
                        refs.extend(expansions(&body));
                    }
                }
                end_cmd(&mut cmd, &mut refs, &mut scripts, &mut out);
            }
            ';' | '&' | '|' | '(' | ')' | '{' | '}' => {
                end_word(&mut word, &mut in_word, &mut cmd);
                end_cmd(&mut cmd, &mut refs, &mut scripts, &mut out);
            }
            '#' if !in_word => {
                // A comment runs to the end of the line.
                for x in chars.by_ref() {
                    if x == '\n' {
                        break;
                    }
                }
                end_cmd(&mut cmd, &mut refs, &mut scripts, &mut out);
            }
            c if c.is_whitespace() => end_word(&mut word, &mut in_word, &mut cmd),
            '>' | '<' => {
                // A redirection ends the word; its target is a word of its own (kept: a rule may
                // look at where output goes).
                end_word(&mut word, &mut in_word, &mut cmd);
                let mut op = c.to_string();
                if c == '<' && chars.peek() == Some(&'<') {
                    chars.next();
                    op.push('<');
                    if chars.peek() == Some(&'<') {
                        // A here-string: its word follows as any word does.
                        chars.next();
                        op.push('<');
                    } else {
                        if chars.peek() == Some(&'-') {
                            chars.next();
                            op.push('-');
                        }
                        while chars.peek().is_some_and(|&n| n == ' ' || n == '\t') {
                            chars.next();
                        }
                        let mut delimiter = String::new();
                        let mut quoted = false;
                        while let Some(&x) = chars.peek() {
                            if x.is_whitespace() || ";&|<>()".contains(x) {
                                break;
                            }
                            chars.next();
                            if matches!(x, '\'' | '"' | '\\') {
                                quoted = true;
                            } else {
                                delimiter.push(x);
                            }
                        }
                        heredocs.push(Heredoc {
                            delimiter: delimiter.clone(),
                            quoted,
                            strip_tabs: op.ends_with('-'),
                        });
                        cmd.push(op);
                        cmd.push(delimiter);
                        continue;
                    }
                }
                while chars.peek().is_some_and(|&n| n == '>' || n == '&') {
                    op.push(chars.next().unwrap_or_default());
                }
                cmd.push(op);
            }
            c => {
                in_word = true;
                word.push(c);
                if c == '$' {
                    refs.extend(reference(&chars));
                    // `${X:-…}` holds braces (not a group) and may hold more expansions.
                    if chars.peek() == Some(&'{') {
                        let mut level = 0;
                        while let Some(x) = chars.next() {
                            word.push(x);
                            match x {
                                '{' => level += 1,
                                '}' => level -= 1,
                                '$' => refs.extend(reference(&chars)),
                                _ => {}
                            }
                            if level == 0 {
                                break;
                            }
                        }
                    }
                }
            }
        }
    }
    end_word(&mut word, &mut in_word, &mut cmd);
    end_cmd(&mut cmd, &mut refs, &mut scripts, &mut out);
    out
}

#[cfg(test)]
mod tests;
