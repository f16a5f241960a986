//! Reading a runtime's dump of its tool registry.
//!
//! A dump is either a JSON array of tool names (`["query_data", ...]`) or
//! an object whose `tools` array holds names or tool definitions (objects
//! with a string `name`), as a runtime would dump its registry. Anything
//! else is unusable: the error names the JSON path and what was found.

use objectstack_spec::json::kind;
use serde_json::Value;

/// What the dump should look like, appended to every error.
const EXPECTED: &str = "expected a JSON array of tool names, or an object whose `tools` array holds names or tool definitions with a string `name`";

/// Why a dump cannot be read as a list of registered names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DumpError {
    /// The top level is neither an array nor an object.
    #[error("the dump is {found}; {EXPECTED}")]
    WrongShape {
        /// What the top level is.
        found: &'static str,
    },
    /// An object without a `tools` array.
    #[error("`tools` is {found}; {EXPECTED}")]
    NoToolsArray {
        /// What `tools` is (`missing` when absent).
        found: &'static str,
    },
    /// An entry that is not a name or a definition with a name.
    #[error("`{path}` is {found}; {EXPECTED}")]
    BadEntry {
        /// Where the entry is (`[3]`, `tools[2].name`).
        path: String,
        /// What was found there.
        found: &'static str,
    },
}

impl DumpError {
    /// A stable code: `wrong_shape`, `no_tools_array` or `bad_entry`.
    pub fn code(&self) -> &'static str {
        match self {
            DumpError::WrongShape { .. } => "wrong_shape",
            DumpError::NoToolsArray { .. } => "no_tools_array",
            DumpError::BadEntry { .. } => "bad_entry",
        }
    }

    /// The JSON path at fault: the root (empty) for a wrong shape,
    /// `tools` for a missing or non-array `tools`, else the entry.
    pub fn path(&self) -> &str {
        match self {
            DumpError::WrongShape { .. } => "",
            DumpError::NoToolsArray { .. } => "tools",
            DumpError::BadEntry { path, .. } => path,
        }
    }
}

/// The registered names of a dump, in dump order (duplicates kept, so the
/// check can report them).
pub fn registered_names(dump: &Value) -> Result<Vec<&str>, DumpError> {
    match dump {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| entry_name(item, &format!("[{i}]")))
            .collect(),
        Value::Object(map) => match map.get("tools") {
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| entry_name(item, &format!("tools[{i}]")))
                .collect(),
            Some(other) => Err(DumpError::NoToolsArray { found: kind(other) }),
            None => Err(DumpError::NoToolsArray { found: "missing" }),
        },
        other => Err(DumpError::WrongShape { found: kind(other) }),
    }
}

fn entry_name<'a>(item: &'a Value, path: &str) -> Result<&'a str, DumpError> {
    let (value, path) = match item {
        Value::Object(def) => match def.get("name") {
            Some(name) => (name, format!("{path}.name")),
            None => {
                return Err(DumpError::BadEntry {
                    path: format!("{path}.name"),
                    found: "missing",
                });
            }
        },
        other => (other, path.to_owned()),
    };
    match value {
        Value::String(name) if !name.is_empty() => Ok(name),
        Value::String(_) => Err(DumpError::BadEntry {
            path,
            found: "an empty string",
        }),
        other => Err(DumpError::BadEntry {
            path,
            found: kind(other),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_an_array_of_names() {
        let dump = json!(["query_data", "get_record", "query_data"]);
        assert_eq!(
            registered_names(&dump).unwrap(),
            ["query_data", "get_record", "query_data"]
        );
    }

    #[test]
    fn reads_tools_as_names_or_definitions() {
        let dump = json!({"version": 3, "tools": ["a", {"name": "b", "description": "x"}]});
        assert_eq!(registered_names(&dump).unwrap(), ["a", "b"]);
        assert_eq!(
            registered_names(&json!({"tools": []})).unwrap(),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn rejects_other_shapes_with_a_path() {
        let cases = [
            (
                json!("query_data"),
                "the dump is a string; expected a JSON array",
            ),
            (json!(null), "the dump is null; "),
            (json!({"names": []}), "`tools` is missing; "),
            (json!({"tools": {"a": {}}}), "`tools` is an object; "),
            (json!(["a", 3]), "`[1]` is a number; "),
            (json!(["a", ""]), "`[1]` is an empty string; "),
            (
                json!({"tools": ["a", {"label": "b"}]}),
                "`tools[1].name` is missing; ",
            ),
            (
                json!({"tools": [{"name": null}]}),
                "`tools[0].name` is null; ",
            ),
            (json!({"tools": [[]]}), "`tools[0]` is an array; "),
        ];
        for (dump, expected) in cases {
            let err = registered_names(&dump).unwrap_err().to_string();
            assert!(err.starts_with(expected), "{dump}: {err}");
            assert!(err.ends_with("with a string `name`"), "{err}");
        }
    }
}
