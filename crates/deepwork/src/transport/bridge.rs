//! Anton's bridge `ollama_orchestro/ask.mjs`, run as a subprocess, never imported or copied:
//! it parses `process.argv` and acts at the top level, so importing it would run it.
//!
//! Step 1: `node ask.mjs ask --chat <chat> --file <in> --out <out> --quiet` — the bridge edits
//! the chat's first message, so the chat stays one exchange. Steps 2..N add `--new`: a
//! normal send, so the model remembers the earlier steps.

use std::path::PathBuf;
use std::process::Command;

use super::{Transport, TransportError};
use crate::config::BridgeConfig;
use crate::exec::{self, Cancel, Ended};

/// The bridge transport; its message and answer files live in a temporary folder that goes
/// away with it.
#[derive(Debug)]
pub struct Bridge {
    config: BridgeConfig,
    dir: tempfile::TempDir,
}

impl Bridge {
    /// Prepares the bridge's working folder.
    ///
    /// # Errors
    /// [`TransportError::Io`] when the temporary folder cannot be made.
    pub fn new(config: BridgeConfig) -> Result<Bridge, TransportError> {
        let dir = tempfile::Builder::new()
            .prefix("deepwork-")
            .tempdir()
            .map_err(|source| TransportError::Io {
                context: "cannot make a temporary folder".into(),
                source,
            })?;
        Ok(Bridge { config, dir })
    }

    /// The exact command for step `n`.
    pub fn command(&self, n: usize, input: &std::path::Path, output: &std::path::Path) -> Command {
        let c = &self.config;
        let mut cmd = Command::new(&c.node);
        cmd.arg(&c.bridge).arg("ask").arg("--chat").arg(&c.chat);
        if n > 1 {
            cmd.arg("--new");
        }
        cmd.arg("--file")
            .arg(input)
            .arg("--out")
            .arg(output)
            .arg("--quiet");
        // The bridge finds its own files (chats.json) beside itself.
        if let Some(dir) = c.bridge.parent().filter(|d| d.is_dir()) {
            cmd.current_dir(dir);
        }
        cmd
    }

    fn paths(&self, n: usize) -> (PathBuf, PathBuf) {
        (
            self.dir.path().join(format!("step{n}.txt")),
            self.dir.path().join(format!("ans{n}.txt")),
        )
    }
}

impl Transport for Bridge {
    fn send(&mut self, n: usize, message: &str, cancel: &Cancel) -> Result<String, TransportError> {
        if !self.config.bridge.is_file() {
            return Err(TransportError::BridgeMissing {
                path: self.config.bridge.display().to_string(),
            });
        }
        let (input, output) = self.paths(n);
        let io = |context: String| move |source| TransportError::Io { context, source };
        std::fs::write(&input, message).map_err(io(format!("cannot write {}", input.display())))?;
        let _ = std::fs::remove_file(&output);
        let cmd = self.command(n, &input, &output);
        let finished = exec::run(cmd, self.config.timeout, cancel).map_err(|source| {
            TransportError::Spawn {
                program: self.config.node.display().to_string(),
                source,
            }
        })?;
        let stderr = finished.stderr_tail;
        match finished.ended {
            Ended::Cancelled => return Err(TransportError::Cancelled),
            Ended::TimedOut => {
                return Err(TransportError::Timeout {
                    timeout: self.config.timeout,
                    stderr,
                });
            }
            Ended::Exited(status) if !status.success() => {
                return Err(TransportError::Failed {
                    status: status.to_string(),
                    stderr,
                });
            }
            Ended::Exited(_) => {}
        }
        let out_name = output.display().to_string();
        let answer = match std::fs::read(&output) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(TransportError::NoAnswer {
                    path: out_name,
                    stderr,
                });
            }
            Err(source) => {
                return Err(TransportError::Io {
                    context: format!("cannot read {out_name}"),
                    source,
                });
            }
        };
        if answer.trim().is_empty() {
            return Err(TransportError::EmptyAnswer {
                path: out_name,
                stderr,
            });
        }
        Ok(answer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn bridge() -> Bridge {
        Bridge::new(BridgeConfig {
            node: "node".into(),
            bridge: "/oo/ask.mjs".into(),
            chat: "think".into(),
            timeout: Duration::from_secs(1),
            debug_port: 9333,
            chat_url: "x".into(),
        })
        .unwrap()
    }

    fn args(cmd: &Command) -> Vec<String> {
        cmd.get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn step_one_edits_the_first_message_later_steps_send_new() {
        let b = bridge();
        let one = args(&b.command(1, "in1".as_ref(), "out1".as_ref()));
        assert_eq!(
            one,
            [
                "/oo/ask.mjs",
                "ask",
                "--chat",
                "think",
                "--file",
                "in1",
                "--out",
                "out1",
                "--quiet"
            ]
        );
        let two = args(&b.command(2, "in2".as_ref(), "out2".as_ref()));
        assert_eq!(
            two,
            [
                "/oo/ask.mjs",
                "ask",
                "--chat",
                "think",
                "--new",
                "--file",
                "in2",
                "--out",
                "out2",
                "--quiet"
            ]
        );
    }
}
