//! The "approve with edits" form, generated from the tool's current
//! parameter schema: one field per property, in schema order, of the kind
//! its type calls for, filled with the proposed (or last submitted)
//! values; and the way back from the submitted form to a JSON input.
//!
//! | schema | field | submitted as |
//! | --- | --- | --- |
//! | `string` | text (`date`, `email`, `uri` formats: their input types; multi-line values: a text area) | the text |
//! | `enum` (of scalars) | a select | the chosen value, with its JSON type |
//! | `number`, `integer` | a number input | a number (integers refused a fraction) |
//! | `boolean` | a select of true and false | `true` or `false` |
//! | `array` of an enum | a group of checkboxes | the checked values, in schema order (none checked: not sent) |
//! | `array` of strings, numbers or integers | a text area, one item per line | the items |
//! | anything else (objects, arrays of objects, unions) | a text area of JSON | the parsed JSON |
//!
//! An optional field left empty is not sent (a select's "not given"); a
//! required one left empty is not sent either, so the schema check says
//! that it is required. The server checks everything again against the
//! schema ([`objectstack_bridge::runtime::ToolRegistry::approve_with_edits`]);
//! the browser's own checks (`required`, number inputs) are only a help.

use std::fmt::Write as _;

use serde_json::{Map, Number, Value};

use super::html::{esc, esc_value, hidden_characters};

/// What a parameter is edited with.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    /// Free text; `input` is the HTML input type (`text`, `date`, `email`,
    /// `url`).
    Text {
        /// The input type.
        input: &'static str,
    },
    /// One of a list of scalar values.
    Choice(Vec<Value>),
    /// A number.
    Number,
    /// A whole number.
    Integer,
    /// True or false.
    Boolean,
    /// Several of a list of scalar values.
    Choices(Vec<Value>),
    /// A list of scalars, one per line.
    Lines(Scalar),
    /// Any JSON.
    Json,
}

/// The item type of a [`Kind::Lines`] list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scalar {
    /// Strings.
    Text,
    /// Numbers.
    Number,
    /// Whole numbers.
    Integer,
}

/// One parameter of the form.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Field {
    /// The property name (the argument's key).
    pub(crate) name: String,
    /// What the person sees: the schema's `title`, else the name.
    pub(crate) label: String,
    /// The schema's `description`.
    pub(crate) description: Option<String>,
    /// How it is edited.
    pub(crate) kind: Kind,
    /// Whether the schema requires it.
    pub(crate) required: bool,
}

/// The fields of an object schema (`properties`, `required`), in the
/// schema's order.
pub(crate) fn fields(schema: &Map<String, Value>) -> Vec<Field> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, property)| {
            let property = property.as_object();
            let text = |key: &str| {
                property
                    .and_then(|p| p.get(key))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            };
            let (label, description) = match (text("title"), text("description")) {
                (Some(title), description) => (title, description),
                (None, Some(description)) => split_description(&description)
                    .map_or((name.clone(), Some(description.clone())), |(l, h)| {
                        (l.to_owned(), h.map(str::to_owned))
                    }),
                (None, None) => (name.clone(), None),
            };
            Field {
                name: name.clone(),
                label,
                description,
                kind: property.map_or(Kind::Json, kind),
                required: required.contains(&name.as_str()),
            }
        })
        .collect()
}

/// The bridge writes a parameter's description as its label, or as
/// "Label — help text": the label and the help, when the description reads
/// as one (it has the separator, or is a short phrase, not a sentence).
fn split_description(description: &str) -> Option<(&str, Option<&str>)> {
    const SEPARATOR: &str = " \u{2014} ";
    if let Some((label, help)) = description.split_once(SEPARATOR) {
        return Some((label, Some(help)));
    }
    let phrase = description.chars().count() <= 60
        && !description.trim_end().ends_with(['.', '!', '?', ':']);
    phrase.then_some((description, None))
}

