//! The committed `registry/platform-tools.json` matches [`render_json`].

use objectstack_registry::render_json;

#[test]
fn platform_tools_json_is_fresh() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/platform-tools.json");
    let committed = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {path}: {e}; run `cargo xtask codegen`"));
    assert!(
        committed == render_json(),
        "stale: run `cargo xtask codegen` (registry/platform-tools.json differs from registry/src/lib.rs)"
    );
}
