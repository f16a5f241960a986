//! Checking a model's arguments before anything runs: size and nesting
//! limits, then the tool's `parameters` schema.
//!
//! A `null` for an optional property whose schema does not accept `null`
//! is read as "not given" and removed first: the OpenAI strict projection
//! makes every property required and the optional ones nullable, and tells
//! the model to send `null` for a value it does not give. A `null` the
//! schema accepts is kept, so no input the schema allows changes meaning.

use objectstack_spec::path::JsonPath;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::RegisterError;

/// Most violations listed in one error (the rest are counted).
const MAX_LISTED: usize = 100;

/// Longest message of one violation, in characters.
const MAX_MESSAGE_CHARS: usize = 300;

/// Size and nesting limits applied to every call's arguments before the
/// schema is consulted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArgumentLimits {
    /// Largest argument document, in bytes of JSON (default 1 MiB).
    pub max_bytes: usize,
    /// Deepest nesting of objects and arrays (default 32).
    pub max_depth: usize,
}

impl Default for ArgumentLimits {
    fn default() -> Self {
        ArgumentLimits {
            max_bytes: 1024 * 1024,
            max_depth: 32,
        }
    }
}

impl ArgumentLimits {
    /// `Err` with a sentence for the model when `arguments` exceed a limit.
    /// Walks the value without recursion, so any depth is safe to check.
    pub fn check(&self, arguments: &Map<String, Value>) -> Result<(), String> {
        let mut stack: Vec<(&Value, usize)> = arguments.values().map(|v| (v, 2)).collect();
        let mut bytes: usize = 2;
        for (k, _) in arguments {
            bytes = bytes.saturating_add(k.len() + 4);
        }
        while let Some((value, depth)) = stack.pop() {
            let container = matches!(value, Value::Array(_) | Value::Object(_));
            if container && depth > self.max_depth {
                return Err(format!(
                    "the arguments nest deeper than {} levels; flatten them",
                    self.max_depth
                ));
            }
            match value {
                Value::Array(items) => {
                    bytes = bytes.saturating_add(2 + items.len());
                    stack.extend(items.iter().map(|v| (v, depth + 1)));
                }
                Value::Object(map) => {
                    bytes = bytes.saturating_add(2 + map.len());
                    for (k, v) in map {
                        bytes = bytes.saturating_add(k.len() + 3);
                        stack.push((v, depth + 1));
                    }
                }
                Value::String(s) => bytes = bytes.saturating_add(s.len() + 2),
                Value::Number(_) => bytes = bytes.saturating_add(8),
                Value::Bool(_) | Value::Null => bytes = bytes.saturating_add(5),
            }
            if bytes > self.max_bytes {
                return Err(format!(
                    "the arguments are larger than {} bytes; send less data",
                    self.max_bytes
                ));
            }
        }
        Ok(())
    }
}

/// One way the arguments break the tool's schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Where, as a path from the arguments' root (`items[0].qty`); empty
    /// for the root itself.
    pub path: String,
    /// What is wrong, in the validator's words.
    pub message: String,
}

/// A tool's `parameters` schema, checked at registration and compiled on
/// the tool's first call: a compiled validator costs several times its
/// schema in memory, and most tools of a large stack are never called.
pub(crate) struct ArgumentValidator {
    validator: std::sync::OnceLock<jsonschema::Validator>,
    /// The schema: compiled from, and read to find the optional properties.
    /// Shared: the registry hands the same allocation to hosts
    /// ([`ToolRegistry::parameters`](super::ToolRegistry::parameters)), so
    /// a served tool's schema is held once.
    schema: Arc<Map<String, Value>>,
}

impl std::fmt::Debug for ArgumentValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgumentValidator")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

/// How far `$ref`s and combinators are followed when deciding whether a
/// schema accepts `null` (a cycle stops here, keeping the `null`).
const MAX_SCHEMA_DEPTH: usize = 32;

/// The validators of a registry's tools, one per distinct schema: tools
/// whose `parameters` are the same JSON, key order included (many actions
/// of a stack take the same arguments, or none), share one schema and one
/// compiled validator, so a schema is checked, held and compiled once.
#[derive(Default)]
pub(crate) struct SchemaPool {
    /// By a hash of the schema's compact JSON. A second schema with the
    /// same hash (a collision) is simply not shared.
    by_hash: std::collections::HashMap<u64, Arc<ArgumentValidator>>,
}

