//! `objectstack-ai rules`: the lint rules and the `spec` validation ids,
//! one per line, or as JSON for tools (an editor, a docs site).

use crate::EXIT_OK;

/// Arguments of `objectstack-ai rules`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// What to print.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// Output formats of `objectstack-ai rules`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    /// One aligned line a rule: id, default severity, summary.
    Text,
    /// `{"rules": [...]}`: each id with its kind (`lint` or
    /// `validation`), default severity, summary and documentation
    /// (Markdown, as `explain` prints it), in the text's order.
    Json,
}

/// Runs the command; returns the exit code.
pub(crate) fn run(args: Args) -> anyhow::Result<u8> {
    let text = match args.format {
        Format::Text => render(),
        Format::Json => render_json(),
    };
    crate::out::stdout(&text)?;
    Ok(EXIT_OK)
}

/// Every id as a JSON object, lint rules first, pretty-printed.
fn render_json() -> String {
    let lint_rules = objectstack_lint::rules::RULES.len();
    let rules: Vec<serde_json::Value> = objectstack_lint::rule_ids()
        .iter()
        .enumerate()
        .filter_map(|(i, id)| {
            let (severity, summary, doc) = objectstack_lint::documentation(id)?;
            Some(serde_json::json!({
                "id": id,
                "kind": if i < lint_rules { "lint" } else { "validation" },
                "defaultSeverity": severity.as_str(),
                "summary": summary,
                "documentation": doc,
            }))
        })
        .collect();
    // Through the terminal-safe writer, as every JSON output is.
    let mut out =
        objectstack_spec::json::terminal::to_string_pretty(&serde_json::json!({ "rules": rules }))
            .unwrap_or_default();
    out.push('\n');
    out
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