/// The single non-null type a schema names (`"string"`, or
/// `["string", "null"]`); `None` for none or several.
fn single_type(schema: &Map<String, Value>) -> Option<&str> {
    match schema.get("type")? {
        Value::String(t) => Some(t),
        Value::Array(types) => {
            let mut named = types
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null");
            let first = named.next()?;
            named.next().is_none().then_some(first)
        }
        _ => None,
    }
}

/// The enum of a schema when every member is a scalar (null aside).
fn scalar_enum(schema: &Map<String, Value>) -> Option<Vec<Value>> {
    let members = schema.get("enum")?.as_array()?;
    let members: Vec<Value> = members.iter().filter(|v| !v.is_null()).cloned().collect();
    (!members.is_empty()
        && members
            .iter()
            .all(|v| v.is_string() || v.is_number() || v.is_boolean()))
    .then_some(members)
}

fn kind(schema: &Map<String, Value>) -> Kind {
    if let Some(members) = scalar_enum(schema) {
        return Kind::Choice(members);
    }
    match single_type(schema) {
        Some("string") => Kind::Text {
            input: match schema.get("format").and_then(Value::as_str) {
                Some("date") => "date",
                Some("email") => "email",
                Some("uri" | "url") => "url",
                _ => "text",
            },
        },
        Some("number") => Kind::Number,
        Some("integer") => Kind::Integer,
        Some("boolean") => Kind::Boolean,
        Some("array") => {
            let items = schema.get("items").and_then(Value::as_object);
            match items {
                Some(items) => match (scalar_enum(items), single_type(items)) {
                    (Some(members), _) => Kind::Choices(members),
                    (None, Some("string")) => Kind::Lines(Scalar::Text),
                    (None, Some("number")) => Kind::Lines(Scalar::Number),
                    (None, Some("integer")) => Kind::Lines(Scalar::Integer),
                    _ => Kind::Json,
                },
                None => Kind::Json,
            }
        }
        _ => Kind::Json,
    }
}

/// The form's HTML name of a field's control.
fn control(name: &str) -> String {
    format!("f.{name}")
}

/// A stable, HTML-safe id for a field's control.
fn id_of(name: &str) -> String {
    let mut id = String::from("f-");
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() {
            id.push(char::from(b));
        } else {
            let _ = write!(id, "_{b:02x}");
        }
    }
    id
}

/// A scalar as the text a control shows and submits.
fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The text a free-text control (text, number, lines, JSON) is filled
/// with for `value`; `None` for the other kinds, whose controls submit
/// JSON tokens.
fn control_text(kind: &Kind, value: &Value) -> Option<String> {
    match kind {
        Kind::Text { .. } | Kind::Number | Kind::Integer => Some(scalar_text(value)),
        Kind::Lines(_) => value
            .as_array()
            .map(|items| items.iter().map(scalar_text).collect::<Vec<_>>().join("\n")),
        Kind::Json => serde_json::to_string_pretty(value).ok(),
        Kind::Choice(_) | Kind::Boolean | Kind::Choices(_) => None,
    }
}

/// `text` as a browser submits it: line breaks as one `\n` whatever they
/// were (the HTML parser and form encoding rewrite them), NUL as U+FFFD.
fn as_submitted(text: &str) -> String {
    text.replace("\r\n", "\n")
        .replace(['\r'], "\n")
        .replace('\0', "\u{fffd}")
}

/// The warning beside a control whose value holds characters the page
/// shows escaped: the control itself shows them as they are.
const HIDDEN_WARNING: &str = "<span class=\"hint error\">This value holds invisible or \
direction-changing characters, shown escaped under the arguments above; they are kept exactly \
unless you change this field.</span>";