impl SchemaPool {
    /// The validator for `schema`: the one already made for an equal
    /// schema, else a new one (checked as [`ArgumentValidator::compile`]
    /// checks it, and refused with `tool`'s name).
    pub(crate) fn validator(
        &mut self,
        tool: &str,
        schema: Map<String, Value>,
    ) -> Result<Arc<ArgumentValidator>, RegisterError> {
        let hash = schema_hash(&schema);
        if let Some(shared) = self.by_hash.get(&hash)
            && same_json_map(&shared.schema, &schema, 0)
        {
            return Ok(shared.clone());
        }
        let validator = Arc::new(ArgumentValidator::compile(tool, Arc::new(schema))?);
        self.by_hash
            .entry(hash)
            .or_insert_with(|| validator.clone());
        Ok(validator)
    }
}

/// A hash of `schema`'s compact JSON, written straight into the hasher.
fn schema_hash(schema: &Map<String, Value>) -> u64 {
    use std::hash::Hasher;
    struct Feed(std::collections::hash_map::DefaultHasher);
    impl std::io::Write for Feed {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.write(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut feed = Feed(std::collections::hash_map::DefaultHasher::new());
    // Writing to a hasher cannot fail; a map always serialises.
    let _ = serde_json::to_writer(&mut feed, schema);
    feed.0.finish()
}

/// Whether two schemas are the same JSON with their keys in the same
/// order (`serde_json`'s `==` ignores the order, and a served schema shows
/// it). Past [`MAX_SCHEMA_DEPTH`] levels they are not shared.
fn same_json_map(a: &Map<String, Value>, b: &Map<String, Value>, depth: usize) -> bool {
    depth < MAX_SCHEMA_DEPTH
        && a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((ka, va), (kb, vb))| ka == kb && same_json(va, vb, depth + 1))
}

fn same_json(a: &Value, b: &Value, depth: usize) -> bool {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => same_json_map(a, b, depth),
        (Value::Array(a), Value::Array(b)) => {
            depth < MAX_SCHEMA_DEPTH
                && a.len() == b.len()
                && a.iter().zip(b).all(|(x, y)| same_json(x, y, depth + 1))
        }
        _ => a == b,
    }
}

impl ArgumentValidator {
    /// Checks that the schema compiles (external `$ref`s are not fetched);
    /// the compiled validator is dropped and built again on first use.
    pub(crate) fn compile(
        tool: &str,
        schema: Arc<Map<String, Value>>,
    ) -> Result<Self, RegisterError> {
        jsonschema::validator_for(&Value::Object((*schema).clone()))
            .map(|_| ArgumentValidator {
                validator: std::sync::OnceLock::new(),
                schema,
            })
            .map_err(|e| RegisterError::InvalidSchema {
                tool: tool.to_owned(),
                message: e.to_string(),
            })
    }

    /// The compiled validator, built on first use. The schema compiled at
    /// registration, and compiling is deterministic, so it compiles again.
    fn compiled(&self) -> Result<&jsonschema::Validator, String> {
        if let Some(validator) = self.validator.get() {
            return Ok(validator);
        }
        let validator = jsonschema::validator_for(&Value::Object((*self.schema).clone()))
            .map_err(|e| e.to_string())?;
        // Another thread may have won the race; either copy is the same.
        Ok(self.validator.get_or_init(|| validator))
    }

    /// Removes every `null` given for an optional property whose schema
    /// does not accept `null`, at any depth the arguments and the schema
    /// share (`properties`, `items`, local `$ref`s): it means "not given".
    /// Call it after [`ArgumentLimits::check`], which bounds the depth.
    pub(crate) fn drop_absent_nulls(&self, arguments: &mut Map<String, Value>) {
        drop_nulls_in_object(
            arguments,
            resolve_node(&self.schema, &self.schema, 0),
            &self.schema,
            0,
        );
    }

    /// The schema, shared.
    pub(crate) fn schema(&self) -> &Arc<Map<String, Value>> {
        &self.schema
    }

