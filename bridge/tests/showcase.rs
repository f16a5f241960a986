//! A stack that exercises every parameter rule, every route and the
//! warnings (`tests/data/showcase.json`): its definitions and each
//! projection are pinned by snapshots.

#![allow(clippy::unwrap_used)]

mod common;

use common::materialise;
use common::{check_anthropic_strict, check_mcp_tool, check_openai_strict, check_schema, map};
use objectstack_bridge::materialise::{Materialised, Wiring};
use objectstack_bridge::projection::{anthropic, mcp, openai};
use serde_json::Value;

fn showcase() -> serde_json::Map<String, Value> {
    map(serde_json::from_str(include_str!("data/showcase.json")).unwrap())
}

fn all_wired() -> Materialised<'static> {
    materialise(&showcase(), Some(&Wiring::ALL), &|_| false)
}

#[test]
fn definitions() {
    let m = all_wired();
    for d in m.definitions() {
        check_schema(&Value::Object(d.parameters.clone())).unwrap();
    }
    insta::assert_json_snapshot!("showcase_all_wired", m);
}

#[test]
fn nothing_wired() {
    let stack = showcase();
    let m = materialise(&stack, Some(&Wiring::NONE), &|_| false);
    insta::assert_json_snapshot!("showcase_nothing_wired", m);
}

#[test]
fn projections() {
    let m = all_wired();
    let mcp = mcp::tools(&m.registered);
    for t in &mcp.tools {
        check_mcp_tool(&serde_json::to_value(t).unwrap()).unwrap();
    }
    insta::assert_json_snapshot!("showcase_mcp", mcp);
    let openai = openai::tools(m.definitions());
    for t in &openai.tools {
        check_openai_strict(&Value::Object(t.function.parameters.clone())).unwrap();
    }
    insta::assert_json_snapshot!("showcase_openai", openai);
    let anthropic = anthropic::tools(m.definitions(), anthropic::Options { strict: true });
    for t in &anthropic.tools {
        check_anthropic_strict(&Value::Object(t.input_schema.clone())).unwrap();
    }
    insta::assert_json_snapshot!("showcase_anthropic_strict", anthropic);
}
