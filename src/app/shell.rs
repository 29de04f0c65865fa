//! `rocegate completions bash|zsh|fish` and `rocegate man`: both generated
//! from the clap definitions in `cli.rs`, so they cannot drift from the
//! options the binary takes. Printed to standard output; installing them is
//! the user's (the `--help` of each says where).

use crate::cli::{Cli, CompletionsArgs, Shell};
use crate::exit::{AppError, PASS};
use clap::CommandFactory;

pub fn completions(a: &CompletionsArgs) -> Result<i32, AppError> {
    let shell = match a.shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "rocegate", &mut buf);
    super::out(&String::from_utf8_lossy(&buf));
    Ok(PASS)
}

/// One page, `rocegate(1)`, with every command under SUBCOMMANDS.
pub fn man() -> Result<i32, AppError> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut buf)
        .map_err(|e| AppError::Incomplete(format!("cannot render the manual page: {e}")))?;
    super::out(&String::from_utf8_lossy(&buf));
    Ok(PASS)
}