    /// Every violation, in the validator's order.
    pub(crate) fn validate(&self, arguments: &Map<String, Value>) -> Result<(), Vec<Violation>> {
        let validator = self.compiled().map_err(|message| {
            vec![Violation {
                path: String::new(),
                message: format!("the tool's parameter schema no longer compiles: {message}"),
            }]
        })?;
        let instance = Value::Object(arguments.clone());
        let violations: Vec<Violation> = validator
            .iter_errors(&instance)
            .map(|e| Violation {
                path: pointer_to_path(&instance, e.instance_path().as_str()),
                message: truncate(&e.to_string(), MAX_MESSAGE_CHARS),
            })
            .collect();
        if violations.is_empty() {
            Ok(())
        } else {
            Err(violations)
        }
    }
}

fn drop_nulls_in_object(
    instance: &mut Map<String, Value>,
    schema: Option<&Map<String, Value>>,
    root: &Map<String, Value>,
    depth: usize,
) {
    let Some(schema) = schema else {
        return;
    };
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    let required: Vec<&str> = match schema.get("required") {
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    instance.retain(|name, value| {
        !(value.is_null()
            && !required.contains(&name.as_str())
            && properties
                .get(name)
                .is_some_and(|p| !accepts_null(p, root, 0)))
    });
    for (name, value) in instance.iter_mut() {
        if let Some(property) = properties.get(name) {
            drop_nulls_in_value(value, property, root, depth + 1);
        }
    }
}

fn drop_nulls_in_value(value: &mut Value, schema: &Value, root: &Map<String, Value>, depth: usize) {
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    match value {
        Value::Object(map) => {
            drop_nulls_in_object(map, resolve(schema, root, depth), root, depth);
        }
        Value::Array(items) => {
            let Some(item_schema) = resolve(schema, root, depth).and_then(|s| s.get("items"))
            else {
                return;
            };
            for item in items {
                drop_nulls_in_value(item, item_schema, root, depth + 1);
            }
        }
        _ => {}
    }
}

/// What a local `$ref` (`#`, `#/$defs/x`) names in the root schema.
enum Target<'s> {
    /// The root schema itself.
    Root,
    /// A value below it.
    Below(&'s Value),
}

/// `root.pointer(pointer)` for a root held as a map.
fn target<'s>(root: &'s Map<String, Value>, pointer: &str) -> Option<Target<'s>> {
    if pointer.is_empty() {
        return Some(Target::Root);
    }
    let rest = pointer.strip_prefix('/')?;
    let (first, below) = match rest.find('/') {
        Some(at) => (rest.get(..at)?, rest.get(at..)?),
        None => (rest, ""),
    };
    let key = first.replace("~1", "/").replace("~0", "~");
    root.get(&key)?.pointer(below).map(Target::Below)
}

/// The schema object `schema` stands for, following a local `$ref`
/// (`#/...`) that is all it says.
fn resolve<'s>(
    schema: &'s Value,
    root: &'s Map<String, Value>,
    depth: usize,
) -> Option<&'s Map<String, Value>> {
    resolve_node(schema.as_object()?, root, depth)
}

/// [`resolve`] for a schema object.
fn resolve_node<'s>(
    node: &'s Map<String, Value>,
    root: &'s Map<String, Value>,
    depth: usize,
) -> Option<&'s Map<String, Value>> {
    if depth > MAX_SCHEMA_DEPTH {
        return None;
    }
    match node.get("$ref").and_then(Value::as_str) {
        Some(reference) if node.get("properties").is_none() && node.get("items").is_none() => {
            match target(root, reference.strip_prefix('#')?)? {
                Target::Root => resolve_node(root, root, depth + 1),
                Target::Below(next) => resolve(next, root, depth + 1),
            }
        }
        _ => Some(node),
    }
}

/// Whether `schema` accepts `null`, judged from `type`, `enum`, `const`,
/// `anyOf`, `oneOf`, `allOf` and local `$ref`s; anything it cannot judge
/// counts as accepting, so the `null` is kept and the validator decides.
fn accepts_null(schema: &Value, root: &Map<String, Value>, depth: usize) -> bool {
    match schema {
        Value::Object(node) => node_accepts_null(node, root, depth),
        other => depth > MAX_SCHEMA_DEPTH || other.as_bool() != Some(false),
    }
}

