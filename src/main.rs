//! The rocegate command: parse the command line, call the library, map the
//! outcome to the documented exit code.

use clap::Parser;
use rocegate::app;
use rocegate::cli::{BaselineCommand, Cli, Command, InventoryCommand};

fn main() {
    let cli = Cli::parse();
    if let Some(Command::SlurmTask { plan }) = &cli.command {
        std::process::exit(rocegate::exec::slurm::agent::main(plan));
    }
    let command = cli.command.unwrap_or(Command::Run(cli.run));
    let result =
        rocegate::inputs::set_max_input_size(cli.max_input_size.as_deref()).and_then(|()| {
            match command {
                Command::Run(a) => app::run(&a),
                Command::Validate(a) => app::validate(&a),
                Command::Plan(a) => app::plan(&a),
                Command::Report(a) => app::report(&a),
                Command::Compare(a) => app::baseline::compare(&a),
                Command::Baseline(BaselineCommand::Promote(a)) => app::baseline::promote(&a),
                Command::Baseline(BaselineCommand::List(a)) => app::baseline::list(&a),
                Command::Baseline(BaselineCommand::Show(a)) => app::baseline::show(&a),
                Command::Parse(a) => app::parse(&a),
                Command::Preflight(a) => app::remote::preflight_cmd(&a),
                Command::Audit(a) => app::remote::audit_cmd(&a),
                Command::Exec(a) => app::remote::exec_cmd(&a),
                Command::Recover(a) => app::faults::recover(&a),
                Command::Inventory(InventoryCommand::Generate(a)) => app::generate_inventory(&a),
                Command::Inventory(InventoryCommand::Import(a)) => app::inventory::import(&a),
                Command::Inventory(InventoryCommand::Discover(a)) => app::discover::discover(&a),
                Command::Completions(a) => app::shell::completions(&a),
                Command::Man => app::shell::man(),
                Command::SlurmTask { .. } => unreachable!("handled before the inputs"),
            }
        });
    let code = match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("rocegate: {e}");
            e.code()
        }
    };
    std::process::exit(code);
}
