//! `copapy-run`: see `copapy_run::cli::USAGE`.
#![forbid(unsafe_code)]

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(copapy_run::entry::main_with_args(&args));
}
