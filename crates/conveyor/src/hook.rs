//! The Stop hook that keeps a step from ending while its checks are red.
//!
//! The daemon writes, per run, a POSIX shell script and a settings file naming it
//! (`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":…}]}]}}`, given with `--settings`).
//! The script runs the step's checks in the worktree; while one is red it blocks in the JSON
//! form (`{"decision":"block","reason":…}`, exit 0: the exit-2 form is silently dropped when the
//! reason contains "no such file"), at most `rounds` times, and records every round in a state
//! file. After the run the daemon runs the checks again itself and trusts only that.
//!
//! Every run's settings file is written by one function, [`write_settings`]: a step's Stop
//! hook above, a judge's Stop and PreToolUse hooks (`conveyord hook …`, see the judge module),
//! and the never-autonomous guard to come, side by side in one file.

use std::path::{Path, PathBuf};

use crate::config::Check;
use crate::error::{Error, Result};

/// The files of one run's hook.
#[derive(Debug, Clone)]
pub struct Hook {
    /// The script the settings name (tests run it by hand).
    #[cfg(test)]
    pub script: PathBuf,
    pub settings: PathBuf,
    /// One line per round: `block` or `pass` or `gave_up`.
    pub state: PathBuf,
}

/// A word quoted for `sh`.
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Where a run's hook goes: its script and settings where the agent cannot change them, its
/// rounds where the hook (which runs as the agent) can count them.
#[derive(Debug, Clone, Copy)]
pub struct Dirs<'a> {
    pub scripts: &'a Path,
    pub state: &'a Path,
}

/// Writes the hook for `checks` into `dirs` (named after `tag`).
///
/// # Errors
/// [`Error::Io`].
pub fn write(
    dirs: &Dirs<'_>,
    tag: &str,
    checks: &[Check],
    rounds: u32,
    pre_tool: &[(&str, &str)],
) -> Result<Hook> {
    let script = dirs.scripts.join(format!("stop-hook-{tag}.sh"));
    let settings = dirs.scripts.join(format!("settings-{tag}.json"));
    let state = dirs.state.join(format!("stop-hook-{tag}.state"));
    let mut body = String::new();
    body.push_str(
        "#!/bin/sh\n# Stop hook written by conveyor: blocks while the step's checks are red.\n",
    );
    body.push_str("cat >/dev/null\n");
    body.push_str(&format!(
        "STATE={}\nROUNDS={rounds}\n",
        quote(&state.to_string_lossy())
    ));
    body.push_str("red=\"\"\nout=\"\"\n");
    for c in checks {
        // The command lives in a variable, single-quoted: its text is never shell source, so
        // backslashes, quotes, backticks and `$` are carried verbatim into the reason.
        body.push_str(&format!(
            "c={}\no=$(sh -c \"$c\" 2>&1 </dev/null); rc=$?\nif [ \"$rc\" != {exit} ]; then red=\"$red\n- \\`$c\\` exited $rc (expected {exit})\"; out=\"$out\n\\$ $c\n$(printf '%s' \"$o\" | tail -c 1500)\"; fi\n",
            quote(&c.cmd),
            exit = c.expect_exit,
        ));
    }
    body.push_str(
        r#"if [ -z "$red" ]; then echo pass >> "$STATE"; exit 0; fi
done=$(grep -c '^block' "$STATE" 2>/dev/null)
done=${done:-0}
if [ "$done" -ge "$ROUNDS" ]; then echo gave_up >> "$STATE"; exit 0; fi
echo block >> "$STATE"
reason="Checklist not green, fix it before stopping:$red
$out"
esc=$(printf '%s' "$reason" | tr -d '\000-\010\013-\037' | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/	/ /g' | awk 'BEGIN{ORS=""} NR>1{print "\\n"} {print}')
printf '{"decision":"block","reason":"%s"}\n' "$esc"
exit 0
"#,
    );
    std::fs::write(&script, body).map_err(|e| Error::io(&script, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| Error::io(&script, e))?;
    }
    let _ = std::fs::remove_file(&state);
    write_settings(
        &settings,
        &Hooks {
            stop: &quote(&script.to_string_lossy()),
            pre_tool,
        },
    )?;
    Ok(Hook {
        #[cfg(test)]
        script,
        settings,
        state,
    })
}

/// The hooks of one run, as shell command lines.
#[derive(Debug, Clone, Copy)]
pub struct Hooks<'a> {
    /// Run when the agent would stop; may block it once more (JSON form).
    pub stop: &'a str,
    /// `(matcher, command)`: run before every matching tool call; each may deny it.
    pub pre_tool: &'a [(&'a str, &'a str)],
}

