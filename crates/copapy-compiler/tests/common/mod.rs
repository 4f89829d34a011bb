//! What the tests that write a Rust table out for the scripts share.

/// The file `file` (a path from the repository root) must read `want`, the Rust table
/// `table` written out; with `COPAPY_BLESS=1` it is written first.
pub fn check_written(file: &str, want: &str, table: &str, test: &str) {
    let path = format!("{}/../../{file}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("COPAPY_BLESS").is_some() {
        std::fs::write(&path, want).expect("the checkout is writable");
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{file} differs from {table}: rewrite it with \
         COPAPY_BLESS=1 cargo test -p copapy-compiler --test {test}"
    );
}
