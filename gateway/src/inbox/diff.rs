//! What an approver changed: the proposed input against the approved one,
//! argument by argument.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::html::{compact, esc};

/// One argument's fate.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Change<'a> {
    /// The same in both.
    Same(&'a Value),
    /// Given in both, with another value.
    Changed {
        /// As proposed.
        from: &'a Value,
        /// As approved.
        to: &'a Value,
    },
    /// Only in the approved input.
    Added(&'a Value),
    /// Only in the proposed input.
    Removed(&'a Value),
}

/// Every argument of either input: the proposed ones in their order, then
/// the ones the approver added, in theirs. Numbers compare by value
/// (`2` and `2.0` are the same), as the approval hash does not.
pub(crate) fn diff<'a>(
    proposed: &'a Map<String, Value>,
    approved: &'a Map<String, Value>,
) -> Vec<(&'a str, Change<'a>)> {
    let mut out = Vec::new();
    for (key, from) in proposed {
        let change = match approved.get(key) {
            None => Change::Removed(from),
            Some(to) if same(from, to) => Change::Same(from),
            Some(to) => Change::Changed { from, to },
        };
        out.push((key.as_str(), change));
    }
    for (key, to) in approved {
        if !proposed.contains_key(key) {
            out.push((key.as_str(), Change::Added(to)));
        }
    }
    out
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// The diff as an HTML table: argument, proposed, approved.
pub(crate) fn render(changes: &[(&str, Change<'_>)]) -> String {
    let mut out = String::from(
        "<table class=\"diff\"><caption>Proposed and approved arguments</caption>\
         <thead><tr><th scope=\"col\">Argument</th><th scope=\"col\">Proposed</th>\
         <th scope=\"col\">Approved</th></tr></thead><tbody>",
    );
    for (key, change) in changes {
        let (from, to) = match change {
            Change::Same(v) => (
                compact(v),
                "<span class=\"empty\">(unchanged)</span>".to_owned(),
            ),
            Change::Changed { from, to } => (
                format!("<del>{}</del>", compact(from)),
                format!("<ins>{}</ins>", compact(to)),
            ),
            Change::Added(v) => (
                "<span class=\"empty\">(not given)</span>".to_owned(),
                format!("<ins>{}</ins>", compact(v)),
            ),
            Change::Removed(v) => (
                format!("<del>{}</del>", compact(v)),
                "<span class=\"empty\">(removed)</span>".to_owned(),
            ),
        };
        let _ = write!(
            out,
            "<tr><th scope=\"row\" class=\"tool\">{}</th><td>{from}</td><td>{to}</td></tr>",
            esc(key)
        );
    }
    out.push_str("</tbody></table>");
    out
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

    #[test]
    fn each_argument_is_same_changed_added_or_removed() {
        let proposed =
            obj(json!({"recordId": "t1", "note": "old", "days": 2, "tags": [1.0], "drop": true}));
        let approved = obj(
            json!({"recordId": "t1", "note": "new", "days": 2.0, "tags": [1], "extra": {"a": 1}}),
        );
        let d = diff(&proposed, &approved);
        assert_eq!(
            d,
            [
                ("recordId", Change::Same(&json!("t1"))),
                (
                    "note",
                    Change::Changed {
                        from: &json!("old"),
                        to: &json!("new")
                    }
                ),
                ("days", Change::Same(&json!(2))),
                ("tags", Change::Same(&json!([1.0]))),
                ("drop", Change::Removed(&json!(true))),
                ("extra", Change::Added(&json!({"a": 1}))),
            ]
        );
        assert!(
            diff(&proposed, &proposed)
                .iter()
                .all(|(_, c)| matches!(c, Change::Same(_)))
        );
        assert!(diff(&Map::new(), &Map::new()).is_empty());
    }

    #[test]
    fn the_rendered_diff_marks_and_escapes() {
        let proposed = obj(json!({"note": "<old>", "<k>": 1}));
        let approved = obj(json!({"note": "new & better", "<k>": 1}));
        let html = render(&diff(&proposed, &approved));
        assert!(html.contains("<del>&lt;old&gt;</del>"), "{html}");
        assert!(html.contains("<ins>new &amp; better</ins>"), "{html}");
        assert!(
            html.contains("<th scope=\"row\" class=\"tool\">&lt;k&gt;</th>"),
            "{html}"
        );
        assert!(html.contains("(unchanged)"), "{html}");
    }

    #[test]
    fn a_rendered_diff_as_reviewed() {
        let proposed = obj(json!({"recordId": "t1", "amount": 120, "drop": true}));
        let approved = obj(json!({"recordId": "t1", "amount": 80, "notify": true}));
        insta::assert_snapshot!(render(&diff(&proposed, &approved)).replace("<tr>", "\n<tr>"));
    }
}
