//! The sandbox's item (DESIGN.md, "Containment: what an agent can reach"). With `[sandbox]
//! mode = "required"`: `bwrap --version`, then a probe that unshares every namespace as the
//! agents' user, its failure read for the kernel setting behind it (docs/conveyor.md, "What
//! bubblewrap does here"); with `off`, a loud warning that nothing but the guard holds the
//! agents in.

use std::path::Path;

use conveyor_api::{PreflightCode as Code, PreflightItem, PreflightLevel as Level};

use super::context::{AGENT_TIMEOUT, Context, as_agent};
use super::item::{item, ok};
use crate::config::SandboxMode;
use crate::error::{Error, Result};
use crate::exec;

/// The probe's flags before its command: exactly those every run's bwrap starts with
/// (`conveyor_core::sandbox::BASE`: every namespace unshared, bwrap tied to its parent,
/// capabilities dropped, the system read-only, its own `/dev`, `/proc`, `/tmp` and `/run`).
fn probe_flags() -> Vec<&'static str> {
    let mut flags = conveyor_core::sandbox::BASE.to_vec();
    flags.push("--");
    flags
}

/// The kernel settings that decide whether an unprivileged user may make a user namespace:
/// each one present is named in the message of a failed probe.
const USERNS_SYSCTLS: [&str; 3] = [
    "user.max_user_namespaces",
    "kernel.unprivileged_userns_clone",
    "kernel.apparmor_restrict_unprivileged_userns",
];

/// The packages to install, for every fix that names them.
const INSTALL: &str = "install bubblewrap: `apt install bubblewrap` (dnf, pacman: `bubblewrap`)";

/// The sandbox's item: off (a warning), or whether `bwrap` is found and works as the agents'
/// user.
pub(super) async fn sandbox(sh: &Context<'_>, config_file: &str) -> PreflightItem {
    let bwrap = &sh.cfg.sandbox.bwrap;
    if sh.cfg.sandbox.mode == SandboxMode::Off {
        return sandbox_off(config_file);
    }
    if !cfg!(target_os = "linux") {
        return not_linux(std::env::consts::OS, config_file);
    }
    // From `/`: the agents' user may not reach the data folder, and bwrap runs its command in
    // the folder it was started in, which must exist inside.
    let root = Path::new("/");
    let version = as_agent(sh, bwrap, root, &["--version"]).await;
    let version = match bwrap_version(bwrap, &version, config_file) {
        Ok(v) => v,
        Err(blocking) => return blocking,
    };
    let mut args = probe_flags();
    args.push(true_bin());
    let probe = as_agent(sh, bwrap, root, &args).await;
    let user = sh.agent_user.map(|u| u.name.as_str());
    probe_item(bwrap, &version, &probe, &userns_sysctls(), user)
}

/// `[sandbox] mode = "off"`: agents run as plain processes.
pub(super) fn sandbox_off(config_file: &str) -> PreflightItem {
    item(
        Code::Sandbox,
        Level::Warning,
        "the sandbox is off ([sandbox] mode = \"off\"): agents run without bubblewrap, so nothing but the guard stops them writing outside their worktree, reaching any host, or moving other branches".into(),
        Some(format!(
            "set [sandbox] mode = \"required\" in {config_file} and {INSTALL}"
        )),
    )
}

/// Bubblewrap is Linux's: a daemon elsewhere cannot sandbox its agents.
pub(super) fn not_linux(os: &str, config_file: &str) -> PreflightItem {
    item(
        Code::Sandbox,
        Level::Blocking,
        format!("the sandbox needs bubblewrap, which is Linux's; this daemon runs on {os}"),
        Some(format!(
            "run the daemon on Linux, or set [sandbox] mode = \"off\" in {config_file} (agents then run without the sandbox)"
        )),
    )
}

