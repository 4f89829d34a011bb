//! `copapy-run`: see `copapy_run::cli::USAGE`.
#![forbid(unsafe_code)]

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = copapy_run::cli::parse_args(&args).and_then(copapy_run::cli::run);
    if let Err(e) = result {
        eprintln!("copapy-run: {e}");
        std::process::exit(2);
    }
}
