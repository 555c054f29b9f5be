//! `format.class: bytes`: each value's bytes as they are, then `format.bytearray.separator`.

/// The value and its separator.
pub fn line(value: &[u8], separator: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.len() + separator.len());
    out.extend_from_slice(value);
    out.extend_from_slice(separator);
    out
}
