//! Per-rule levels (`allow`, `warn`, `deny`) from `objectstack-lint.toml`
//! and the command line: the severity ratchet of ADR-0078.
//!
//! ```toml
//! # objectstack-lint.toml, found by walking up from the linted file
//! [rules]
//! ai-skill-tool-unresolved = "deny"   # promoted once the registry has soaked
//! ai-tool-record-inert = "allow"
//! warnings = "deny"                   # every remaining warning fails the run
//! ```
//!
//! `warnings` names every finding that is a warning after its own rule's
//! level has been applied.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::Deserialize;

use crate::finding::{Finding, Severity};

/// The name of the configuration file.
pub const CONFIG_FILE_NAME: &str = "objectstack-lint.toml";

/// The pseudo-rule that names every warning.
pub const WARNINGS: &str = "warnings";

/// What to do with a rule's findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Drop them.
    Allow,
    /// Report them as warnings.
    Warn,
    /// Report them as errors (exit code 1).
    Deny,
}

impl FromStr for Level {
    type Err = ConfigError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "allow" => Ok(Level::Allow),
            "warn" => Ok(Level::Warn),
            "deny" => Ok(Level::Deny),
            other => Err(ConfigError::BadLevel(other.to_owned())),
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Allow => "allow",
            Level::Warn => "warn",
            Level::Deny => "deny",
        })
    }
}

/// Why a configuration could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A rule id that no rule has.
    #[error("unknown rule `{id}`{}; `objectstack-ai rules` lists them", did_you_mean(.suggestion))]
    UnknownRule {
        /// The id as written.
        id: String,
        /// The nearest known id.
        suggestion: Option<String>,
    },
    /// A level other than allow, warn or deny.
    #[error("unknown level `{0}`: write `allow`, `warn` or `deny`")]
    BadLevel(String),
    /// The file is not valid TOML of the expected shape.
    #[error("{file}: {message}")]
    Syntax {
        /// The file, with `:line:column` when the problem has a place.
        file: String,
        /// What the TOML reader said.
        message: String,
    },
    /// The file could not be read.
    #[error("cannot read {file}: {message}")]
    Io {
        /// The file.
        file: String,
        /// The operating system's message.
        message: String,
    },
}

/// The largest configuration file [`Config::load`] reads (1 GiB).
pub const MAX_CONFIG_BYTES: u64 = 1 << 30;

/// Reads at most `limit` bytes of UTF-8 text from `path`.
fn read_limited(path: &Path, limit: u64) -> Result<String, ConfigError> {
    use std::io::Read as _;
    let io = |e: std::io::Error| ConfigError::Io {
        file: path.display().to_string(),
        message: e.to_string(),
    };
    let mut text = String::new();
    std::fs::File::open(path)
        .map_err(io)?
        .take(limit.saturating_add(1))
        .read_to_string(&mut text)
        .map_err(io)?;
    if u64::try_from(text.len()).unwrap_or(u64::MAX) > limit {
        return Err(ConfigError::Io {
            file: path.display().to_string(),
            message: format!("it is more than {limit} bytes, the largest configuration file read"),
        });
    }
    Ok(text)
}

fn did_you_mean(s: &Option<String>) -> String {
    s.as_ref()
        .map_or_else(String::new, |s| format!(" (did you mean `{s}`?)"))
}

/// Rule levels, layered from defaults, a file and the command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    levels: BTreeMap<String, Level>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    rules: BTreeMap<String, Level>,
}

impl Config {
    /// Reads the TOML text of a configuration file (`file` names it in
    /// errors).
    pub fn parse(text: &str, file: &str) -> Result<Config, ConfigError> {
        let parsed: ConfigFile = toml::from_str(text).map_err(|e| {
            // `file:line:column: message`, as every other input error.
            let at = e.span().map_or_else(String::new, |span| {
                let (line, column) = objectstack_spec::parse::line_column_at(text, span.start);
                format!(":{line}:{column}")
            });
            ConfigError::Syntax {
                file: format!("{file}{at}"),
                message: e.message().to_owned(),
            }
        })?;
        let mut config = Config::default();
        for (id, level) in parsed.rules {
            config.set(&id, level).map_err(|e| ConfigError::Syntax {
                file: file.to_owned(),
                message: e.to_string(),
            })?;
        }
        Ok(config)
    }

