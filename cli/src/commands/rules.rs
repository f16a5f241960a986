//! `objectstack-ai rules`: the lint rules, one per line.

use objectstack_lint::rules::RULES;

use crate::EXIT_OK;

/// Arguments of `objectstack-ai rules`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs the command; returns the exit code.
pub(crate) fn run(_args: Args) -> anyhow::Result<u8> {
    print!("{}", render());
    Ok(EXIT_OK)
}

/// `id  severity  summary` for every rule, aligned.
fn render() -> String {
    let width = RULES.iter().map(|r| r.id().len()).max().unwrap_or(0);
    let mut out = String::new();
    for rule in RULES {
        out.push_str(&format!(
            "{:width$}  {:7}  {}\n",
            rule.id(),
            rule.default_severity().as_str(),
            rule.summary()
        ));
    }
    out.push_str(
        "\n`objectstack-ai explain RULE` prints a rule's documentation; `--allow`, `--warn` and \
         `--deny RULE` (or objectstack-lint.toml) change its level.\n",
    );
    out
}
