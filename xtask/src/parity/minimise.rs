//! Shrinks a JSON value while a predicate keeps holding: greedily removes
//! object keys and array entries, shallowest first, until no single removal
//! keeps the failure.

use serde_json::Value;

/// One step into a JSON value.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
}

/// At most this many predicate calls per minimisation.
const BUDGET: usize = 4000;

/// The smallest value reachable from `value` by removing keys and entries
/// for which `still_fails` holds (`value` itself when nothing can go).
pub(crate) fn minimise(value: &Value, still_fails: &mut dyn FnMut(&Value) -> bool) -> Value {
    let mut current = value.clone();
    let mut budget = BUDGET;
    'outer: loop {
        for path in child_paths(&current) {
            if budget == 0 {
                break 'outer;
            }
            let Some(candidate) = without(&current, &path) else {
                continue;
            };
            budget -= 1;
            if still_fails(&candidate) {
                current = candidate;
                continue 'outer;
            }
        }
        break;
    }
    current
}

/// Every removable position, shallowest first (breadth-first), so large
/// subtrees go before their contents are tried one by one.
fn child_paths(value: &Value) -> Vec<Vec<Step>> {
    let mut out = Vec::new();
    let mut queue: std::collections::VecDeque<(Vec<Step>, &Value)> =
        std::collections::VecDeque::from([(Vec::new(), value)]);
    while let Some((path, v)) = queue.pop_front() {
        match v {
            Value::Object(map) => {
                for (k, child) in map {
                    let mut p = path.clone();
                    p.push(Step::Key(k.clone()));
                    out.push(p.clone());
                    queue.push_back((p, child));
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    let mut p = path.clone();
                    p.push(Step::Index(i));
                    out.push(p.clone());
                    queue.push_back((p, child));
                }
            }
            _ => {}
        }
    }
    out
}

/// `value` with the entry at `path` removed (`None` if there is none).
fn without(value: &Value, path: &[Step]) -> Option<Value> {
    let (last, parents) = path.split_last()?;
    let mut copy = value.clone();
    let mut node = &mut copy;
    for step in parents {
        node = match step {
            Step::Key(k) => node.as_object_mut()?.get_mut(k)?,
            Step::Index(i) => node.as_array_mut()?.get_mut(*i)?,
        };
    }
    match last {
        Step::Key(k) => {
            node.as_object_mut()?.shift_remove(k)?;
        }
        Step::Index(i) => {
            let items = node.as_array_mut()?;
            if *i >= items.len() {
                return None;
            }
            items.remove(*i);
        }
    }
    Some(copy)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn mentions(v: &Value, needle: &str) -> bool {
        match v {
            Value::String(s) => s == needle,
            Value::Array(a) => a.iter().any(|x| mentions(x, needle)),
            Value::Object(m) => m.values().any(|x| mentions(x, needle)),
            _ => false,
        }
    }

    #[test]
    fn keeps_only_what_the_failure_needs() {
        let big = json!({
            "objects": [{"name": "o", "actions": [{"name": "a"}, {"name": "b"}]}],
            "tools": [{"name": "t"}],
            "skills": [{"name": "s", "tools": ["x", "needle", "y"]}],
        });
        let mut calls = 0;
        let small = minimise(&big, &mut |v| {
            calls += 1;
            mentions(v, "needle") && mentions(v, "a")
        });
        assert_eq!(
            small,
            json!({"objects": [{"actions": [{"name": "a"}]}], "skills": [{"tools": ["needle"]}]})
        );
        assert!(calls < 100, "{calls}");
    }

    #[test]
    fn a_value_that_must_stay_is_returned_whole() {
        let v = json!({"a": [1, 2]});
        assert_eq!(minimise(&v, &mut |c| c == &json!({"a": [1, 2]})), v);
    }

    #[test]
    fn removal_paths() {
        let v = json!({"a": [1, {"b": 2}]});
        assert_eq!(
            without(&v, &[Step::Key("a".into()), Step::Index(0)]),
            Some(json!({"a": [{"b": 2}]}))
        );
        assert_eq!(
            without(
                &v,
                &[Step::Key("a".into()), Step::Index(1), Step::Key("b".into())]
            ),
            Some(json!({"a": [1, {}]}))
        );
        assert_eq!(without(&v, &[Step::Key("zz".into())]), None);
        assert_eq!(without(&v, &[]), None);
    }
}
