//! Just enough of a shell's grammar to see which programs a command line runs: words with
//! their quotes removed, split into simple commands at `;`, `&&`, `||`, `|`, `&`, newlines and
//! parentheses and braces, with the scripts inside `sh -c '…'`, `bash -lc "…"`, `eval …`,
//! `$(…)` and backticks taken apart too, and the wrappers a command hides behind (`env X=1`,
//! `sudo -u u`, `nohup`, `timeout 5`, `xargs`, `command`, `exec`, `npx`, a path like
//! `./node_modules/.bin/npm`) peeled off. It is a reading for a guard, not an interpreter: what
//! it cannot see through (a program name built at run time) it leaves as it is.

/// One simple command: the program's base name and its arguments, wrappers removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Simple {
    pub program: String,
    pub args: Vec<String>,
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
    for words in split(text) {
        let words = peel(words);
        let Some((first, rest)) = words.split_first() else {
            continue;
        };
        let program = base_name(first);
        if SHELLS.contains(&program.as_str()) {
            // `sh -c 'script'`, `bash -lc "script"`: the script is the word after the option
            // that holds a `c`.
            if let Some(i) = rest
                .iter()
                .position(|w| w.starts_with('-') && !w.starts_with("--") && w.contains('c'))
                && let Some(script) = rest.get(i + 1)
            {
                walk(script, depth + 1, out);
                continue;
            }
        }
        if program == "eval" {
            walk(&rest.join(" "), depth + 1, out);
            continue;
        }
        out.push(Simple {
            program,
            args: rest.to_vec(),
        });
    }
}

/// The base name of a program word: `./node_modules/.bin/npm` → `npm`.
fn base_name(w: &str) -> String {
    w.rsplit('/').next().unwrap_or(w).to_string()
}

/// Drops assignments and the wrappers that run the rest of the line as a command.
fn peel(mut words: Vec<String>) -> Vec<String> {
    loop {
        let Some(first) = words.first() else {
            return words;
        };
        let is_assignment = first.split_once('=').is_some_and(|(k, _)| {
            !k.is_empty() && k.chars().all(|c| c.is_alphanumeric() || c == '_')
        });
        if is_assignment {
            words.remove(0);
            continue;
        }
        let program = base_name(first);
        // How many words after the wrapper's own name are its options (with their values).
        let skip = match program.as_str() {
            "env" => {
                let mut i = 1;
                while let Some(w) = words.get(i) {
                    if w.starts_with('-') || w.contains('=') {
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
            _ => return words,
        };
        if skip >= words.len() {
            return words;
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

/// Words of each simple command, quotes removed, split at the control operators.
fn split(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut cmd: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars().peekable();
    let end_word = |word: &mut String, in_word: &mut bool, cmd: &mut Vec<String>| {
        if *in_word {
            cmd.push(std::mem::take(word));
            *in_word = false;
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
                        _ => word.push(x),
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
            ';' | '&' | '|' | '\n' | '(' | ')' | '{' | '}' => {
                end_word(&mut word, &mut in_word, &mut cmd);
                if !cmd.is_empty() {
                    out.push(std::mem::take(&mut cmd));
                }
            }
            '#' if !in_word => {
                // A comment runs to the end of the line.
                for x in chars.by_ref() {
                    if x == '\n' {
                        break;
                    }
                }
                if !cmd.is_empty() {
                    out.push(std::mem::take(&mut cmd));
                }
            }
            c if c.is_whitespace() => end_word(&mut word, &mut in_word, &mut cmd),
            '>' | '<' => {
                // A redirection ends the word; its target is a word of its own (kept: a rule may
                // look at where output goes).
                end_word(&mut word, &mut in_word, &mut cmd);
                let mut op = c.to_string();
                while chars.peek().is_some_and(|&n| n == '>' || n == '&') {
                    op.push(chars.next().unwrap_or_default());
                }
                cmd.push(op);
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    end_word(&mut word, &mut in_word, &mut cmd);
    if !cmd.is_empty() {
        out.push(cmd);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn programs(text: &str) -> Vec<String> {
        commands(text)
            .into_iter()
            .map(|s| {
                format!("{} {}", s.program, s.args.join(" "))
                    .trim()
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn wrappers_and_nested_scripts_are_seen_through() {
        assert_eq!(programs("npm test"), ["npm test"]);
        assert_eq!(programs("cd pkg && npm publish"), ["cd pkg", "npm publish"]);
        assert_eq!(programs("sh -c 'npm publish'"), ["npm publish"]);
        assert_eq!(
            programs("bash -lc \"cargo publish --allow-dirty\""),
            ["cargo publish --allow-dirty"]
        );
        assert_eq!(programs("env X=1 npm publish"), ["npm publish"]);
        assert_eq!(programs("FOO=bar npm publish"), ["npm publish"]);
        assert_eq!(programs("sudo -u app npm publish"), ["npm publish"]);
        assert_eq!(programs("timeout 30 npm publish"), ["npm publish"]);
        assert_eq!(programs("./node_modules/.bin/npm publish"), ["npm publish"]);
        assert_eq!(
            programs("echo x | xargs -n1 npm publish"),
            ["echo x", "npm publish"]
        );
        assert_eq!(programs("eval 'npm publish'"), ["npm publish"]);
        let subs = programs("echo $(npm publish) `cargo publish`");
        assert!(subs.contains(&"npm publish".to_string()), "{subs:?}");
        assert!(subs.contains(&"cargo publish".to_string()), "{subs:?}");
        // Words in quotes are words, not commands.
        assert_eq!(
            programs("echo 'npm publish is never run'"),
            ["echo npm publish is never run"]
        );
        assert_eq!(
            programs("git commit -m \"prepare publish\""),
            ["git commit -m prepare publish"]
        );
    }
}