/// The controls of `fields`, filled from `values` (what was proposed, or
/// what the person submitted: `Err` text is shown as typed). `errors`
/// are shown beside their field.
pub(crate) fn render(
    fields: &[Field],
    values: &Map<String, Value>,
    typed: &[(String, String)],
    errors: &[(String, String)],
) -> String {
    let mut out = String::new();
    for field in fields {
        let id = id_of(&field.name);
        let name = esc(&control(&field.name));
        let typed_value: Option<&str> = typed
            .iter()
            .find(|(k, _)| *k == control(&field.name))
            .map(|(_, v)| v.as_str());
        let current = values.get(&field.name);
        let hint_id = format!("{id}-hint");
        let error: Vec<&str> = errors
            .iter()
            .filter(|(k, _)| *k == field.name)
            .map(|(_, m)| m.as_str())
            .collect();
        let error_id = format!("{id}-error");
        let mut described = Vec::new();
        if field.description.is_some() {
            described.push(hint_id.clone());
        }
        if !error.is_empty() {
            described.push(error_id.clone());
        }
        let aria = if described.is_empty() {
            String::new()
        } else {
            format!(" aria-describedby=\"{}\"", described.join(" "))
        };
        let invalid = if error.is_empty() {
            ""
        } else {
            " aria-invalid=\"true\""
        };
        let required = if field.required {
            " required aria-required=\"true\""
        } else {
            ""
        };
        let star = if field.required {
            " <span class=\"req\">(required)</span>"
        } else {
            ""
        };
        let _ = write!(out, "<div class=\"field\">");
        let hint = field
            .description
            .as_deref()
            .map(|d| format!("<span class=\"hint\" id=\"{hint_id}\">{}</span>", esc(d)))
            .unwrap_or_default();
        let errors_html = if error.is_empty() {
            String::new()
        } else {
            format!(
                "<span class=\"hint error\" id=\"{error_id}\" role=\"alert\">{}</span>",
                esc(&error.join("; "))
            )
        };
        // The argument's own name beside a title that differs from it.
        let name_shown = if field.label == field.name {
            String::new()
        } else {
            format!(" <span class=\"tool\">{}</span>", esc(&field.name))
        };
        let label = format!(
            "<label for=\"{id}\">{}{star}{name_shown}</label>{hint}",
            esc(&field.label)
        );
        match &field.kind {
            Kind::Text { input } => {
                let text = typed_value
                    .map(str::to_owned)
                    .or_else(|| current.map(scalar_text))
                    .unwrap_or_default();
                out.push_str(&label);
                if hidden_characters(&text) {
                    out.push_str(HIDDEN_WARNING);
                }
                if text.contains(['\n', '\r']) {
                    let _ = write!(
                        out,
                        "<textarea id=\"{id}\" name=\"{name}\"{required}{aria}{invalid}>{}</textarea>",
                        esc_value(&text)
                    );
                } else {
                    let _ = write!(
                        out,
                        "<input type=\"{input}\" id=\"{id}\" name=\"{name}\" value=\"{}\"{required}{aria}{invalid}>",
                        esc_value(&text)
                    );
                }
            }
            Kind::Number | Kind::Integer => {
                let text = typed_value
                    .map(str::to_owned)
                    .or_else(|| current.map(scalar_text))
                    .unwrap_or_default();
                let step = if field.kind == Kind::Integer {
                    "1"
                } else {
                    "any"
                };
                out.push_str(&label);
                let _ = write!(
                    out,
                    "<input type=\"number\" step=\"{step}\" id=\"{id}\" name=\"{name}\" value=\"{}\"{required}{aria}{invalid}>",
                    esc_value(&text)
                );
            }
            Kind::Boolean | Kind::Choice(_) => {
                let options: Vec<Value> = match &field.kind {
                    Kind::Choice(members) => members.clone(),
                    _ => vec![Value::Bool(true), Value::Bool(false)],
                };
                let selected: Option<String> = typed_value
                    .map(str::to_owned)
                    .or_else(|| current.map(Value::to_string));
                out.push_str(&label);
                let _ = write!(
                    out,
                    "<select id=\"{id}\" name=\"{name}\"{required}{aria}{invalid}>"
                );
                let none_selected = selected.as_deref().is_none_or(str::is_empty);
                if !field.required || none_selected {
                    let _ = write!(
                        out,
                        "<option value=\"\"{}>{}</option>",
                        if none_selected { " selected" } else { "" },
                        if field.required {
                            "(choose one)"
                        } else {
                            "(not given)"
                        }
                    );
                }
                for option in options {
                    let value = option.to_string();
                    let is = selected.as_deref() == Some(value.as_str());
                    let _ = write!(
                        out,
                        "<option value=\"{}\"{}>{}</option>",
                        esc(&value),
                        if is { " selected" } else { "" },
                        esc(&scalar_text(&option))
                    );
                }
                out.push_str("</select>");
            }
            Kind::Choices(members) => {
                let chosen: Vec<String> = if typed.is_empty() {
                    current
                        .and_then(Value::as_array)
                        .map(|items| items.iter().map(Value::to_string).collect())
                        .unwrap_or_default()
                } else {
                    typed
                        .iter()
                        .filter(|(k, _)| *k == control(&field.name))
                        .map(|(_, v)| v.clone())
                        .collect()
                };
                let _ = write!(
                    out,
                    "<fieldset id=\"{id}\"{aria}><legend>{}{star}{name_shown}</legend>{hint}",
                    esc(&field.label)
                );
                for (i, option) in members.iter().enumerate() {
                    let value = option.to_string();
                    let checked = if chosen.contains(&value) {
                        " checked"
                    } else {
                        ""
                    };
                    let _ = write!(
                        out,
                        "<label class=\"check\"><input type=\"checkbox\" id=\"{id}-{i}\" name=\"{name}\" value=\"{}\"{checked}> {}</label>",
                        esc(&value),
                        esc(&scalar_text(option))
                    );
                }
                out.push_str("</fieldset>");
            }
            Kind::Lines(_) => {
                let text = typed_value.map(str::to_owned).unwrap_or_else(|| {
                    current
                        .and_then(Value::as_array)
                        .map(|items| items.iter().map(scalar_text).collect::<Vec<_>>().join("\n"))
                        .unwrap_or_default()
                });
                out.push_str(&label);
                if hidden_characters(&text) {
                    out.push_str(HIDDEN_WARNING);
                }
                let _ = write!(
                    out,
                    "<span class=\"hint\">One item per line.</span><textarea id=\"{id}\" name=\"{name}\"{required}{aria}{invalid}>{}</textarea>",
                    esc_value(&text)
                );
            }
            Kind::Json => {
                let text = typed_value.map(str::to_owned).unwrap_or_else(|| {
                    current
                        .map(|v| serde_json::to_string_pretty(v).unwrap_or_default())
                        .unwrap_or_default()
                });
                out.push_str(&label);
                if hidden_characters(&text) {
                    out.push_str(HIDDEN_WARNING);
                }
                let _ = write!(
                    out,
                    "<span class=\"hint\">JSON.</span><textarea id=\"{id}\" name=\"{name}\" spellcheck=\"false\"{required}{aria}{invalid}>{}</textarea>",
                    esc_value(&text)
                );
            }
        }
        out.push_str(&errors_html);
        out.push_str("</div>\n");
    }
    out
}

