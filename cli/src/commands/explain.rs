//! `objectstack-ai explain RULE`: a lint rule's documentation (or a `spec`
//! validation id's).

use crate::{EXIT_OK, EXIT_UNUSABLE};

/// Arguments of `objectstack-ai explain`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The rule id (`objectstack-ai rules` lists them).
    #[arg(value_name = "RULE")]
    rule: String,
}

/// Runs the command; returns the exit code.
pub(crate) fn run(args: Args) -> anyhow::Result<u8> {
    match objectstack_lint::documentation(&args.rule) {
        Some((severity, _, doc)) => {
            crate::out::stdout(&format!("# {} (default: {severity})\n\n{doc}\n", args.rule))?;
            Ok(EXIT_OK)
        }
        None => {
            let hint = objectstack_lint::nearest_rule_id(&args.rule)
                .map_or_else(String::new, |id| format!("; did you mean `{id}`?"));
            eprintln!(
                "error: unknown rule `{}`{hint} (`objectstack-ai rules` lists them)",
                objectstack_spec::text::line_safe(&args.rule)
            );
            Ok(EXIT_UNUSABLE)
        }
    }
}
