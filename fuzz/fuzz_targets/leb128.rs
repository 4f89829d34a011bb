//! LEB128 numbers: whatever `leb128::read` accepts is the shortest encoding of its value
//! (writing the value back gives exactly the bytes read), so no program file has two
//! encodings of one number; reading never panics.
#![no_main]

use copapy_program::leb128;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    if let Some((value, used)) = leb128::read(input) {
        let mut again = Vec::new();
        leb128::write(&mut again, value);
        assert_eq!(again, input[..used], "{value} read from a longer form");
    }
});
