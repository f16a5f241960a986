//! What an owning package adds to its test suite to keep the platform tool
//! registry true (ADR-0109 decision 2).
//!
//! In the package, the `#[test]`s below go in `tests/registry_conformance.rs`
//! and `boot_runtime` is the package's real boot: it registers its tools,
//! materialising `action_<name>` for the stack it serves. Here a fake runtime
//! stands in for it.
//!
//! Run the tests with `cargo test -p objectstack-conformance --example
//! package_tests`; run `cargo run -p objectstack-conformance --example
//! package_tests` to see the report a lagging registry produces.

use objectstack_conformance::{Approval, StackCheck, check};
use serde_json::{Map, Value};

/// A tool as the runtime holds it (a real registry keeps handlers too).
struct Tool {
    name: String,
}

/// The fake runtime: `service-ai`'s static tools (here, exactly the
/// curated group; a real runtime lists what it registers), plus one tool
/// per action of the stack that materialises (without an approval queue,
/// actions that need confirmation are skipped).
fn boot_runtime(stack: &Map<String, Value>) -> Vec<Tool> {
    let statics = objectstack_registry::group("service-ai").map_or(&[][..], |g| g.names);
    let mut tools: Vec<Tool> = statics
        .iter()
        .map(|name| Tool {
            name: (*name).to_owned(),
        })
        .collect();
    let arena = objectstack_spec::json::Arena::new();
    let stack = objectstack_spec::json::Map::from_serde(stack, &arena);
    let objects = objectstack_spec::collection::records_of(stack, "objects", &arena);
    for object in &objects {
        for action in objectstack_spec::collection::records_of(object.fields, "actions", &arena) {
            let runs = objectstack_spec::materialise::materialises(action.fields)
                && objectstack_spec::materialise::needs_confirmation(action.fields).is_none();
            if let (true, Some(name)) = (runs, action.name()) {
                tools.push(Tool {
                    name: objectstack_registry::action_tool_name(name),
                });
            }
        }
    }
    tools
}

/// The stack the package serves in its tests (normally its
/// `dist/objectstack.json`; here the repository's todo example).
fn stack() -> Map<String, Value> {
    let text = include_str!("../../examples/todo-app.json");
    match objectstack_spec::parse::parse_document(text.as_bytes()) {
        Ok(stack) => stack,
        Err(err) => panic!("examples/todo-app.json: {err}"),
    }
}

fn main() {
    let stack = stack();
    let tools = boot_runtime(&stack);
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    let with_stack = Some(StackCheck {
        stack: &stack,
        approval: Approval::NotWired,
    });
    match check("service-ai", &names, with_stack) {
        Ok(report) => println!("{report}"),
        Err(err) => println!("{err}"),
    }

    // The runtime gained a tool the registry does not list yet:
    let mut newer = names.clone();
    newer.push("forecast_revenue");
    match check("service-ai", &newer, with_stack) {
        Ok(report) => println!("{report}"),
        Err(err) => println!("{err}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use objectstack_conformance::assert_conforms;

    // The whole conformance test of a package: these few lines.
    #[test]
    fn registered_tools_match_the_platform_registry() {
        let stack = stack();
        let tools = boot_runtime(&stack);
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_conforms(
            "service-ai",
            &names,
            Some(StackCheck {
                stack: &stack,
                approval: Approval::NotWired,
            }),
        );
    }
}