/// The input a submitted form stands for, or each field's problem
/// (`(field, message)`). Only the schema's fields are read; other form
/// entries (the CSRF token, the hash) are ignored. A free-text field
/// submitted as it was filled from `proposed` keeps the proposed value
/// exactly (a browser rewrites line breaks, and its text cannot say
/// `1.0` from `1`), so only what a person changed changes.
pub(crate) fn parse(
    fields: &[Field],
    form: &[(String, String)],
    proposed: &Map<String, Value>,
) -> Result<Map<String, Value>, Vec<(String, String)>> {
    let mut input = Map::new();
    let mut problems = Vec::new();
    for field in fields {
        let key = control(&field.name);
        let mut given = form.iter().filter(|(k, _)| *k == key).map(|(_, v)| v);
        let first = given.next().map(String::as_str);
        let parsed: Result<Option<Value>, String> = match &field.kind {
            Kind::Choices(members) => {
                let mut chosen = Vec::new();
                let mut bad = None;
                for text in first.into_iter().chain(given.map(String::as_str)) {
                    match serde_json::from_str::<Value>(text) {
                        Ok(v) if members.contains(&v) => chosen.push(v),
                        _ => bad = Some(text.to_owned()),
                    }
                }
                match bad {
                    Some(text) => Err(format!("`{text}` is not one of the choices")),
                    // Nothing checked is "not given" (a form cannot tell
                    // it from an empty list).
                    None if chosen.is_empty() => Ok(None),
                    None => {
                        // In the schema's order, each once.
                        let ordered: Vec<Value> = members
                            .iter()
                            .filter(|m| chosen.contains(m))
                            .cloned()
                            .collect();
                        Ok(Some(Value::Array(ordered)))
                    }
                }
            }
            _ => {
                let untouched = proposed.get(&field.name).filter(|value| {
                    first.is_some_and(|text| {
                        control_text(&field.kind, value)
                            .is_some_and(|shown| as_submitted(&shown) == as_submitted(text))
                    })
                });
                match (untouched, first) {
                    (Some(value), _) => Ok(Some(value.clone())),
                    (None, None) => Ok(None),
                    (None, Some(text)) if text.trim().is_empty() => Ok(None),
                    (None, Some(text)) => parse_one(&field.kind, text).map(Some),
                }
            }
        };
        match parsed {
            Ok(Some(value)) => {
                input.insert(field.name.clone(), value);
            }
            Ok(None) => {}
            Err(message) => problems.push((field.name.clone(), message)),
        }
    }
    if problems.is_empty() {
        Ok(input)
    } else {
        Err(problems)
    }
}

