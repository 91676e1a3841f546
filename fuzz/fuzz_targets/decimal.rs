//! Replicated numbers: every double prints as text that parses back to the same bits, and
//! every integer as its decimal form, within the fixed buffer.
#![no_main]

use goblin_core::decimal::Decimal;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 8 {
        return;
    }
    let bits = u64::from_le_bytes(data[..8].try_into().unwrap());
    let score = f64::from_bits(bits);
    if !score.is_nan() {
        let text = Decimal::score(score);
        let text = std::str::from_utf8(text.as_bytes()).expect("ASCII");
        let parsed: f64 = text.parse().expect("parses");
        assert_eq!(
            parsed.to_bits(),
            score.to_bits(),
            "{score:e} printed as {text}"
        );
    }
    let integer = bits as i64;
    assert_eq!(
        Decimal::integer(integer).as_bytes(),
        integer.to_string().as_bytes()
    );
});
