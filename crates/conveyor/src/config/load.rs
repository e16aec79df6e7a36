//! Reading `conveyor.toml`: from its file, or from text with defaults for the keys it lacks
//! (the desktop app's embedded daemon); relative paths resolved against the file's folder,
//! the values validated, and every error naming the file, line and column.

use std::path::{Path, PathBuf};

use super::daemon::Config;
use super::invalid::describe_toml_error;
use crate::error::Error;

impl Config {
    /// A config with defaults for everything but the data folder.
    pub fn new(data_dir: impl Into<PathBuf>) -> Config {
        toml::from_str::<Config>(&format!(
            "data_dir = {}",
            toml::Value::String(data_dir.into().display().to_string())
        ))
        .expect("defaults parse")
    }

    /// Reads and validates `conveyor.toml`.
    ///
    /// # Errors
    /// [`Error::Config`] naming the file, line and column of what is wrong.
    pub fn load(path: &Path) -> Result<Config, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Config {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        Config::parse_at(&text, path)
    }

    /// Parses config text as if read from `path`, taking each top-level key it lacks from
    /// `defaults` (the desktop app's embedded daemon: its data folder, a loopback port, a fresh
    /// token). Syntax errors give the line and column in `text`; a wrong key names the key.
    ///
    /// # Errors
    /// [`Error::Config`] naming `path`.
    pub fn parse_with_defaults(
        text: &str,
        path: &Path,
        defaults: toml::Table,
    ) -> Result<Config, Error> {
        let table: toml::Table = toml::from_str(text).map_err(|e| Error::Config {
            path: path.to_path_buf(),
            message: describe_toml_error(text, &e),
        })?;
        // The missing keys go first, as top-level lines (before any table of the file); an
        // error is then reported at its place in the file, the prefix taken away.
        let mut prefix = toml::Table::new();
        for (k, v) in defaults {
            if !table.contains_key(&k) {
                prefix.insert(k, v);
            }
        }
        let prefix = toml::to_string(&prefix).unwrap_or_default();
        let whole = format!("{prefix}{text}");
        let cfg: Config = toml::from_str(&whole).map_err(|e| Error::Config {
            path: path.to_path_buf(),
            message: match e.span() {
                Some(span) if span.start >= prefix.len() => {
                    let before = &text[..(span.start - prefix.len()).min(text.len())];
                    let line = before.matches('\n').count() + 1;
                    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                    format!("line {line}, column {col}: {}", e.message())
                }
                _ => e.message().to_string(),
            },
        })?;
        cfg.finish(path)
    }

    /// Parses and validates config text as if read from `path`.
    fn parse_at(text: &str, path: &Path) -> Result<Config, Error> {
        let cfg: Config = toml::from_str(text).map_err(|e| Error::Config {
            path: path.to_path_buf(),
            message: describe_toml_error(text, &e),
        })?;
        cfg.finish(path)
    }

