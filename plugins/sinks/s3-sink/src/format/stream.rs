//! The bytes of a line-format object, compressed or not, taken out in chunks as they fill so
//! that the plugin never holds a whole object: the host uploads each part as it fills.

use std::io::Write as _;

use flate2::write::GzEncoder;
use turnpike_sdk::RecordError;

/// An object's bytes not yet uploaded.
pub enum Stream {
    Plain(Vec<u8>),
    /// gzip, default level; the header's time is 0, so the same records give the same bytes.
    Gzip(GzEncoder<Vec<u8>>),
}

fn io_error(e: std::io::Error) -> RecordError {
    RecordError::fatal(format!("compressing an object: {e}"))
}

impl Stream {
    pub fn new(gzip: bool) -> Stream {
        if gzip {
            Stream::Gzip(GzEncoder::new(Vec::new(), flate2::Compression::default()))
        } else {
            Stream::Plain(Vec::new())
        }
    }

    pub fn append(&mut self, bytes: &[u8]) -> Result<(), RecordError> {
        match self {
            Stream::Plain(buf) => {
                buf.extend_from_slice(bytes);
                Ok(())
            }
            Stream::Gzip(encoder) => encoder.write_all(bytes).map_err(io_error),
        }
    }

    /// The output so far, once at least `at_least` bytes are ready. Taking the encoder's
    /// output buffer is safe: it only ever appends to it.
    pub fn take_ready(&mut self, at_least: usize) -> Option<Vec<u8>> {
        let buf = match self {
            Stream::Plain(buf) => buf,
            Stream::Gzip(encoder) => encoder.get_mut(),
        };
        (buf.len() >= at_least).then(|| std::mem::take(buf))
    }

    /// The rest of the output (gzip's last block and trailer included).
    pub fn finish(self) -> Result<Vec<u8>, RecordError> {
        match self {
            Stream::Plain(buf) => Ok(buf),
            Stream::Gzip(encoder) => encoder.finish().map_err(io_error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read as _;

    #[test]
    fn gzip_output_taken_in_chunks_decompresses_whole() {
        let mut s = Stream::new(true);
        let mut out = Vec::new();
        for i in 0..5000 {
            s.append(format!("{{\"n\":{i}}}\n").as_bytes()).unwrap();
            if let Some(chunk) = s.take_ready(1024) {
                out.extend(chunk);
            }
        }
        out.extend(s.finish().unwrap());
        let mut text = String::new();
        flate2::read::GzDecoder::new(&out[..]).read_to_string(&mut text).unwrap();
        assert_eq!(text.lines().count(), 5000);
        assert_eq!(text.lines().last(), Some("{\"n\":4999}"));
    }
}
