//! Helpers for the rules' unit tests.

use serde_json::{Map, Value};

use crate::finding::Finding;
use crate::rule::{Context, Rule};
use crate::stack::Stack;

/// The object of a `json!` literal.
pub(crate) fn doc(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

/// Runs one rule on a document.
pub(crate) fn check_rule(rule: &Rule, root: &Map<String, Value>) -> Vec<Finding> {
    let stack = Stack::new(&[root]);
    let cx = Context::new(&stack);
    let mut hits = Vec::new();
    (rule.check)(&cx, &mut hits);
    hits.into_iter().map(|h| h.finding).collect()
}
