//! Release automation for the workspace: `cargo xtask <command>`.

fn main() -> anyhow::Result<()> {
    anyhow::bail!("no xtask commands yet")
}