    /// Reads a configuration file of at most 1 GiB ([`MAX_CONFIG_BYTES`]);
    /// the limit counts the bytes read, so a pipe or a device cannot make it
    /// read without end.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = read_limited(path, MAX_CONFIG_BYTES)?;
        Config::parse(&text, &path.display().to_string())
    }

    /// The nearest `objectstack-lint.toml` in `start` (a file's directory or
    /// a directory) or any of its ancestors. A relative `start` is taken
    /// from the working directory, a bare file name (`stack.json`) included.
    pub fn discover(start: &Path) -> Option<PathBuf> {
        let dir = if start.is_dir() {
            start
        } else {
            start.parent().unwrap_or(Path::new(""))
        };
        // `Path::new("stack.json").parent()` is `""`, whose only ancestor is
        // itself: the working directory's parents would never be searched.
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        let dir = std::fs::canonicalize(dir)
            .or_else(|_| std::path::absolute(dir))
            .unwrap_or_else(|_| dir.to_path_buf());
        dir.ancestors()
            .map(|dir| dir.join(CONFIG_FILE_NAME))
            .find(|candidate| candidate.is_file())
    }

    /// Sets a rule's level (`warnings` for every warning). The id must be a
    /// known rule.
    pub fn set(&mut self, id: &str, level: Level) -> Result<(), ConfigError> {
        if id != WARNINGS && !crate::is_known_rule(id) {
            return Err(ConfigError::UnknownRule {
                id: id.to_owned(),
                suggestion: crate::nearest_rule_id(id).map(str::to_owned),
            });
        }
        self.levels.insert(id.to_owned(), level);
        Ok(())
    }

    /// Lays `over` on top of this configuration (its levels win).
    pub fn merge(&mut self, over: &Config) {
        for (id, level) in &over.levels {
            self.levels.insert(id.clone(), *level);
        }
    }

    /// The configured level of a rule, if any.
    pub fn level(&self, id: &str) -> Option<Level> {
        self.levels.get(id).copied()
    }

    /// Applies the levels: drops allowed findings and sets each remaining
    /// finding's severity.
    pub fn apply(&self, findings: Vec<Finding>) -> Vec<Finding> {
        let warnings = self.level(WARNINGS);
        findings
            .into_iter()
            .filter_map(|mut f| {
                let severity = match self.level(&f.rule) {
                    Some(Level::Allow) => return None,
                    Some(Level::Warn) => Severity::Warning,
                    Some(Level::Deny) => Severity::Error,
                    None => f.severity,
                };
                f.severity = match (severity, warnings) {
                    (Severity::Warning, Some(Level::Allow)) => return None,
                    (Severity::Warning, Some(Level::Deny)) => Severity::Error,
                    (s, _) => s,
                };
                Some(f)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(rule: &str, severity: Severity) -> Finding {
        Finding {
            rule: rule.to_owned().into(),
            severity,
            where_: String::new(),
            path: String::new(),
            message: crate::Text::default(),
            hint: crate::Text::default(),
            reference: None,
            suggestion: None,
            location: None,
        }
    }

    const UNRESOLVED: &str = "ai-skill-tool-unresolved";
    const INERT: &str = "ai-tool-record-inert";
    const SHADOWS: &str = "ai-tool-record-shadows-platform";

    #[test]
    fn parses_levels_and_rejects_unknown_ids() {
        let c = Config::parse(
            "[rules]\nai-skill-tool-unresolved = \"deny\"\nwarnings = \"allow\"\n",
            "x.toml",
        )
        .unwrap();
        assert_eq!(c.level(UNRESOLVED), Some(Level::Deny));
        assert_eq!(c.level(WARNINGS), Some(Level::Allow));
        let err =
            Config::parse("[rules]\nai-skill-tool-unresolve = \"deny\"\n", "x.toml").unwrap_err();
        assert!(
            err.to_string()
                .contains("did you mean `ai-skill-tool-unresolved`"),
            "{err}"
        );
        assert!(Config::parse("[rules]\nai-tool-record-inert = \"off\"\n", "x.toml").is_err());
        assert!(Config::parse("rules = 3", "x.toml").is_err());
        assert!(Config::parse("other = 1", "x.toml").is_err());
    }

    #[test]
    fn applies_levels_then_the_warnings_group() {
        let all = || {
            vec![
                finding(UNRESOLVED, Severity::Warning),
                finding(INERT, Severity::Warning),
                finding(SHADOWS, Severity::Error),
            ]
        };
        let mut c = Config::default();
        c.set(UNRESOLVED, Level::Deny).unwrap();
        c.set(INERT, Level::Allow).unwrap();
        c.set(SHADOWS, Level::Warn).unwrap();
        let out = c.apply(all());
        let got: Vec<_> = out.iter().map(|f| (f.rule.as_ref(), f.severity)).collect();
        assert_eq!(
            got,
            [(UNRESOLVED, Severity::Error), (SHADOWS, Severity::Warning)]
        );

        let mut deny_warnings = Config::default();
        deny_warnings.set(WARNINGS, Level::Deny).unwrap();
        assert!(
            deny_warnings
                .apply(all())
                .iter()
                .all(|f| f.severity == Severity::Error)
        );
        let mut allow_warnings = Config::default();
        allow_warnings.set(WARNINGS, Level::Allow).unwrap();
        assert_eq!(allow_warnings.apply(all()).len(), 1);
    }

    #[test]
    fn merge_lets_the_later_layer_win() {
        let mut file = Config::default();
        file.set(INERT, Level::Deny).unwrap();
        let mut cli = Config::default();
        cli.set(INERT, Level::Allow).unwrap();
        file.merge(&cli);
        assert_eq!(file.level(INERT), Some(Level::Allow));
    }

    #[test]
    fn syntax_errors_say_where() {
        let err = Config::parse("[rules]\nfoo = [\n", "lint.toml").unwrap_err();
        assert!(err.to_string().starts_with("lint.toml:2:8: "), "{err}");
        let err = Config::parse("rules = 5\n", "lint.toml").unwrap_err();
        assert!(err.to_string().starts_with("lint.toml:1:9: "), "{err}");
    }

    #[test]
    fn reads_no_more_than_the_limit() {
        // `/dev/zero` never ends, and its metadata says it is empty.
        if cfg!(unix) {
            let err = read_limited(Path::new("/dev/zero"), 4096).unwrap_err();
            assert!(err.to_string().contains("more than 4096 bytes"), "{err}");
        }
        let dir = std::env::temp_dir().join(format!("osl-config-limit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(CONFIG_FILE_NAME);
        std::fs::write(&file, "[rules]\n").unwrap();
        assert_eq!(read_limited(&file, 8).unwrap(), "[rules]\n");
        assert!(read_limited(&file, 7).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn discovers_the_nearest_file_upwards() {
        let dir = std::env::temp_dir().join(format!("osl-config-{}", std::process::id()));
        let nested = dir.join("a").join("b");
        std::fs::create_dir_all(&nested).unwrap();
        std::fs::write(dir.join(CONFIG_FILE_NAME), "[rules]\n").unwrap();
        let found = Config::discover(&nested.join("stack.json")).unwrap();
        assert_eq!(
            found,
            std::fs::canonicalize(&dir).unwrap().join(CONFIG_FILE_NAME)
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
