//! What installing needs: `stgflow completions SHELL` and `stgflow man [COMMAND]` print
//! scripts and pages made from the same flags as `--help`.

mod common;

use common::{stdout_of, stgflow};

#[test]
fn completion_scripts_know_the_commands_and_their_flags() {
    for (shell, opening) in [
        ("bash", "_stgflow()"),
        ("zsh", "#compdef stgflow"),
        ("fish", "complete -c stgflow"),
        ("elvish", "stgflow"),
        ("powershell", "stgflow"),
    ] {
        let script = stdout_of(&["completions", shell]);
        assert!(script.contains(opening), "{shell}: {script}");
        for word in ["explain", "workers", "output-format", "completions"] {
            assert!(script.contains(word), "{shell}: no `{word}`");
        }
    }
    let bad = stgflow()
        .args(["completions", "tcsh"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("possible values"));
}

#[test]
fn manual_pages_for_stgflow_and_each_command() {
    let top = stdout_of(&["man"]);
    assert!(top.contains(".TH stgflow 1"), "{top}");
    for command in ["run", "check", "explain"] {
        assert!(top.contains(command), "the page lists `{command}`");
    }
    let run = stdout_of(&["man", "run"]);
    assert!(run.contains(".TH stgflow-run 1"), "{run}");
    assert!(run.contains(r"\-\-output\-dir") && run.contains(r"\-\-lateness"));
    let unknown = stgflow()
        .args(["man", "walk"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(unknown.status.code(), Some(1));
    let message = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        message.contains("no command `walk`") && message.contains("run, check"),
        "{message}"
    );
}