/// What `bwrap --version` said: its version, or the item that blocks.
pub(super) fn bwrap_version(
    bwrap: &Path,
    version: &Result<exec::Output>,
    config_file: &str,
) -> std::result::Result<String, PreflightItem> {
    let install = Some(format!(
        "{INSTALL}, or set [sandbox] bwrap in {config_file} to where it is"
    ));
    let bin = bwrap.display();
    let message = match version {
        Ok(o) if o.code == Some(0) => {
            let v = o.stdout.trim();
            return Ok(if v.is_empty() { "bubblewrap" } else { v }.to_string());
        }
        Ok(o) => format!(
            "`{bin} --version` failed ({}): {}",
            exit(o),
            o.tail(300).trim()
        ),
        Err(Error::Spawn { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            format!(
                "bubblewrap is missing: {bin} is not found ({source}), so agent runs cannot be sandboxed"
            )
        }
        Err(e) => format!("bubblewrap: {e}"),
    };
    Err(item(Code::Sandbox, Level::Blocking, message, install))
}

/// The probe's item: bwrap `version` made a sandbox as the agents' `user` (none: the
/// daemon's own), or what it said and the fix; `sysctls` are the kernel's user-namespace
/// settings that exist here.
pub(super) fn probe_item(
    bwrap: &Path,
    version: &str,
    probe: &Result<exec::Output>,
    sysctls: &[(&str, String)],
    user: Option<&str>,
) -> PreflightItem {
    let bin = bwrap.display();
    let who = user.map_or("the daemon's user".to_string(), |u| format!("the user {u}"));
    let by_hand = format!(
        "run `{bin} {} {}` as {who} to see why",
        probe_flags().join(" "),
        true_bin()
    );
    match probe {
        Ok(o) if o.code == Some(0) => ok(
            Code::Sandbox,
            format!(
                "agent runs go inside {version} ({bin}); a sandbox with every namespace unshared works as {who}"
            ),
        ),
        Ok(o) => {
            let said = if o.stderr.trim().is_empty() {
                o.tail(500)
            } else {
                exec::tail(&o.stderr, 500)
            };
            let said = said.trim();
            let settings = sysctls
                .iter()
                .map(|(k, v)| format!("{k} = {v}"))
                .collect::<Vec<_>>()
                .join(", ");
            let settings = if settings.is_empty() {
                String::new()
            } else {
                format!(" [{settings}]")
            };
            let fix = UsernsBlock::read(said).map_or(by_hand, |b| b.fix().to_string());
            item(
                Code::Sandbox,
                Level::Blocking,
                format!(
                    "{version} cannot make a sandbox as {who} ({}): {said}{settings}",
                    exit(o)
                ),
                Some(fix),
            )
        }
        Err(e) => item(
            Code::Sandbox,
            Level::Blocking,
            format!("the sandbox's probe cannot be started as {who}: {e}"),
            Some(by_hand),
        ),
    }
}

fn exit(o: &exec::Output) -> String {
    match o.code {
        Some(c) => format!("exit {c}"),
        None if o.timed_out => format!("no answer in {} s", AGENT_TIMEOUT.as_secs()),
        None => "no exit code".into(),
    }
}

/// Why bwrap could not make its namespaces, read from what it printed (bubblewrap 0.8.0's
/// messages, by errno).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum UsernsBlock {
    /// ENOSPC: `user.max_user_namespaces` is 0 (or the nesting depth is reached).
    Limit,
    /// EPERM: Debian's `kernel.unprivileged_userns_clone = 0`.
    UnprivilegedClone,
    /// Ubuntu's AppArmor (`kernel.apparmor_restrict_unprivileged_userns = 1`) denies the
    /// namespace's uid map.
    AppArmor,
    /// EINVAL: a kernel without user namespaces.
    NoUserNamespaces,
}

impl UsernsBlock {
    /// The cause bwrap's words name; `None` for anything else.
    pub(super) fn read(said: &str) -> Option<UsernsBlock> {
        if said.contains("max_*_namespaces exceeded") || said.contains("(ENOSPC)") {
            Some(UsernsBlock::Limit)
        } else if said.contains("No permissions to create new namespace") {
            Some(UsernsBlock::UnprivilegedClone)
        } else if said.contains("setting up uid map: Permission denied") {
            Some(UsernsBlock::AppArmor)
        } else if said.contains("kernel does not support user namespaces") {
            Some(UsernsBlock::NoUserNamespaces)
        } else {
            None
        }
    }