fn parse_one(kind: &Kind, text: &str) -> Result<Value, String> {
    match kind {
        Kind::Text { .. } => Ok(Value::String(text.to_owned())),
        Kind::Number => number(text.trim(), false),
        Kind::Integer => number(text.trim(), true),
        Kind::Boolean => match text.trim() {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            other => Err(format!("`{other}` is neither true nor false")),
        },
        Kind::Choice(members) => match serde_json::from_str::<Value>(text) {
            Ok(v) if members.contains(&v) => Ok(v),
            _ => Err(format!("`{text}` is not one of the choices")),
        },
        Kind::Lines(scalar) => text
            .lines()
            .map(|line| line.trim_end_matches('\r'))
            .filter(|line| !line.trim().is_empty())
            .enumerate()
            .map(|(i, line)| {
                match scalar {
                    Scalar::Text => Ok(Value::String(line.to_owned())),
                    Scalar::Number => number(line.trim(), false),
                    Scalar::Integer => number(line.trim(), true),
                }
                .map_err(|e| format!("line {}: {e}", i + 1))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        Kind::Choices(_) | Kind::Json => {
            serde_json::from_str::<Value>(text).map_err(|e| format!("not valid JSON ({e})"))
        }
    }
}

/// A number from its text: an integer when it is written as one, else a
/// float; `whole` refuses a fraction.
fn number(text: &str, whole: bool) -> Result<Value, String> {
    if let Ok(i) = text.parse::<i64>() {
        return Ok(Value::from(i));
    }
    match text.parse::<f64>() {
        Ok(f) if f.is_finite() => {
            if whole {
                if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 {
                    // In range and integral, so the cast is exact.
                    return Ok(Value::from(f as i64));
                }
                return Err(format!("`{text}` is not a whole number"));
            }
            Number::from_f64(f)
                .map(Value::Number)
                .ok_or_else(|| format!("`{text}` is not a number"))
        }
        _ => Err(format!("`{text}` is not a number")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    /// Every parameter type the bridge projects, and some it may.
    fn schema() -> Map<String, Value> {
        obj(json!({
            "type": "object",
            "properties": {
                "recordId": {"type": "string", "description": "The record's id."},
                "reason": {"type": "string", "title": "Reason"},
                "due": {"type": "string", "format": "date"},
                "contact": {"type": ["string", "null"], "format": "email"},
                "priority": {"type": "string", "enum": ["low", "high"]},
                "level": {"enum": [1, 2, 3]},
                "amount": {"type": "number"},
                "count": {"type": "integer"},
                "notify": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "scores": {"type": "array", "items": {"type": "integer"}},
                "channels": {"type": "array", "items": {"type": "string", "enum": ["email", "sms", "push"]}},
                "address": {"type": "object", "properties": {"city": {"type": "string"}}},
                "lines": {"type": "array", "items": {"type": "object"}},
                "anything": {}
            },
            "required": ["recordId", "priority", "notify"],
            "additionalProperties": false
        }))
    }

    #[test]
    fn every_parameter_type_gets_its_control() {
        let fields = fields(&schema());
        let kinds: Vec<(&str, &Kind, bool)> = fields
            .iter()
            .map(|f| (f.name.as_str(), &f.kind, f.required))
            .collect();
        assert_eq!(
            kinds,
            [
                ("recordId", &Kind::Text { input: "text" }, true),
                ("reason", &Kind::Text { input: "text" }, false),
                ("due", &Kind::Text { input: "date" }, false),
                ("contact", &Kind::Text { input: "email" }, false),
                (
                    "priority",
                    &Kind::Choice(vec![json!("low"), json!("high")]),
                    true
                ),
                (
                    "level",
                    &Kind::Choice(vec![json!(1), json!(2), json!(3)]),
                    false
                ),
                ("amount", &Kind::Number, false),
                ("count", &Kind::Integer, false),
                ("notify", &Kind::Boolean, true),
                ("tags", &Kind::Lines(Scalar::Text), false),
                ("scores", &Kind::Lines(Scalar::Integer), false),
                (
                    "channels",
                    &Kind::Choices(vec![json!("email"), json!("sms"), json!("push")]),
                    false
                ),
                ("address", &Kind::Json, false),
                ("lines", &Kind::Json, false),
                ("anything", &Kind::Json, false),
            ]
        );
        assert_eq!(fields.get(1).map(|f| f.label.as_str()), Some("Reason"));
        assert_eq!(
            fields.first().and_then(|f| f.description.as_deref()),
            Some("The record's id.")
        );
        assert!(super::fields(&obj(json!({"type": "object"}))).is_empty());
    }

    #[test]
    fn labels_come_from_the_title_or_the_bridge_description() {
        let fields = fields(&obj(json!({"properties": {
            "a": {"type": "string", "title": "Title", "description": "Help."},
            "b": {"type": "string", "description": "Status \u{2014} Where the task stands"},
            "c": {"type": "string", "description": "Amount"},
            "d": {"type": "string", "description": "The record id to act on."}
        }})));
        let got: Vec<(&str, Option<&str>)> = fields
            .iter()
            .map(|f| (f.label.as_str(), f.description.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("Title", Some("Help.")),
                ("Status", Some("Where the task stands")),
                ("Amount", None),
                ("d", Some("The record id to act on.")),
            ]
        );
    }

    fn form(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn a_submitted_form_becomes_typed_json() {
        let fields = fields(&schema());
        let input = parse(
            &fields,
            &form(&[
                ("csrf", "ignored"),
                ("f.recordId", "t1"),
                ("f.reason", "  spaced  "),
                ("f.due", ""),
                ("f.priority", "\"high\""),
                ("f.level", "2"),
                ("f.amount", "2.5"),
                ("f.count", "7"),
                ("f.notify", "false"),
                ("f.tags", "a\r\n\r\nb c\n"),
                ("f.scores", "1\n2"),
                ("f.channels", "\"push\""),
                ("f.channels", "\"email\""),
                ("f.address", "{\"city\": \"Oslo\"}"),
                ("f.lines", "[]"),
                ("f.anything", "null"),
            ]),
            &Map::new(),
        )
        .unwrap();
        assert_eq!(
            Value::Object(input),
            json!({
                "recordId": "t1", "reason": "  spaced  ", "priority": "high", "level": 2,
                "amount": 2.5, "count": 7, "notify": false, "tags": ["a", "b c"],
                "scores": [1, 2], "channels": ["email", "push"], "address": {"city": "Oslo"},
                "lines": [], "anything": null
            })
        );
    }

    #[test]
    fn empty_fields_are_not_sent_and_bad_ones_are_named() {
        let fields = fields(&schema());
        // Nothing filled: nothing sent (the schema check then names the
        // required ones), no checkbox checked included.
        let input = parse(
            &fields,
            &form(&[("f.recordId", " "), ("f.priority", "")]),
            &Map::new(),
        )
        .unwrap();
        assert_eq!(Value::Object(input), json!({}));
        let problems = parse(
            &fields,
            &form(&[
                ("f.priority", "\"urgent\""),
                ("f.amount", "lots"),
                ("f.count", "1.5"),
                ("f.notify", "yes"),
                ("f.scores", "1\nx"),
                ("f.channels", "\"fax\""),
                ("f.address", "{city: Oslo}"),
            ]),
            &Map::new(),
        )
        .unwrap_err();
        let named: Vec<(&str, &str)> = problems
            .iter()
            .map(|(f, m)| (f.as_str(), m.as_str()))
            .collect();
        assert_eq!(named.len(), 7, "{named:?}");
        assert!(named.contains(&("priority", "`\"urgent\"` is not one of the choices")));
        assert!(named.contains(&("amount", "`lots` is not a number")));
        assert!(named.contains(&("count", "`1.5` is not a whole number")));
        assert!(named.contains(&("notify", "`yes` is neither true nor false")));
        assert!(named.contains(&("scores", "line 2: `x` is not a number")));
        assert!(named.contains(&("channels", "`\"fax\"` is not one of the choices")));
        assert!(
            named
                .iter()
                .any(|(f, m)| *f == "address" && m.starts_with("not valid JSON"))
        );
    }

    #[test]
    fn the_rendered_form_round_trips_the_proposed_input() {
        // What the form shows for a proposal submits back as the same input.
        let fields = fields(&schema());
        let proposed = obj(json!({
            "recordId": "t1", "reason": "two\nlines", "priority": "low", "level": 3,
            "amount": 0.25, "count": 2, "notify": true, "tags": ["x", "y"], "scores": [4],
            "channels": ["sms"], "address": {"city": "Oslo"}
        }));
        let html = render(&fields, &proposed, &[], &[]);
        let submitted = controls_of(&html);
        let back = parse(&fields, &submitted, &Map::new()).unwrap();
        assert_eq!(back, proposed, "{html}");
        assert_eq!(parse(&fields, &submitted, &proposed).unwrap(), proposed);
    }

    #[test]
    fn an_untouched_field_keeps_the_proposed_value_exactly() {
        // Text a browser cannot send back as it was: a joiner and a
        // direction mark (shown as they are in the control, escaped on the
        // page), a carriage return, a float written `1.0`.
        let fields = fields(&schema());
        let proposed = obj(json!({
            "recordId": "t1", "reason": "Sch\u{f6}n\u{200d}text \u{202e}01 \r\nline",
            "amount": 1.0, "tags": ["\u{1f468}\u{200d}\u{1f469}", "b"]
        }));
        let html = render(&fields, &proposed, &[], &[]);
        assert!(
            html.contains("\u{200d}") && html.contains("\u{202e}"),
            "{html}"
        );
        assert!(html.contains("invisible or direction-changing"), "{html}");
        // As a browser submits it: every line break as CRLF.
        let submitted: Vec<(String, String)> = controls_of(&html)
            .into_iter()
            .map(|(k, v)| (k, v.replace("\r\n", "\n").replace('\n', "\r\n")))
            .collect();
        assert_eq!(parse(&fields, &submitted, &proposed).unwrap(), proposed);
        // A changed field changes; the others stay exactly as proposed.
        let edited: Vec<(String, String)> = submitted
            .into_iter()
            .map(|(k, v)| {
                if k == "f.amount" {
                    (k, "2".to_owned())
                } else {
                    (k, v)
                }
            })
            .collect();
        let back = parse(&fields, &edited, &proposed).unwrap();
        assert_eq!(back.get("amount"), Some(&json!(2)));
        assert_eq!(back.get("reason"), proposed.get("reason"));
        assert_eq!(back.get("tags"), proposed.get("tags"));
    }

    #[test]
    fn hostile_names_and_values_are_escaped_and_labels_are_tied_to_controls() {
        let schema = obj(json!({
            "properties": {
                "<b>x</b>\"": {"type": "string", "description": "<img src=x onerror=alert(1)>"},
                "kind": {"enum": ["</option><script>"]}
            },
            "required": ["kind"]
        }));
        let fields = fields(&schema);
        let html = render(
            &fields,
            &obj(json!({"<b>x</b>\"": "\"><script>alert(1)</script>"})),
            &[],
            &[("kind".to_owned(), "<bad>".to_owned())],
        );
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(!html.contains("<b>"), "{html}");
        assert!(html.contains("&lt;/option&gt;&lt;script&gt;"), "{html}");
        // Every control has a label pointing at it, and errors are announced.
        assert!(
            html.contains("<label for=\"f-_3cb_3ex_3c_2fb_3e_22\">"),
            "{html}"
        );
        assert!(html.contains("id=\"f-_3cb_3ex_3c_2fb_3e_22\""), "{html}");
        assert!(html.contains("aria-invalid=\"true\""), "{html}");
        assert!(html.contains("role=\"alert\">&lt;bad&gt;</span>"), "{html}");
        assert!(html.contains("(required)"), "{html}");
    }

    #[test]
    fn the_form_of_every_parameter_type_renders_as_reviewed() {
        let fields = fields(&schema());
        let proposed = obj(json!({
            "recordId": "t1", "reason": "late", "priority": "high", "notify": false,
            "tags": ["a", "b"], "channels": ["sms"], "address": {"city": "Oslo"}
        }));
        let html = render(&fields, &proposed, &[], &[]).replace("</div>", "</div>\n");
        insta::assert_snapshot!(html);
    }

    /// The name/value pairs a browser would submit for `html` unchanged: a
    /// small reader for the controls this module writes.
    fn controls_of(html: &str) -> Vec<(String, String)> {
        fn unesc(s: &str) -> String {
            s.replace("&quot;", "\"")
                .replace("&#39;", "'")
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&amp;", "&")
        }
        fn attr(tag: &str, name: &str) -> Option<String> {
            let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
            let end = tag.get(start..)?.find('"')? + start;
            tag.get(start..end).map(unesc)
        }
        let mut out = Vec::new();
        let mut rest = html;
        while let Some(i) = rest.find('<') {
            rest = rest.get(i..).unwrap_or("");
            let end = rest.find('>').unwrap_or(rest.len());
            let tag = rest.get(..end).unwrap_or("");
            if tag.starts_with("<input") {
                let name = attr(tag, "name").unwrap_or_default();
                let value = attr(tag, "value").unwrap_or_default();
                let checkbox = tag.contains("type=\"checkbox\"");
                if !checkbox || tag.contains(" checked") {
                    out.push((name, value));
                }
            } else if tag.starts_with("<textarea") {
                let name = attr(tag, "name").unwrap_or_default();
                let body = rest.get(end + 1..).unwrap_or("");
                let close = body.find("</textarea>").unwrap_or(0);
                out.push((name, unesc(body.get(..close).unwrap_or(""))));
            } else if tag.starts_with("<select") {
                let name = attr(tag, "name").unwrap_or_default();
                let body = rest.get(end + 1..).unwrap_or("");
                let close = body.find("</select>").unwrap_or(0);
                let options = body.get(..close).unwrap_or("");
                let chosen = options
                    .split("<option")
                    .find(|o| o.contains(" selected"))
                    .and_then(|o| attr(o, "value"))
                    .unwrap_or_default();
                out.push((name, chosen));
            }
            rest = rest.get(1..).unwrap_or("");
        }
        out
    }
}
