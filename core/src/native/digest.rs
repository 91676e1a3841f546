//! DIGEST (Redis 8.4): the XXH3-64 digest of a string value with seed 0, written as 16
//! lower-case hex digits, leading zeros kept. DELEX's IFDEQ and IFDNE compare it.

use xxhash_rust::xxh3::xxh3_64;

/// The digest of a string value, as DIGEST replies it.
pub fn digest(value: &[u8]) -> [u8; 16] {
    let mut hex = [0u8; 16];
    let hash = xxh3_64(value);
    for (i, digit) in hex.iter_mut().enumerate() {
        let nibble = (hash >> (60 - 4 * i)) & 0xf;
        *digit = b"0123456789abcdef"[nibble as usize];
    }
    hex
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_the_servers() {
        // Values Redis 8.10's DIGEST replied.
        assert_eq!(&digest(b""), b"2d06800538d394c2");
        assert_eq!(&digest(b"hello"), b"9555e8555c62dcfd");
        assert_eq!(&digest(b"12345"), b"f34099ede96b5581");
        let long = b"v8lf0c11xh8ymlqztfd3eeq16kfn4sspw7fqmnuuq3k3t75em5wdizgcdw7uc26nnf961u2jkfzkjytls2kwlj7626sd";
        assert_eq!(&digest(long), b"00006c38adf31777", "leading zeros kept");
    }
}