    /// Remembers `path`, resolves relative paths against its folder and validates.
    fn finish(mut self, path: &Path) -> Result<Config, Error> {
        let cfg = &mut self;
        cfg.file = Some(path.to_path_buf());
        let base = path.parent().unwrap_or(Path::new("."));
        if cfg.data_dir.is_relative() {
            cfg.data_dir = base.join(&cfg.data_dir);
        }
        if let Some(t) = &cfg.token_file
            && t.is_relative()
        {
            cfg.token_file = Some(base.join(t));
        }
        if let Some(c) = &mut cfg.catcher
            && c.bot_token_file.is_relative()
        {
            c.bot_token_file = base.join(&c.bot_token_file);
        }
        if let Some(p) = &mut cfg.planfix
            && p.token_file.is_relative()
        {
            p.token_file = base.join(&p.token_file);
        }
        if let Some(t) = &mut cfg.telegram {
            t.resolve(base);
        }
        cfg.validate().map_err(|e| Error::Config {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        for k in self.not_yet_read() {
            tracing::warn!(
                file = %path.display(),
                key = k.key,
                read_by = k.read_by,
                "config key accepted but not yet read: it has no effect until the feature that reads it exists"
            );
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Checklist, Invalid, NotYetRead, RootMode, Threshold};

    #[test]
    fn defaults_fill_only_the_keys_the_text_lacks() {
        let mut d = toml::Table::new();
        d.insert("data_dir".into(), "/app/data".into());
        d.insert("token".into(), "fresh".into());
        d.insert("slots".into(), 1.into());
        let p = Path::new("/cfg/conveyor.toml");
        let c =
            Config::parse_with_defaults("slots = 2\n[budget]\nthreshold_usd = 5.0\n", p, d.clone())
                .unwrap();
        assert_eq!((c.slots, c.token.as_deref()), (2, Some("fresh")));
        assert_eq!(c.data_dir, PathBuf::from("/app/data"));
        assert_eq!(c.budget.threshold_usd, Threshold::Usd(5.0));
        // A syntax error: the user's file, line and column.
        let e = Config::parse_with_defaults("slots = \n", p, d.clone()).unwrap_err();
        assert!(
            e.to_string().contains("/cfg/conveyor.toml") && e.to_string().contains("line 1"),
            "{e}"
        );
        // A wrong key is named; a wrong value is placed in the user's file.
        let e = Config::parse_with_defaults("slotz = 2\n", p, d.clone()).unwrap_err();
        assert!(e.to_string().contains("slotz"), "{e}");
        let e = Config::parse_with_defaults("# c\nslots = \"many\"\n", p, d).unwrap_err();
        assert!(e.to_string().contains("line 2, column 9"), "{e}");
    }

    #[test]
    fn defaults_fill_everything_but_data_dir() {
        let c = Config::new("/tmp/x");
        assert_eq!(c.slots, 3);
        assert_eq!(c.permission_mode, "bypassPermissions");
        assert_eq!(c.budget.window_secs, 18000);
    }

    #[test]
    fn a_config_that_parses_but_cannot_be_used_says_why() {
        let mut c = Config::new("/tmp/x");
        c.token = Some("t".into());
        assert_eq!(c.validate(), Ok(()));
        c.slots = 0;
        assert_eq!(c.validate(), Err(Invalid::NoSlots));
        c.slots = 1;
        c.budget.threshold_usd = Threshold::Usd(0.0);
        assert_eq!(
            c.validate(),
            Err(Invalid::Budget {
                field: "threshold_usd".into(),
                rule: "must be positive"
            })
        );
        // Without the window its threshold is not needed.
        c.budget.window_secs = 0;
        assert_eq!(c.validate(), Ok(()));
        c.budget.window_secs = 3600;
        c.budget.threshold_usd = Threshold::Usd(1.0);
        c.token = None;
        assert_eq!(c.validate(), Err(Invalid::NoToken));
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("conveyor.toml");
        std::fs::write(&p, "data_dir = \"d\"\ntoken = \"t\"\nslots = 0\n").unwrap();
        let e = Config::load(&p).unwrap_err().to_string();
        assert!(e.contains("slots must be at least 1"), "{e}");
    }

    #[test]
    fn budget_keys_old_and_new_load_and_errors_name_the_field() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("conveyor.toml");
        let load = |budget: &str| {
            std::fs::write(
                &p,
                format!("data_dir = \"d\"\ntoken = \"t\"\n[budget]\n{budget}"),
            )
            .unwrap();
            Config::load(&p)
        };
        // The keys of the first policy still work.
        let c = load("window_secs = 3600\nthreshold_usd = 20.0\nweekly_threshold_usd = 90.0\ndefault_estimate_usd = 0.5\nmiss_factor = 2.0\n").unwrap();
        assert_eq!(
            (
                c.budget.window_secs,
                c.budget.threshold_usd,
                c.budget.weekly_threshold_usd
            ),
            (3600, Threshold::Usd(20.0), Some(90.0))
        );
        // "auto", with its floor and ceiling, and prices of a model.
        let c = load("threshold_usd = \"auto\"\nthreshold_floor_usd = 30\nthreshold_ceiling_usd = 120.0\n[budget.prices.\"claude-x\"]\ninput = 1.0\noutput = 5.0\ncache_read = 0.1\ncache_write = 1.25\n").unwrap();
        assert_eq!(c.budget.threshold_usd, Threshold::Auto);
        assert_eq!(
            (c.budget.threshold_floor_usd, c.budget.threshold_ceiling_usd),
            (30.0, 120.0)
        );
        assert_eq!(c.budget.prices["claude-x"].output, 5.0);
        let c = load("monthly_threshold_usd = 200.0\nmonthly_reset_day = 15\ncold_start_usd = { executor = 3.0 }\nestimate_quantile = 0.8\nmargin = 0.1\nmax_budget_factor = 5.0\n").unwrap();
        assert_eq!(c.budget.monthly_threshold_usd, Some(200.0));
        assert_eq!(c.budget.cold_start_usd.get("executor"), Some(&3.0));
        for (text, field) in [
            ("monthy_threshold_usd = 1.0\n", "monthy_threshold_usd"),
            (
                "cold_start_usd = { exector = 1.0 }\n",
                "budget.cold_start_usd.exector",
            ),
            ("estimate_quantile = 0.2\n", "budget.estimate_quantile"),
            (
                "monthly_threshold_usd = -1.0\n",
                "budget.monthly_threshold_usd",
            ),
            ("max_budget_factor = 0.5\n", "budget.max_budget_factor"),
            ("monthly_reset_day = 31\n", "budget.monthly_reset_day"),
            ("threshold_usd = \"automatic\"\n", "budget.threshold_usd"),
            (
                "threshold_usd = \"auto\"\nthreshold_floor_usd = 50\nthreshold_ceiling_usd = 40\n",
                "budget.threshold_ceiling_usd",
            ),
            (
                "[budget.prices.m]\ninput = -1\noutput = 1\ncache_read = 0\ncache_write = 0\n",
                "budget.prices.m.input",
            ),
        ] {
            let e = load(text).unwrap_err().to_string();
            assert!(e.contains(field), "{text}: {e}");
        }
    }

    #[test]
    fn config_errors_name_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("conveyor.toml");
        std::fs::write(&p, "data_dir = \"d\"\ntoken = \"t\"\nslots = \"three\"\n").unwrap();
        let e = Config::load(&p).unwrap_err().to_string();
        assert!(e.contains("line 3, column 9"), "{e}");
        assert!(e.contains("conveyor.toml"), "{e}");
    }

    /// A `root_mode` user that does not exist is a mistake in the config file: the error
    /// names that file, not the data folder.
    #[tokio::test]
    async fn the_root_mode_error_names_the_config_file_not_the_data_folder() {
        let dir = tempfile::tempdir().unwrap();
        let (etc, data) = (dir.path().join("etc"), dir.path().join("var/data"));
        std::fs::create_dir_all(&etc).unwrap();
        let p = etc.join("conveyor.toml");
        std::fs::write(
            &p,
            format!(
                "listen = \"127.0.0.1:0\"\ndata_dir = {:?}\ntoken = \"t\"\nrun_lines = false\nroot_mode = {{ user = \"no-such-user-of-conveyor\" }}\n",
                data.display().to_string()
            ),
        )
        .unwrap();
        let e = crate::start(Config::load(&p).unwrap())
            .await
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&format!("{}: root_mode: no user", p.display())),
            "{e}"
        );
        assert!(!e.contains(&data.display().to_string()), "{e}");
    }

    #[test]
    fn the_documented_example_config_loads() {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/conveyor.example.toml");
        let c = Config::load(&p).unwrap();
        assert_eq!(c.listen.port(), 8790);
        assert_eq!(c.data_dir, PathBuf::from("/var/lib/conveyor"));
        assert_eq!(c.budget.threshold_usd, Threshold::Usd(50.0));
        let u: Config = toml::from_str(
            "data_dir = \"d\"\ntoken = \"t\"\nroot_mode = { user = \"conveyor\" }\n",
        )
        .unwrap();
        assert_eq!(u.root_mode, Some(RootMode::User("conveyor".into())));
    }

    #[test]
    fn keys_not_yet_read_are_named_when_set_and_unknown_keys_stay_errors() {
        let keys = |n: Vec<NotYetRead>| n.iter().map(|k| k.key).collect::<Vec<_>>();
        let p = Path::new("/cfg/conveyor.toml");
        let base = "data_dir = \"d\"\ntoken = \"t\"\n";
        let c = Config::parse_at(base, p).unwrap();
        assert!(c.not_yet_read().is_empty());
        let c = Config::parse_at(
            &format!("{base}night = \"22:00-08:00\"\ntimezone = \"Europe/Moscow\"\n"),
            p,
        )
        .unwrap();
        assert!(c.not_yet_read().is_empty(), "{:?}", keys(c.not_yet_read()));
        assert!(c.night().is_some());
        // A night or a zone that cannot be read is an error naming the field and the file.
        let e = Config::parse_at(&format!("{base}night = \"late\"\n"), p).unwrap_err();
        assert!(e.to_string().contains("night: \"late\""), "{e}");
        assert!(e.to_string().contains("/cfg/conveyor.toml"), "{e}");
        let e = Config::parse_at(&format!("{base}timezone = \"Mars/Base\"\n"), p).unwrap_err();
        assert!(e.to_string().contains("timezone: \"Mars/Base\""), "{e}");
        let e = Config::parse_at(&format!("{base}nigth = \"22:00-08:00\"\n"), p).unwrap_err();
        assert!(e.to_string().contains("nigth"), "{e}");

        let l = Checklist::parse("regression = \"x\"\nfull_level_paths = [\"m/**\"]\n").unwrap();
        assert!(l.not_yet_read().is_empty());
        let l = Checklist::parse(
            r#"ui_scenarios = "npx playwright test"
deploy = "./deploy.sh"
health_check = "curl -fsS http://127.0.0.1:8080/health"
rollback = "./rollback.sh"
ui_paths = ["web/**"]
"#,
        )
        .unwrap();
        assert!(l.not_yet_read().is_empty(), "{:?}", keys(l.not_yet_read()));
    }
}
