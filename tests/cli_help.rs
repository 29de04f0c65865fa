//! The help, completions and manual page that a first-day user reads, all
//! generated from the clap definitions: every command's `--help` ends with
//! real command lines, and `completions` and `man` print what the shells
//! and `man` expect.

use assert_cmd::Command;
use clap::CommandFactory;
use rocegate::cli::Cli;

fn rocegate(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::cargo_bin("rocegate")
        .expect("binary is built")
        .args(args)
        .output()
        .expect("rocegate runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every command path (`["inventory", "generate"]`), nested ones included,
/// so a command added later without examples fails here.
fn command_paths(cmd: &clap::Command, prefix: &[String], out: &mut Vec<Vec<String>>) {
    for sub in cmd.get_subcommands() {
        if sub.get_name() == "help" {
            continue;
        }
        let mut path = prefix.to_vec();
        path.push(sub.get_name().to_string());
        out.push(path.clone());
        command_paths(sub, &path, out);
    }
}

#[test]
fn every_command_help_has_examples_of_itself() {
    let mut paths = vec![Vec::new()];
    command_paths(&Cli::command(), &[], &mut paths);
    assert!(paths.len() >= 12, "{paths:?}");
    for path in paths {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let (code, stdout, stderr) = rocegate(&args);
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        let (_, examples) = stdout
            .split_once("\nExamples:\n")
            .unwrap_or_else(|| panic!("rocegate {args:?}: no Examples block:\n{stdout}"));
        // Each example line is a command line of this very command.
        let invoked = format!("rocegate {}", path.join(" "));
        let lines: Vec<&str> = examples.lines().filter(|l| !l.trim().is_empty()).collect();
        assert!(!lines.is_empty(), "{args:?}");
        assert!(
            lines.iter().any(|l| l.contains(invoked.trim_end())),
            "rocegate {args:?}: no example runs `{invoked}`:\n{examples}"
        );
    }
}

#[test]
fn completions_list_the_commands_for_each_shell() {
    let (code, bash, stderr) = rocegate(&["completions", "bash"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(bash.contains("complete -F _rocegate"), "{bash}");
    for sub in [
        "run",
        "validate",
        "plan",
        "parse",
        "recover",
        "completions",
        "man",
    ] {
        assert!(
            bash.contains(&format!("rocegate,{sub})")),
            "bash lacks {sub}"
        );
    }
    // Option values come from the definitions too.
    assert!(bash.contains("--allow-disruptive") && bash.contains("perftest"));

    let (code, zsh, _) = rocegate(&["completions", "zsh"]);
    assert_eq!(code, Some(0));
    assert!(zsh.starts_with("#compdef rocegate"), "{zsh}");
    assert!(zsh.contains("'validate:") && zsh.contains("--max-input-size"));

    let (code, fish, _) = rocegate(&["completions", "fish"]);
    assert_eq!(code, Some(0));
    assert!(fish.contains("complete -c rocegate") && fish.contains("-a \"preflight\""));

    let (code, _, stderr) = rocegate(&["completions", "tcsh"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("possible values: bash, zsh, fish"),
        "{stderr}"
    );
}

#[test]
fn man_is_a_roff_page_with_every_command() {
    let (code, page, stderr) = rocegate(&["man"]);
    assert_eq!(code, Some(0), "{stderr}");
    let th = page
        .lines()
        .find(|l| l.starts_with(".TH "))
        .unwrap_or_else(|| panic!("no .TH line:\n{page}"));
    assert!(th.starts_with(".TH rocegate 1"), "{th}");
    assert!(page.contains(".SH NAME") && page.contains(".SH SUBCOMMANDS"));
    for sub in ["run", "validate", "plan", "report", "parse", "inventory"] {
        assert!(
            page.contains(&format!("rocegate\\-{sub}(1)")),
            "man lacks {sub}"
        );
    }
    assert!(
        page.contains("Examples:"),
        "the top-level examples are in it"
    );
}
