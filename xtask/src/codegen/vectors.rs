//! Expands the conformance vector templates in
//! `conformance/vectors/templates/` into the vectors beside them
//! (`conformance/vectors/<file>.json`), so the cases that list a package's
//! curated names follow the registry: adding a name to a group and running
//! `cargo xtask codegen` updates every such case.
//!
//! A template is the vector file itself, except that an array may hold a
//! placeholder object, replaced by names of one group, in registry order:
//!
//! ```json
//! {"$curated": "service-ai"}
//! {"$curated": "service-ai", "except": ["visualize_data"]}
//! {"$curated": "service-ai", "reversed": true}
//! ```
//!
//! `except` leaves names out (each must be in the group, so a template
//! cannot silently stop meaning what it says); `reversed` lists the rest
//! last to first. Everything else is copied as written, `expected`
//! included: the expectations are written by hand, in terms of the
//! group, never computed by the checker they test.

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};

use super::GeneratedFile;
use crate::util::read_to_string;

/// Where the templates live, relative to the workspace root.
pub(crate) const TEMPLATES_DIR: &str = "conformance/vectors/templates";

/// The vector files generated from a template (the others are written by
/// hand: their cases name individual entries, not whole groups).
pub(crate) const GENERATED: &[&str] = &["package", "materialised"];

/// The placeholder's key.
const CURATED: &str = "$curated";

/// Every generated vector file, rendered from its template under `root`.
pub(crate) fn render(root: &Path) -> Result<Vec<GeneratedFile>> {
    GENERATED
        .iter()
        .map(|file| {
            let template = format!("{TEMPLATES_DIR}/{file}.json");
            let text = read_to_string(&root.join(&template))?;
            let contents = expand_text(&text).with_context(|| format!("in {template}"))?;
            Ok(GeneratedFile::new(
                format!("conformance/vectors/{file}.json"),
                contents,
            ))
        })
        .collect()
}

/// A template's text to the vector file's text (pretty-printed with two
/// spaces, keys in the template's order, a final newline).
fn expand_text(template: &str) -> Result<String> {
    let value: Value = serde_json::from_str(template).context("not valid JSON")?;
    let expanded = expand(value, "")?;
    let mut text = serde_json::to_string_pretty(&expanded).context("could not render")?;
    text.push('\n');
    Ok(text)
}

/// Replaces every placeholder in `value`; `at` is its path, for errors.
fn expand(value: Value, at: &str) -> Result<Value> {
    match value {
        Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.into_iter().enumerate() {
                let here = format!("{at}[{i}]");
                match item {
                    Value::Object(map) if map.contains_key(CURATED) => {
                        out.extend(curated(&map, &here)?.into_iter().map(Value::from));
                    }
                    other => out.push(expand(other, &here)?),
                }
            }
            Ok(Value::Array(out))
        }
        Value::Object(map) => {
            if map.contains_key(CURATED) {
                bail!("{at}: a `{CURATED}` placeholder must be an array item");
            }
            let mut out = Map::with_capacity(map.len());
            for (key, item) in map {
                let here = if at.is_empty() {
                    key.clone()
                } else {
                    format!("{at}.{key}")
                };
                out.insert(key, expand(item, &here)?);
            }
            Ok(Value::Object(out))
        }
        scalar => Ok(scalar),
    }
}

/// The names one placeholder stands for.
fn curated(placeholder: &Map<String, Value>, at: &str) -> Result<Vec<&'static str>> {
    for key in placeholder.keys() {
        if !matches!(key.as_str(), CURATED | "except" | "reversed") {
            bail!(
                "{at}: unknown placeholder key `{key}` (expected `{CURATED}`, `except`, `reversed`)"
            );
        }
    }
    let Some(package) = placeholder.get(CURATED).and_then(Value::as_str) else {
        bail!("{at}: `{CURATED}` must be a package name");
    };
    let Some(group) = objectstack_registry::group(package) else {
        bail!("{at}: the registry has no `{package}` group");
    };
    let mut except = Vec::new();
    if let Some(list) = placeholder.get("except") {
        let Some(list) = list.as_array() else {
            bail!("{at}: `except` must be an array of names");
        };
        for name in list {
            let Some(name) = name.as_str() else {
                bail!("{at}: `except` must be an array of names");
            };
            if !group.names.contains(&name) {
                bail!("{at}: `{name}` in `except` is not in the `{package}` group");
            }
            except.push(name);
        }
    }
    let reversed = match placeholder.get("reversed") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => bail!("{at}: `reversed` must be true or false"),
    };
    let mut names: Vec<&'static str> = group
        .names
        .iter()
        .copied()
        .filter(|name| !except.contains(name))
        .collect();
    if reversed {
        names.reverse();
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(package: &str) -> Vec<&'static str> {
        objectstack_registry::group(package).unwrap().names.to_vec()
    }

    #[test]
    fn a_placeholder_becomes_the_group_spliced_into_its_array() {
        let text =
            expand_text(r#"[{"registered": ["first", {"$curated": "service-ai"}, "last"]}]"#)
                .unwrap();
        let value: Value = serde_json::from_str(&text).unwrap();
        let mut expected = vec!["first"];
        expected.extend(names("service-ai"));
        expected.push("last");
        assert_eq!(value[0]["registered"], serde_json::json!(expected));
        assert!(text.ends_with("]\n"), "{text}");
    }

    #[test]
    fn except_and_reversed_shape_the_list() {
        let all = names("service-ai");
        let (dropped, kept) = (all[0], all[1]);
        let template =
            format!(r#"[{{"$curated": "service-ai", "except": ["{dropped}"], "reversed": true}}]"#);
        let value: Value = serde_json::from_str(&expand_text(&template).unwrap()).unwrap();
        let list: Vec<&str> = value
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(list.len(), all.len() - 1);
        assert!(!list.contains(&dropped));
        assert_eq!(list.last(), Some(&kept));
    }

    #[test]
    fn a_template_that_no_longer_means_what_it_says_is_an_error() {
        for (template, says) in [
            (r#"[{"$curated": "service-crm"}]"#, "no `service-crm` group"),
            (
                r#"[{"$curated": "service-ai", "except": ["describe_object"]}]"#,
                "not in the `service-ai` group",
            ),
            (
                r#"[{"$curated": "service-ai", "order": 1}]"#,
                "unknown placeholder key",
            ),
            (
                r#"{"a": {"$curated": "service-ai"}}"#,
                "must be an array item",
            ),
        ] {
            let err = format!("{:#}", expand_text(template).unwrap_err());
            assert!(err.contains(says), "{template}: {err}");
        }
    }
}
