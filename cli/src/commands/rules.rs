//! `objectstack-ai rules`: the lint rules and the `spec` validation ids,
//! one per line.

use crate::EXIT_OK;

/// Arguments of `objectstack-ai rules`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs the command; returns the exit code.
pub(crate) fn run(_args: Args) -> anyhow::Result<u8> {
    crate::out::stdout(&render())?;
    Ok(EXIT_OK)
}

/// `id  severity  summary` for every id, aligned, lint rules first.
fn render() -> String {
    let ids = objectstack_lint::rule_ids();
    let width = ids.iter().map(|id| id.len()).max().unwrap_or(0);
    let lint_rules = objectstack_lint::rules::RULES.len();
    let mut out = String::from("Reference-integrity rules:\n");
    for (i, id) in ids.iter().enumerate() {
        if i == lint_rules {
            out.push_str("\nMetadata validation (also reported by `lint`):\n");
        }
        if let Some((severity, summary, _)) = objectstack_lint::documentation(id) {
            out.push_str(&format!(
                "  {id:width$}  {:7}  {summary}\n",
                severity.as_str()
            ));
        }
    }
    out.push_str(
        "\n`objectstack-ai explain RULE` prints a rule's documentation; `--allow`, `--warn` and \
         `--deny RULE` (or objectstack-lint.toml) change its level.\n",
    );
    out
}
