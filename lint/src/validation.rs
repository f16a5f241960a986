//! The `spec` validation diagnostics, reported as findings under their own
//! ids so one `lint` run tells an author everything.

use serde_json::{Map, Value};

use crate::rule::Hit;

/// Validation findings for one source document.
pub(crate) fn hits(_source: usize, _root: &Map<String, Value>) -> Vec<Hit> {
    Vec::new()
}

/// Ids of the validation diagnostics.
pub(crate) fn ids() -> Vec<&'static str> {
    Vec::new()
}

/// A one-line summary and documentation of a validation id.
pub(crate) fn describe(id: &str) -> (String, String) {
    let summary = format!("`spec` validation: {id}");
    let doc = format!(
        "{summary}\n\nReported by the metadata schema validation (`objectstack-ai validate`); \
         the message says what is wrong and the hint how to fix it."
    );
    (summary, doc)
}