    /// What to do, as root.
    pub(super) fn fix(self) -> &'static str {
        match self {
            UsernsBlock::Limit => {
                "allow user namespaces: `sysctl -w user.max_user_namespaces=15000`, and for the next boot `echo user.max_user_namespaces=15000 > /etc/sysctl.d/90-userns.conf`"
            }
            UsernsBlock::UnprivilegedClone => {
                "allow unprivileged user namespaces: `sysctl -w kernel.unprivileged_userns_clone=1`, and for the next boot `echo kernel.unprivileged_userns_clone=1 > /etc/sysctl.d/90-userns.conf`"
            }
            UsernsBlock::AppArmor => {
                "AppArmor forbids unprivileged user namespaces: `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` (and the same line in /etc/sysctl.d/90-userns.conf for the next boot), or give bwrap a profile that allows them: /etc/apparmor.d/bwrap holding `abi <abi/4.0>, include <tunables/global> profile bwrap /usr/bin/bwrap flags=(unconfined) { userns, }`, then `apparmor_parser -r /etc/apparmor.d/bwrap`"
            }
            UsernsBlock::NoUserNamespaces => {
                "the kernel has no user namespaces: boot a kernel built with CONFIG_USER_NS, or make bwrap setuid root (`chmod u+s` on it), as bwrap itself says"
            }
        }
    }
}

/// The kernel's user-namespace settings that exist here, by their sysctl names.
fn userns_sysctls() -> Vec<(&'static str, String)> {
    USERNS_SYSCTLS
        .iter()
        .filter_map(|name| {
            let path = Path::new("/proc/sys").join(name.replace('.', "/"));
            let value = std::fs::read_to_string(path).ok()?;
            Some((*name, value.trim().to_string()))
        })
        .collect()
}