/// [`accepts_null`] for a schema object.
fn node_accepts_null(node: &Map<String, Value>, root: &Map<String, Value>, depth: usize) -> bool {
    if depth > MAX_SCHEMA_DEPTH {
        return true;
    }
    let type_ok = match node.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
        _ => true,
    };
    let enum_ok = match node.get("enum") {
        Some(Value::Array(values)) => values.iter().any(Value::is_null),
        _ => true,
    };
    let const_ok = node.get("const").is_none_or(Value::is_null);
    let branches = |key: &str| node.get(key).and_then(Value::as_array);
    let any_ok = |key: &str| {
        branches(key).is_none_or(|b| b.iter().any(|s| accepts_null(s, root, depth + 1)))
    };
    let all_ok =
        branches("allOf").is_none_or(|b| b.iter().all(|s| accepts_null(s, root, depth + 1)));
    let ref_ok = match node.get("$ref").and_then(Value::as_str) {
        Some(reference) => match reference
            .strip_prefix('#')
            .and_then(|pointer| target(root, pointer))
        {
            None => true,
            Some(Target::Root) => node_accepts_null(root, root, depth + 1),
            Some(Target::Below(next)) => accepts_null(next, root, depth + 1),
        },
        None => true,
    };
    type_ok && enum_ok && const_ok && any_ok("anyOf") && any_ok("oneOf") && all_ok && ref_ok
}

/// The sentence handed to the model for a set of violations.
pub(crate) fn describe(tool: &str, violations: &[Violation]) -> String {
    let mut out = format!(
        "the arguments of `{tool}` do not match its parameters schema ({} problem{}); nothing was executed:",
        violations.len(),
        if violations.len() == 1 { "" } else { "s" }
    );
    for v in violations.iter().take(MAX_LISTED) {
        let path = if v.path.is_empty() {
            "(arguments)"
        } else {
            &v.path
        };
        out.push_str(&format!("\n- {path}: {}", v.message));
    }
    if violations.len() > MAX_LISTED {
        out.push_str(&format!(
            "\n- ... and {} more",
            violations.len() - MAX_LISTED
        ));
    }
    out
}

/// Turns a JSON pointer into the dotted path notation, reading the
/// instance to tell array indices from numeric object keys.
fn pointer_to_path(instance: &Value, pointer: &str) -> String {
    let mut path = JsonPath::root();
    let mut current = Some(instance);
    for raw in pointer.split('/').skip(1) {
        let token = raw.replace("~1", "/").replace("~0", "~");
        match current {
            Some(Value::Array(items)) => match token.parse::<usize>() {
                Ok(i) => {
                    path = path.index(i);
                    current = items.get(i);
                }
                Err(_) => {
                    path = path.key(&token);
                    current = None;
                }
            },
            Some(Value::Object(map)) => {
                current = map.get(&token);
                path = path.key(&token);
            }
            _ => {
                path = path.key(&token);
                current = None;
            }
        }
    }
    path.to_string()
}

