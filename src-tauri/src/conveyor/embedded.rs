//! The embedded daemon: `conveyor::start` inside the app, its data in the app's data folder,
//! on a free loopback port with a fresh token. An optional `conveyor.toml` beside the app's
//! other files sets anything else (`claude_bin`, `slots`, `budget`, `agent_env`, …).

use anyhow::Context as _;

use super::saved::ConveyorPaths;

/// The embedded daemon's config: the optional file's keys over the app's defaults.
///
/// # Errors
/// When the file cannot be read or is not a valid `conveyor.toml`; the message names it.
pub fn embedded_config(paths: &ConveyorPaths) -> anyhow::Result<conveyor::Config> {
    let text = match std::fs::read_to_string(&paths.embedded_config) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            return Err(e).with_context(|| format!("{}", paths.embedded_config.display()));
        }
    };
    let mut defaults = toml::Table::new();
    defaults.insert(
        "data_dir".into(),
        paths.embedded_data.display().to_string().into(),
    );
    defaults.insert("listen".into(), "127.0.0.1:0".into());
    defaults.insert(
        "token".into(),
        uuid::Uuid::new_v4().simple().to_string().into(),
    );
    // Agents run inside bubblewrap, which is Linux's: elsewhere (Anton's Windows) the embedded
    // daemon runs them unconfined by default, and its preflight and the banner say so loudly.
    // The file can still ask for `required` (then the preflight blocks, naming why).
    if !cfg!(target_os = "linux") {
        let mut sandbox = toml::Table::new();
        sandbox.insert("mode".into(), "off".into());
        defaults.insert("sandbox".into(), sandbox.into());
    }
    let cfg = conveyor::Config::parse_with_defaults(&text, &paths.embedded_config, defaults)?;
    // The app talks to its own daemon over loopback only, whatever the file says about
    // `listen`: a daemon for other machines is `conveyord serve`.
    if !cfg.listen.ip().is_loopback() {
        anyhow::bail!(
            "{}: listen = {}: the embedded daemon listens on loopback only (run `conveyord serve` for a daemon other machines reach)",
            paths.embedded_config.display(),
            cfg.listen
        );
    }
    Ok(cfg)
}

/// Starts the embedded daemon.
///
/// # Errors
/// A broken config file, or a daemon that cannot open its data folder or port.
pub async fn start(paths: &ConveyorPaths) -> anyhow::Result<conveyor::ServerHandle> {
    let cfg = embedded_config(paths)?;
    let data = cfg.data_dir.clone();
    std::fs::create_dir_all(&data)
        .with_context(|| format!("cannot create the daemon's data folder {}", data.display()))?;
    let handle = conveyor::start(cfg).await.with_context(|| {
        format!(
            "the embedded daemon did not start (data in {})",
            data.display()
        )
    })?;
    tracing::info!(addr = %handle.addr, data = %data.display(), "embedded conveyor daemon started");
    Ok(handle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(dir: &std::path::Path) -> ConveyorPaths {
        ConveyorPaths {
            settings: dir.join("conveyor.json"),
            embedded_config: dir.join("conveyor.toml"),
            embedded_data: dir.join("conveyor"),
        }
    }

    #[test]
    fn with_no_file_the_daemon_lives_in_the_app_data_folder_on_loopback() {
        let dir = tempfile::tempdir().unwrap();
        let p = paths(dir.path());
        let c = embedded_config(&p).unwrap();
        assert_eq!(c.data_dir, p.embedded_data);
        assert!(c.listen.ip().is_loopback() && c.listen.port() == 0);
        let token = c.token.clone().unwrap();
        assert_eq!(token.len(), 32);
        // A fresh token each start.
        assert_ne!(embedded_config(&p).unwrap().token.unwrap(), token);
        // Agents in bubblewrap where it exists.
        let want = if cfg!(target_os = "linux") {
            conveyor::config::SandboxMode::Required
        } else {
            conveyor::config::SandboxMode::Off
        };
        assert_eq!(c.sandbox.mode, want);
    }

    #[test]
    fn the_file_sets_keys_and_a_broken_one_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = paths(dir.path());
        std::fs::write(
            &p.embedded_config,
            "claude_bin = \"/opt/claude\"\nslots = 1\n",
        )
        .unwrap();
        let c = embedded_config(&p).unwrap();
        assert_eq!(
            (c.slots, c.claude_bin.display().to_string()),
            (1, "/opt/claude".into())
        );
        std::fs::write(&p.embedded_config, "slots = \"many\"\n").unwrap();
        let e = format!("{:#}", embedded_config(&p).unwrap_err());
        assert!(e.contains("conveyor.toml") && e.contains("line 1"), "{e}");
        std::fs::write(&p.embedded_config, "listen = \"0.0.0.0:8790\"\n").unwrap();
        let e = format!("{:#}", embedded_config(&p).unwrap_err());
        assert!(e.contains("loopback"), "{e}");
    }
}