/// Writes a run's settings file (`--settings`): every hook of the run in one place, so the
/// Stop hook and the guard of a run are never two files that could disagree.
///
/// # Errors
/// [`Error::Io`].
pub fn write_settings(path: &Path, hooks: &Hooks<'_>) -> Result<()> {
    let command = |c: &str| serde_json::json!([{"type": "command", "command": c}]);
    let mut all = serde_json::json!({"Stop": [{"hooks": command(hooks.stop)}]});
    if !hooks.pre_tool.is_empty() {
        all["PreToolUse"] = hooks
            .pre_tool
            .iter()
            .map(|(matcher, cmd)| serde_json::json!({"matcher": matcher, "hooks": command(cmd)}))
            .collect();
    }
    let text = serde_json::json!({ "hooks": all }).to_string();
    std::fs::write(path, text).map_err(|e| Error::io(path, e))
}

/// A Stop hook's round, counted in `state` (one line each: `block`, `pass`, `gave_up`): `block`
/// (the JSON that blocks the run) is passed on while fewer than `rounds` blocks were given,
/// then the hook gives up and lets the run end; the daemon's own check after the run decides.
pub fn count_round(state: &Path, rounds: u32, block: Option<String>) -> Option<String> {
    let blocks = std::fs::read_to_string(state)
        .unwrap_or_default()
        .lines()
        .filter(|l| *l == "block")
        .count();
    let mark = |what: &str| {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(state)
        {
            let _ = writeln!(f, "{what}");
        }
    };
    match block {
        None => {
            mark("pass");
            None
        }
        Some(_) if blocks >= rounds as usize => {
            mark("gave_up");
            None
        }
        Some(b) => {
            mark("block");
            Some(b)
        }
    }
}

impl Hook {
    /// How many times the hook blocked, and whether it gave up.
    pub fn rounds(&self) -> (u32, bool) {
        Hook::rounds_in(&self.state)
    }

    /// How many times the hook whose state file is `state` blocked, and whether it gave up.
    pub fn rounds_in(state: &Path) -> (u32, bool) {
        let text = std::fs::read_to_string(state).unwrap_or_default();
        let blocks = text.lines().filter(|l| *l == "block").count();
        (
            u32::try_from(blocks).unwrap_or(u32::MAX),
            text.lines().any(|l| l == "gave_up"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn run_hook(h: &Hook, cwd: &Path) -> String {
        let o = Command::new(&h.script)
            .current_dir(cwd)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(o.status.success());
        String::from_utf8(o.stdout).unwrap()
    }

    #[test]
    fn blocks_in_json_until_green_at_most_n_rounds() {
        let d = tempfile::tempdir().unwrap();
        let checks = vec![Check {
            cmd: "grep -q \"good\" f.txt && echo 'fine'".into(),
            expect_exit: 0,
        }];
        let h = write(
            &Dirs {
                scripts: d.path(),
                state: d.path(),
            },
            "t",
            &checks,
            2,
            &[],
        )
        .unwrap();
        std::fs::write(d.path().join("f.txt"), "bad \"quoted\"\tno such file\n").unwrap();
        for _ in 0..2 {
            let out = run_hook(&h, d.path());
            let v: serde_json::Value = serde_json::from_str(out.trim()).expect(&out);
            assert_eq!(v["decision"], "block");
            assert!(v["reason"].as_str().unwrap().contains("grep -q"), "{out}");
        }
        // Third round: gives up (the daemon's own check will fail the step).
        assert_eq!(run_hook(&h, d.path()), "");
        assert_eq!(h.rounds(), (2, true));
        std::fs::write(d.path().join("f.txt"), "good\n").unwrap();
        assert_eq!(run_hook(&h, d.path()), "");
    }

    /// Commands are carried verbatim, whatever they hold: backslashes (also a trailing one),
    /// quotes, backticks, `$`.
    #[test]
    fn any_command_text_is_carried_verbatim() {
        let d = tempfile::tempdir().unwrap();
        let cmds = [
            r#"false # ends with a backslash \"#,
            r#"test "a\\b" = 'a\b' && false # "$HOME" `x` \$"#,
        ];
        for cmd in cmds {
            let checks = vec![Check {
                cmd: cmd.into(),
                expect_exit: 0,
            }];
            let h = write(
                &Dirs {
                    scripts: d.path(),
                    state: d.path(),
                },
                "v",
                &checks,
                3,
                &[],
            )
            .unwrap();
            let out = run_hook(&h, d.path());
            let v: serde_json::Value = serde_json::from_str(out.trim()).expect(&out);
            assert_eq!(v["decision"], "block");
            let reason = v["reason"].as_str().unwrap();
            assert!(reason.contains(&format!("`{cmd}` exited 1")), "{reason}");
        }
    }
}
