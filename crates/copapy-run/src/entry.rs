//! The whole `copapy-run` command as one call, shared by the binary (`main.rs`) and the
//! Python extension (`copapy._core.run_cli`, the `copapy-run` console script of every
//! Python install), so both parse, run and report errors identically.
#![forbid(unsafe_code)]

use std::io::Write;

use copapy_program::format;

/// What `copapy-run --version` prints: the crate version and the program format versions
/// this runner reads, so a client can tell whether a runner it found is this copapy's.
pub fn version_line() -> String {
    format!(
        "copapy-run {} (program formats {} to {})",
        env!("CARGO_PKG_VERSION"),
        format::OLDEST_VERSION,
        format::VERSION
    )
}

/// Runs `copapy-run` with `args` (without the program name); returns the exit code: 0,
/// or 2 after printing `copapy-run: <what is wrong>` on stderr.
pub fn main_with_args(args: &[String]) -> i32 {
    if args.iter().any(|a| a == "--version" || a == "-V") {
        println!("{}", version_line());
        return 0;
    }
    let result = crate::cli::parse_args(args).and_then(crate::cli::run);
    // A host process (Python) that outlives this call does not flush Rust's stdout at
    // exit the way a Rust binary does; flush here so no output is lost.
    let _ = std::io::stdout().flush();
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("copapy-run: {e}");
            2
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_names_the_program_format() {
        assert!(version_line().starts_with("copapy-run "));
        assert!(version_line().ends_with(&format!("to {})", format::VERSION)));
        assert_eq!(main_with_args(&["--version".to_string()]), 0);
    }

    #[test]
    fn errors_give_exit_code_two() {
        assert_eq!(main_with_args(&["--bogus".to_string()]), 2);
        assert_eq!(main_with_args(&["/nonexistent/x.cpy".to_string()]), 2);
    }
}
