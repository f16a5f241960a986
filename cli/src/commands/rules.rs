//! `objectstack-ai rules` (not wired yet).

/// Arguments of `objectstack-ai rules`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs the command; returns the exit code.
pub(crate) fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("`rules` is not available yet")
}
