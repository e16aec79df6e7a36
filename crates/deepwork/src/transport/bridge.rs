//! Anton's bridge `ollama_orchestro/ask.mjs`, run as a subprocess, never imported or copied:
//! it parses `process.argv` and acts at the top level, so importing it would run it.
//!
//! Step 1: `node ask.mjs ask --chat <chat> --file <in> --out <out> --quiet` — the bridge edits
//! the chat's first message, so the chat stays one exchange. Steps 2..N add `--new`: a
//! normal send, so the model remembers the earlier steps.
//!
//! On Linux a step's bridge is started before its message is ready, its `--file` a named
//! pipe that deepwork fills when the message is ready (see `prespawn`), so Node's start-up
//! overlaps deepwork's own work; elsewhere, or with `"prespawn": false`, it is started when
//! the message is ready, its `--file` a regular file.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use super::contract::{Transport, TransportError};
use crate::config::BridgeConfig;
use crate::exec::{self, Cancel, Ended, Finished};

#[cfg(target_os = "linux")]
mod prespawn;

/// The bridge transport; its message and answer files live in a temporary folder that goes
/// away with it.
#[derive(Debug)]
pub struct Bridge {
    /// Step n's bridge, started before its message was ready (dropped first: it is killed
    /// before its folder goes).
    #[cfg(target_os = "linux")]
    waiting: Option<prespawn::Waiting>,
    /// Whether steps are started before their message is ready: the config's `prespawn`,
    /// turned off for the rest of the run once a bridge exits without reading its pipe.
    #[cfg(target_os = "linux")]
    prespawn: bool,
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
        Ok(Bridge {
            #[cfg(target_os = "linux")]
            waiting: None,
            #[cfg(target_os = "linux")]
            prespawn: config.prespawn,
            config,
            dir,
        })
    }

    /// The exact command for step `n`.
    pub fn command(&self, n: usize, input: &Path, output: &Path) -> Command {
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

    /// Step `n`'s message and answer files. With a pre-started bridge the message "file" is a
    /// named pipe at the same path, so the bridge's command line is the same either way.
    fn paths(&self, n: usize) -> (PathBuf, PathBuf) {
        (
            self.dir.path().join(format!("step{n}.txt")),
            self.dir.path().join(format!("ans{n}.txt")),
        )
    }

    fn spawn_error(&self, source: std::io::Error) -> TransportError {
        TransportError::Spawn {
            program: self.config.node.display().to_string(),
            source,
        }
    }

    /// The bridge started for step `n` before its message was ready gets the message through
    /// its pipe. `None`: it exited without reading it, so the step must go the usual way.
    #[cfg(target_os = "linux")]
    fn send_prespawned(
        &mut self,
        mut waiting: prespawn::Waiting,
        message: &str,
        deadline: Instant,
        cancel: &Cancel,
    ) -> Result<Option<String>, TransportError> {
        use prespawn::Delivery;
        let delivered = waiting
            .deliver(message, deadline, cancel)
            .map_err(|source| TransportError::Io {
                context: format!("cannot write the message into {}", waiting.fifo.display()),
                source,
            })?;
        let finished = match delivered {
            Delivery::Sent => waiting
                .running
                .wait(deadline, cancel)
                .map_err(|e| self.spawn_error(e))?,
            Delivery::Unread(status) => {
                let f = waiting.running.finish(Ended::Exited(status));
                tracing::debug!(
                    step = waiting.n,
                    stderr = %f.stderr_tail,
                    "the bridge exited without reading its pipe; sending the step from a file"
                );
                self.prespawn = false;
                return Ok(None);
            }
            Delivery::Cancelled => waiting.running.finish(Ended::Cancelled),
            Delivery::TimedOut => waiting.running.finish(Ended::TimedOut),
        };
        let (_, output) = self.paths(waiting.n);
        self.answer(finished, &output).map(Some)
    }

    /// The answer of a finished bridge call, or why there is none.
    fn answer(&self, finished: Finished, output: &Path) -> Result<String, TransportError> {
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
        let answer = match std::fs::read(output) {
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

impl Transport for Bridge {
    fn send(&mut self, n: usize, message: &str, cancel: &Cancel) -> Result<String, TransportError> {
        if !self.config.bridge.is_file() {
            self.discard();
            return Err(TransportError::BridgeMissing {
                path: self.config.bridge.display().to_string(),
            });
        }
        // The timeout counts from the moment the message is ready, as it did when the bridge
        // was only started then: a pre-started bridge's wait for deepwork's own work (the
        // walk, FIND) is not the model's time, and from here on the bound covers all the rest
        // — the end of Node's start-up, the hand-over through the pipe, the answer.
        let deadline = Instant::now() + self.config.timeout;
        #[cfg(target_os = "linux")]
        let fell_back = match self.waiting.take() {
            Some(w) if w.n == n => match self.send_prespawned(w, message, deadline, cancel)? {
                Some(answer) => return Ok(answer),
                None => true,
            },
            // Started for another step (not by the loop): it must not get this message.
            Some(_) | None => false,
        };
        let (input, output) = self.paths(n);
        let io = |context: String| move |source| TransportError::Io { context, source };
        // A pipe of a bridge that never read it may be in the way.
        let _ = std::fs::remove_file(&input);
        std::fs::write(&input, message).map_err(io(format!("cannot write {}", input.display())))?;
        let _ = std::fs::remove_file(&output);
        let mut running = exec::spawn(self.command(n, &input, &output))
            .map_err(|source| self.spawn_error(source))?;
        let finished = running
            .wait(deadline, cancel)
            .map_err(|source| self.spawn_error(source))?;
        let answer = self.answer(finished, &output)?;
        #[cfg(target_os = "linux")]
        if fell_back {
            tracing::warn!(
                "the bridge would not read its message from a named pipe, only from a file: \
                 set \"prespawn\": false in config.json to skip the failed start"
            );
        }
        Ok(answer)
    }

    /// Starts step `n`'s bridge now, reading its message from a named pipe (Linux; see
    /// `prespawn`). If anything fails here, [`Transport::send`] starts it the usual way and
    /// reports what fails then.
    fn prepare(&mut self, n: usize) {
        #[cfg(target_os = "linux")]
        {
            self.discard();
            if !self.prespawn || !self.config.bridge.is_file() {
                return;
            }
            let (input, output) = self.paths(n);
            let _ = std::fs::remove_file(&output);
            match prespawn::start(n, self.command(n, &input, &output), &input) {
                Ok(w) => self.waiting = Some(w),
                Err(e) => tracing::debug!(step = n, error = %e, "cannot pre-start the bridge"),
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = n;
    }

    /// Kills a bridge started for a message that will not come, without ever opening its pipe
    /// for writing (an empty message must never reach the chat).
    fn discard(&mut self) {
        #[cfg(target_os = "linux")]
        {
            self.waiting = None;
        }
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
            prespawn: true,
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