fn truncate(s: &str, max_chars: usize) -> String {
    match s.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn equal_schemas_share_one_validator_and_key_order_counts() {
        let mut pool = SchemaPool::default();
        let a = json!({"type": "object", "properties": {"note": {"type": "string"}},
            "additionalProperties": false});
        let first = pool.validator("action_a", map(a.clone())).unwrap();
        let second = pool.validator("action_b", map(a)).unwrap();
        assert!(Arc::ptr_eq(&first, &second));
        assert!(Arc::ptr_eq(first.schema(), second.schema()));
        // The same keys in another order are another schema to a client.
        let reordered = json!({"properties": {"note": {"type": "string"}}, "type": "object",
            "additionalProperties": false});
        let third = pool.validator("action_c", map(reordered)).unwrap();
        assert!(!Arc::ptr_eq(&first, &third));
        assert_eq!(
            third.schema().keys().collect::<Vec<_>>(),
            ["properties", "type", "additionalProperties"]
        );
        // A different schema is not shared, and validates by its own rules.
        let number = json!({"type": "object", "properties": {"note": {"type": "number"}}});
        let fourth = pool.validator("action_d", map(number)).unwrap();
        assert!(!Arc::ptr_eq(&first, &fourth));
        assert!(fourth.validate(&map(json!({"note": 1}))).is_ok());
        assert!(first.validate(&map(json!({"note": 1}))).is_err());
    }

    #[test]
    fn a_schema_that_does_not_compile_is_refused_under_its_tools_name() {
        let mut pool = SchemaPool::default();
        let bad = json!({"type": "object", "properties": {"x": {"type": 12}}});
        let err = pool
            .validator("action_bad", map(bad.clone()))
            .err()
            .unwrap();
        assert!(err.to_string().contains("action_bad"), "{err}");
        // Nothing was kept for it: the next tool is refused under its name.
        let err = pool.validator("action_worse", map(bad)).err().unwrap();
        assert!(err.to_string().contains("action_worse"), "{err}");
    }

    #[test]
    fn pointer_paths_follow_the_instance() {
        let v = json!({"items": [{"qty": 1}], "m": {"0": true}, "a/b": 1});
        assert_eq!(pointer_to_path(&v, ""), "");
        assert_eq!(pointer_to_path(&v, "/items/0/qty"), "items[0].qty");
        assert_eq!(pointer_to_path(&v, "/m/0"), "m[\"0\"]");
        assert_eq!(pointer_to_path(&v, "/a~1b"), "[\"a/b\"]");
    }

    #[test]
    fn limits_catch_depth_and_size_without_recursion() {
        let limits = ArgumentLimits::default();
        assert!(limits.check(&map(json!({"a": [1, {"b": "c"}]}))).is_ok());
        let mut deep = json!(0);
        for _ in 0..1000 {
            deep = json!([deep]);
        }
        let err = limits.check(&map(json!({"x": deep}))).unwrap_err();
        assert!(err.contains("deeper than 32"), "{err}");
        let big = "x".repeat(2 * 1024 * 1024);
        let err = limits.check(&map(json!({"x": big}))).unwrap_err();
        assert!(err.contains("larger than"), "{err}");
        // Exactly at the depth limit is fine.
        let mut ok = json!(0);
        for _ in 0..31 {
            ok = json!([ok]);
        }
        assert!(limits.check(&map(json!({"x": ok}))).is_ok());
    }

    #[test]
    fn a_schema_is_checked_at_registration_and_compiled_on_first_use() {
        let schema = map(json!({"type": "object", "properties": {"n": {"type": "number"}}}));
        let v = ArgumentValidator::compile("t", Arc::new(schema)).unwrap();
        assert!(v.validator.get().is_none(), "nothing compiled is kept yet");
        assert!(v.validate(&map(json!({"n": "x"}))).is_err());
        assert!(v.validator.get().is_some(), "compiled once, then kept");
        assert!(v.validate(&map(json!({"n": 1}))).is_ok());
    }

    #[test]
    fn every_violation_is_listed_with_its_path() {
        let schema = map(json!({
            "type": "object",
            "properties": {"n": {"type": "number"}, "tags": {"type": "array", "items": {"type": "string"}}},
            "required": ["n"],
            "additionalProperties": false
        }));
        let v = ArgumentValidator::compile("t", Arc::new(schema)).unwrap();
        assert!(v.validate(&map(json!({"n": 1, "tags": ["a"]}))).is_ok());
        let errs = v
            .validate(&map(json!({"tags": ["a", 2], "extra": 1})))
            .unwrap_err();
        let paths: Vec<&str> = errs.iter().map(|e| e.path.as_str()).collect();
        assert!(paths.contains(&""), "{errs:?}");
        assert!(paths.contains(&"tags[1]"), "{errs:?}");
        assert_eq!(errs.len(), 3, "{errs:?}");
        let text = describe("t", &errs);
        assert!(text.contains("3 problems"), "{text}");
        assert!(text.contains("- tags[1]:"), "{text}");
    }

    #[test]
    fn a_null_for_an_optional_property_that_rejects_null_is_not_given() {
        let schema = map(json!({
            "type": "object",
            "properties": {
                "note": {"type": "string"},
                "level": {"type": "string", "enum": ["low", "high"]},
                "maybe": {"type": ["string", "null"]},
                "any": {"description": "anything"},
                "need": {"type": "string"},
                "filter": {"$ref": "#/$defs/filter"},
                "rows": {"type": "array", "items": {"type": "object",
                    "properties": {"qty": {"type": "number"}}}}
            },
            "required": ["need"],
            "additionalProperties": false,
            "$defs": {"filter": {"type": "object",
                "properties": {"status": {"type": "string"}, "kind": {"type": "string"}},
                "required": ["kind"]}}
        }));
        let v = ArgumentValidator::compile("t", Arc::new(schema)).unwrap();
        let mut args = map(json!({
            "note": null, "level": null, "maybe": null, "any": null, "need": null,
            "filter": {"status": null, "kind": null},
            "rows": [{"qty": null}, {"qty": 2}]
        }));
        v.drop_absent_nulls(&mut args);
        assert_eq!(
            Value::Object(args.clone()),
            json!({
                // Kept: the schema accepts null, or the property is required
                // (and the validator refuses it).
                "maybe": null, "any": null, "need": null,
                "filter": {"kind": null},
                "rows": [{}, {"qty": 2}]
            })
        );
        let errs = v.validate(&args).unwrap_err();
        let paths: Vec<&str> = errs.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, ["need", "filter.kind"], "{errs:?}");
    }

    #[test]
    fn accepting_null_is_judged_from_the_schema() {
        let root = map(
            json!({"$defs": {"n": {"type": "null"}, "s": {"type": "string"},
                          "loop": {"$ref": "#/$defs/loop"}}}),
        );
        for (schema, accepts) in [
            (json!({"type": "string"}), false),
            (json!({"type": ["number", "null"]}), true),
            (json!({"type": ["number", "null"], "enum": [1, 2]}), false),
            (json!({"enum": ["a", null]}), true),
            (json!({"const": "a"}), false),
            (
                json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
                true,
            ),
            (json!({"oneOf": [{"type": "string"}]}), false),
            (
                json!({"allOf": [{"type": ["string", "null"]}, {"type": "string"}]}),
                false,
            ),
            (json!({"$ref": "#/$defs/n"}), true),
            (json!({"$ref": "#/$defs/s"}), false),
            (json!({"$ref": "#/$defs/loop"}), true),
            (json!({"$ref": "https://example.com/x"}), true),
            (json!({}), true),
            (json!(false), false),
        ] {
            assert_eq!(accepts_null(&schema, &root, 0), accepts, "{schema}");
        }
    }

    #[test]
    fn a_reference_to_the_root_is_followed_in_the_shared_schema() {
        // `$ref: "#"` names the root schema itself, held as a map.
        let schema = map(json!({
            "type": "object",
            "properties": {
                "child": {"$ref": "#"},
                "note": {"type": "string"},
                "maybe": {"type": ["string", "null"]}
            }
        }));
        let v = ArgumentValidator::compile("t", Arc::new(schema)).unwrap();
        let mut args = map(json!({"note": null, "maybe": null,
                                  "child": {"note": null, "maybe": null, "child": null}}));
        v.drop_absent_nulls(&mut args);
        // Under the root's own `$ref`, optional nulls the schema refuses go;
        // a null the schema accepts stays; `child: null` under `$ref: "#"`
        // is judged against the root (an object), so it goes too.
        assert_eq!(
            Value::Object(args),
            json!({"maybe": null, "child": {"maybe": null}})
        );
        let root = map(json!({"$defs": {"a~b": {"type": "null"}, "c/d": {"type": "string"}}}));
        assert!(accepts_null(&json!({"$ref": "#/$defs/a~0b"}), &root, 0));
        assert!(!accepts_null(&json!({"$ref": "#/$defs/c~1d"}), &root, 0));
        assert!(!accepts_null(
            &json!({"$ref": "#"}),
            &map(json!({"type": "object"})),
            0
        ));
    }

    #[test]
    fn bad_schema_is_refused_at_registration() {
        let err = ArgumentValidator::compile("t", Arc::new(map(json!({"type": "nonsense"}))))
            .err()
            .unwrap();
        assert!(err.to_string().contains("not valid JSON Schema"), "{err}");
        let err = ArgumentValidator::compile(
            "t",
            Arc::new(map(json!({"$ref": "https://example.com/schema.json"}))),
        )
        .err();
        assert!(err.is_some());
    }
}
