//! What a JSON value is, read the same way from either tree: its type
//! name for messages ([`kind`]) and JavaScript truthiness ([`truthy`]).
//!
//! This module depends on nothing else of the crate, so the parser (which
//! names what it found instead of an object) and the tree both use it.

/// What [`kind`] and [`truthy`] read of a value: its JSON type and, for
/// a scalar, its content. Both trees give it ([`JsonValue`]), so each rule
/// is written once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape<'v> {
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A number, as a float.
    Number(f64),
    /// A string.
    String(&'v str),
    /// An array.
    Array,
    /// An object.
    Object,
}

/// A JSON value of either tree: [`crate::json::Value`] or a
/// `serde_json::Value` (for callers that hold one), as [`kind`] and
/// [`truthy`] read it.
pub trait JsonValue {
    /// The value's [`Shape`].
    fn shape(&self) -> Shape<'_>;
}

impl JsonValue for serde_json::Value {
    fn shape(&self) -> Shape<'_> {
        match self {
            serde_json::Value::Null => Shape::Null,
            serde_json::Value::Bool(b) => Shape::Bool(*b),
            // Without arbitrary precision every number has a float value.
            serde_json::Value::Number(n) => Shape::Number(n.as_f64().unwrap_or(0.0)),
            serde_json::Value::String(s) => Shape::String(s),
            serde_json::Value::Array(_) => Shape::Array,
            serde_json::Value::Object(_) => Shape::Object,
        }
    }
}

impl<T: JsonValue + ?Sized> JsonValue for &T {
    fn shape(&self) -> Shape<'_> {
        (**self).shape()
    }
}

/// JavaScript truthiness of an optional value: absent, `null`, `false`,
/// `0`, `NaN` and `""` are false; everything else, `[]` and `{}` included,
/// is true.
///
/// ```
/// use objectstack_spec::json::{Value, truthy};
/// assert!(!truthy(None::<&Value<'_>>));
/// assert!(!truthy(Some(&serde_json::json!(0))));
/// assert!(truthy(Some(&Value::Array(&[]))));
/// ```
pub fn truthy<V: JsonValue + ?Sized>(value: Option<&V>) -> bool {
    match value.map(JsonValue::shape) {
        None | Some(Shape::Null) => false,
        Some(Shape::Bool(b)) => b,
        Some(Shape::Number(n)) => n != 0.0 && !n.is_nan(),
        Some(Shape::String(s)) => !s.is_empty(),
        Some(Shape::Array | Shape::Object) => true,
    }
}

/// The JSON type name of a value of either tree, for messages (`"an
/// array"`, ...).
///
/// ```
/// use objectstack_spec::json::kind;
/// assert_eq!(kind(&serde_json::json!([1])), "an array");
/// assert_eq!(kind(&objectstack_spec::json::Value::Null), "null");
/// ```
pub fn kind<V: JsonValue + ?Sized>(value: &V) -> &'static str {
    match value.shape() {
        Shape::Null => "null",
        Shape::Bool(_) => "a boolean",
        Shape::Number(_) => "a number",
        Shape::String(_) => "a string",
        Shape::Array => "an array",
        Shape::Object => "an object",
    }
}
