//! The admin API's HTTPS certificate and key, loaded from PEM files once at start-up.
//!
//! The crypto provider (ring) is picked here rather than installed process-wide: another
//! dependency enabling a second rustls provider would otherwise make the default ambiguous,
//! and rustls panics on an ambiguous default. Errors name the file and what is wrong with
//! it, never its contents: a key file's bytes must not reach a log.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::ServerConfig;

/// Why the configured certificate and key cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read {}: {error}", path.display())]
    Unreadable { path: PathBuf, error: std::io::Error },
    #[error("{} is not valid PEM: {why}", path.display())]
    NotPem { path: PathBuf, why: &'static str },
    #[error("{} holds no certificate (a PEM `-----BEGIN CERTIFICATE-----` block; DER files must be converted to PEM)", path.display())]
    NoCertificate { path: PathBuf },
    #[error("{} holds no private key (a PEM `BEGIN PRIVATE KEY`, `BEGIN RSA PRIVATE KEY` or `BEGIN EC PRIVATE KEY` block; encrypted keys must be decrypted first)", path.display())]
    NoKey { path: PathBuf },
    #[error("the private key in {} is damaged or of an unsupported kind (use RSA, ECDSA P-256/P-384 or Ed25519)", path.display())]
    UnusableKey { path: PathBuf },
    #[error("the first certificate in {} cannot be used: {why}", path.display())]
    BadCertificate { path: PathBuf, why: String },
    #[error("the private key in {} does not belong to the certificate in {} (the first certificate in the file must be the server's own, followed by its intermediates)", key.display(), cert.display())]
    KeyMismatch { cert: PathBuf, key: PathBuf },
    #[error("the certificate in {} and the key in {} were refused: {why}", cert.display(), key.display())]
    Refused { cert: PathBuf, key: PathBuf, why: String },
}

/// Loads a certificate chain (leaf first) and its private key into a server configuration
/// offering HTTP/1.1 only, the one protocol the API serves. Either file may hold both.
pub fn load_tls(cert_file: &Path, key_file: &Path) -> Result<Arc<ServerConfig>, TlsError> {
    let certs = read_certificates(cert_file)?;
    let key = read_key(key_file)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let refused = |error: rustls::Error| TlsError::Refused { cert: cert_file.to_owned(), key: key_file.to_owned(), why: error.to_string() };
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(refused)?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|error| match error {
            rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch) => {
                TlsError::KeyMismatch { cert: cert_file.to_owned(), key: key_file.to_owned() }
            }
            // The one `General` error on this path: no provider key type parsed the key.
            rustls::Error::General(_) => TlsError::UnusableKey { path: key_file.to_owned() },
            rustls::Error::InvalidCertificate(why) => TlsError::BadCertificate { path: cert_file.to_owned(), why: why.to_string() },
            other => refused(other),
        })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

fn read(path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|error| TlsError::Unreadable { path: path.to_owned(), error })
}

fn read_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let bytes = read(path)?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| TlsError::NotPem { path: path.to_owned(), why: pem_problem(&error) })?;
    if certs.is_empty() {
        return Err(TlsError::NoCertificate { path: path.to_owned() });
    }
    Ok(certs)
}

fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    let bytes = read(path)?;
    PrivateKeyDer::from_pem_slice(&bytes).map_err(|error| match error {
        pem::Error::NoItemsFound => TlsError::NoKey { path: path.to_owned() },
        other => TlsError::NotPem { path: path.to_owned(), why: pem_problem(&other) },
    })
}

/// What is wrong with a PEM file, in words that carry none of its contents (the parser's
/// own messages quote the offending line or byte, which may be part of a key).
fn pem_problem(error: &pem::Error) -> &'static str {
    match error {
        pem::Error::MissingSectionEnd { .. } => "a `-----BEGIN` block has no matching `-----END` line",
        pem::Error::IllegalSectionStart { .. } => "a `-----BEGIN` line is malformed",
        pem::Error::Base64Decode(_) => "a block is not valid base64",
        pem::Error::SectionTooLarge => "a block is larger than 256 MB",
        pem::Error::NoItemsFound => "it holds nothing usable",
        _ => "it cannot be parsed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
    }

    fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write a test file");
        path
    }

    #[test]
    fn a_matching_pair_loads_and_offers_http1_only() {
        let config = load_tls(&fixture("cert.pem"), &fixture("key.pem")).expect("the fixture pair loads");
        assert_eq!(config.alpn_protocols, vec![b"http/1.1".to_vec()]);
    }

    #[test]
    fn one_file_may_hold_both_the_certificate_and_the_key() {
        let dir = tempfile::tempdir().expect("temp dir");
        let cert = std::fs::read_to_string(fixture("cert.pem")).expect("fixture");
        let key = std::fs::read_to_string(fixture("key.pem")).expect("fixture");
        let both = write(&dir, "both.pem", &format!("{key}{cert}"));
        load_tls(&both, &both).expect("a combined file serves as both");
    }

    #[test]
    fn a_truncated_block_is_named_without_quoting_the_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let cert = std::fs::read_to_string(fixture("cert.pem")).expect("fixture");
        let key = std::fs::read_to_string(fixture("key.pem")).expect("fixture");
        let cut = key.lines().take(3).collect::<Vec<_>>().join("\n");
        let cut_key = write(&dir, "cut.pem", &cut);
        let error = load_tls(&fixture("cert.pem"), &cut_key).expect_err("a key without its END line");
        assert!(matches!(error, TlsError::NotPem { .. }), "{error:?}");
        let message = error.to_string();
        assert!(message.contains("cut.pem") && message.contains("END"), "{message}");
        let secret_line = key.lines().nth(1).expect("a base64 line");
        assert!(!message.contains(secret_line), "the message quotes the key: {message}");

        let cut_cert = write(&dir, "cut-cert.pem", &cert[..cert.len() / 2]);
        let error = load_tls(&cut_cert, &fixture("key.pem")).expect_err("a certificate without its END line");
        assert!(matches!(error, TlsError::NotPem { ref path, .. } if path == &cut_cert), "{error:?}");
    }

    #[test]
    fn a_key_block_that_is_no_key_is_refused_without_quoting_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let junk = "c2VjcmV0LWJ5dGVzLXRoYXQtYXJlLW5vdC1hLWtleQ==";
        let key = write(&dir, "junk.pem", &format!("-----BEGIN PRIVATE KEY-----\n{junk}\n-----END PRIVATE KEY-----\n"));
        let error = load_tls(&fixture("cert.pem"), &key).expect_err("junk in a key block");
        assert!(matches!(error, TlsError::UnusableKey { .. }), "{error:?}");
        assert!(!error.to_string().contains(junk), "{error}");
    }

    #[test]
    fn a_certificate_block_that_is_no_certificate_is_named() {
        let dir = tempfile::tempdir().expect("temp dir");
        let cert = write(&dir, "junk-cert.pem", "-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n");
        let error = load_tls(&cert, &fixture("key.pem")).expect_err("junk in a certificate block");
        assert!(matches!(error, TlsError::BadCertificate { ref path, .. } if path == &cert), "{error:?}");
    }
}
