//! Helpers for the rules' unit tests.

use objectstack_spec::json::{Arena, Map};

use crate::finding::Finding;
use crate::rule::{Context, Rule};
use crate::stack::Stack;

/// The object of a `json!` literal, as a document (leaked: tests only).
pub(crate) fn doc(v: serde_json::Value) -> &'static Map<'static> {
    let arena: &'static Arena = Box::leak(Box::default());
    let v: &'static serde_json::Value = Box::leak(Box::new(v));
    match v {
        serde_json::Value::Object(m) => Map::from_serde(m, arena),
        other => panic!("not an object: {other}"),
    }
}

/// Runs one rule on a document.
pub(crate) fn check_rule(rule: &Rule, root: &Map<'_>) -> Vec<Finding> {
    let arena = Arena::new();
    let stack = Stack::new(&[root], &arena);
    let cx = Context::new(&stack);
    let mut hits = Vec::new();
    (rule.check)(&cx, &mut hits);
    let universe = cx.into_universe();
    for hit in &mut hits {
        hit.suggest(&universe);
    }
    drop(universe);
    let (mut sites, mut findings) = (Vec::new(), Vec::new());
    for hit in hits {
        hit.finish_into(&mut sites, &mut findings);
    }
    assert_eq!(sites.len(), findings.len(), "a site for each finding");
    findings
}