/// The system's `true`, which the probe runs inside the sandbox (the system is bound in
/// read-only at the same paths).
fn true_bin() -> &'static str {
    ["/bin/true", "/usr/bin/true"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap_or("true")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(code: Option<i32>, stdout: &str, stderr: &str) -> Result<exec::Output> {
        Ok(exec::Output {
            code,
            stdout: stdout.into(),
            stderr: stderr.into(),
            timed_out: false,
            cancelled: false,
        })
    }

    fn missing() -> Result<exec::Output> {
        Err(Error::Spawn {
            program: "/nonexistent/bwrap".into(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        })
    }

    const VERSION: &str = "bubblewrap 0.8.0\n";
    // bubblewrap 0.8.0's words (notes: docs/conveyor.md, "What bubblewrap does here").
    const ENOSPC: &str = "bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded (ENOSPC)\n";
    const EPERM: &str = "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces. See <https://deb.li/bubblewrap> or <file:///usr/share/doc/bubblewrap/README.Debian.gz>.\n";
    const APPARMOR: &str = "bwrap: setting up uid map: Permission denied\n";
    const EINVAL: &str = "bwrap: Creating new namespace failed, likely because the kernel does not support user namespaces.  bwrap must be installed setuid on such systems.\n";

    fn version(v: &Result<exec::Output>) -> PreflightItem {
        bwrap_version(Path::new("/usr/bin/bwrap"), v, "c.toml").unwrap_err()
    }

    fn probe(p: &Result<exec::Output>) -> PreflightItem {
        probe_item(
            Path::new("/usr/bin/bwrap"),
            "bubblewrap 0.8.0",
            p,
            &[("user.max_user_namespaces", "0".into())],
            Some("conveyor"),
        )
    }

    #[test]
    fn each_of_bwraps_namespace_failures_names_its_own_fix() {
        assert_eq!(UsernsBlock::read(ENOSPC), Some(UsernsBlock::Limit));
        assert_eq!(
            UsernsBlock::read(EPERM),
            Some(UsernsBlock::UnprivilegedClone)
        );
        assert_eq!(UsernsBlock::read(APPARMOR), Some(UsernsBlock::AppArmor));
        assert_eq!(
            UsernsBlock::read(EINVAL),
            Some(UsernsBlock::NoUserNamespaces)
        );
        assert_eq!(
            UsernsBlock::read("bwrap: Can't mount proc on /newroot/proc: Operation not permitted"),
            None
        );
        assert!(
            UsernsBlock::Limit
                .fix()
                .contains("sysctl -w user.max_user_namespaces=15000")
        );
        assert!(UsernsBlock::Limit.fix().contains("/etc/sysctl.d/"));
        assert!(
            UsernsBlock::UnprivilegedClone
                .fix()
                .contains("sysctl -w kernel.unprivileged_userns_clone=1")
        );
        let apparmor = UsernsBlock::AppArmor.fix();
        assert!(
            apparmor.contains("sysctl -w kernel.apparmor_restrict_unprivileged_userns=0")
                && apparmor.contains("userns,"),
            "{apparmor}"
        );
        assert!(UsernsBlock::NoUserNamespaces.fix().contains("setuid"));
    }

    #[test]
    fn a_failed_probe_blocks_with_bwraps_words_the_settings_and_the_fix() {
        let i = probe(&out(Some(1), "", ENOSPC));
        assert_eq!((i.code, i.level), (Code::Sandbox, Level::Blocking));
        assert_eq!(
            i.message,
            format!(
                "bubblewrap 0.8.0 cannot make a sandbox as the user conveyor (exit 1): {} [user.max_user_namespaces = 0]",
                ENOSPC.trim()
            )
        );
        assert_eq!(i.fix.as_deref(), Some(UsernsBlock::Limit.fix()));
        let i = probe(&out(Some(1), "", APPARMOR));
        assert_eq!(i.fix.as_deref(), Some(UsernsBlock::AppArmor.fix()));
        // Words the daemon does not know: verbatim, and how to see more.
        let odd = "bwrap: Can't mount proc on /newroot/proc: Operation not permitted\n";
        let i = probe(&out(Some(1), "", odd));
        assert_eq!(i.level, Level::Blocking);
        assert!(i.message.contains(odd.trim()), "{}", i.message);
        let fix = i.fix.unwrap();
        assert!(
            fix.starts_with("run `/usr/bin/bwrap --die-with-parent --unshare-all --cap-drop ALL --new-session --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --tmpfs /run --dir /run/conveyor -- ")
                && fix.ends_with("` as the user conveyor to see why"),
            "{fix}"
        );
        // No setting present: nothing in brackets.
        let i = probe_item(
            Path::new("bwrap"),
            "bubblewrap 0.8.0",
            &out(Some(1), "", EPERM),
            &[],
            None,
        );
        assert!(
            i.message
                .starts_with("bubblewrap 0.8.0 cannot make a sandbox as the daemon's user (exit 1): bwrap: No permissions")
                && i.message.ends_with("README.Debian.gz>."),
            "{}",
            i.message
        );
    }

    #[test]
    fn a_missing_bwrap_blocks_with_the_package_to_install() {
        let i = version(&missing());
        assert_eq!((i.code, i.level), (Code::Sandbox, Level::Blocking));
        assert!(
            i.message
                .starts_with("bubblewrap is missing: /usr/bin/bwrap is not found"),
            "{}",
            i.message
        );
        let fix = i.fix.unwrap();
        assert!(
            fix.contains("apt install bubblewrap") && fix.contains("[sandbox] bwrap in c.toml"),
            "{fix}"
        );
        let i = version(&out(Some(2), "", "bwrap: Unknown option --version"));
        assert_eq!(i.level, Level::Blocking);
        assert!(
            i.message.contains("exit 2") && i.message.contains("Unknown option"),
            "{}",
            i.message
        );
    }

    #[test]
    fn a_working_probe_is_ok_with_bwraps_version() {
        assert_eq!(
            bwrap_version(Path::new("bwrap"), &out(Some(0), VERSION, ""), "c").unwrap(),
            "bubblewrap 0.8.0"
        );
        let i = probe(&out(Some(0), "", ""));
        assert_eq!((i.level, i.fix), (Level::Ok, None));
        assert_eq!(
            i.message,
            "agent runs go inside bubblewrap 0.8.0 (/usr/bin/bwrap); a sandbox with every namespace unshared works as the user conveyor"
        );
        let timed_out = Ok(exec::Output {
            code: None,
            stdout: String::new(),
            stderr: String::new(),
            timed_out: true,
            cancelled: false,
        });
        let i = probe(&timed_out);
        assert_eq!(i.level, Level::Blocking);
        assert!(i.message.contains("no answer in 30 s"), "{}", i.message);
    }

    #[test]
    fn off_is_a_warning_and_elsewhere_than_linux_is_a_block_naming_off() {
        let i = sandbox_off("c.toml");
        assert_eq!((i.code, i.level), (Code::Sandbox, Level::Warning));
        assert!(i.message.contains("without bubblewrap"), "{}", i.message);
        assert!(
            i.fix
                .unwrap()
                .starts_with("set [sandbox] mode = \"required\" in c.toml and install bubblewrap")
        );
        let i = not_linux("macos", "c.toml");
        assert_eq!(i.level, Level::Blocking);
        assert!(i.fix.unwrap().contains("mode = \"off\" in c.toml"));
    }

    #[test]
    fn the_probe_runs_the_systems_true() {
        assert!(Path::new(true_bin()).is_absolute() || true_bin() == "true");
        for (name, value) in userns_sysctls() {
            assert!(USERNS_SYSCTLS.contains(&name) && !value.is_empty());
        }
    }
}
