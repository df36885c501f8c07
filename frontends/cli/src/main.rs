//! The `stgflow` command. Everything but process setup lives in the library, so that the
//! golden tests drive the same code in-process.

use std::io::IsTerminal;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    // Unlocked handles: worker threads (and timely) may write too; holding the locks for
    // the whole run would deadlock them.
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let code = stgflow_cli::run(std::env::args_os(), stdin, stdout, stderr, color);
    std::process::exit(code);
}
