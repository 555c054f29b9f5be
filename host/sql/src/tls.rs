//! TLS for the database connection: rustls with ring (no C build), the webpki roots, and an
//! optional private CA. Built when the [`crate::Database`] is made, so that a missing or
//! broken `ca_file` fails the connector at start, before any connection.

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::{ClientConfig, RootCertStore};

use crate::SqlError;

/// The client config for PostgreSQL: webpki roots plus every certificate in `ca_file`.
pub(crate) fn client_config(ca_file: Option<&Path>) -> Result<ClientConfig, SqlError> {
    let mut roots = RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    if let Some(path) = ca_file {
        add_ca_file(&mut roots, path)?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| SqlError::Refused(format!("TLS cannot be set up: {error}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(config)
}

/// mysql_async builds its rustls config from the process-wide default provider: make that
/// ring, unless something in the process chose one already (then that one is used).
pub(crate) fn install_default_provider() {
    // An Err only says a provider was installed before; either way there is one.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

fn add_ca_file(roots: &mut RootCertStore, path: &Path) -> Result<(), SqlError> {
    let shown = path.display();
    let pem = std::fs::read(path).map_err(|error| SqlError::Refused(format!("cannot read ca_file {shown}: {error}")))?;
    let mut added = 0usize;
    for certificate in CertificateDer::pem_slice_iter(&pem) {
        let certificate = certificate.map_err(|error| {
            SqlError::Refused(format!("ca_file {shown} is not a PEM certificate file: {error}"))
        })?;
        roots.add(certificate).map_err(|error| {
            SqlError::Refused(format!("ca_file {shown} holds a certificate that cannot be a root: {error}"))
        })?;
        added += 1;
    }
    if added == 0 {
        return Err(SqlError::Refused(format!(
            "ca_file {shown} holds no certificate: give a PEM file with -----BEGIN CERTIFICATE----- blocks"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ca_file_that_is_missing_or_not_pem_fails_in_words() {
        let missing = client_config(Some(Path::new("/nonexistent/turnpike-ca.pem")));
        assert!(matches!(&missing, Err(SqlError::Refused(m)) if m.contains("cannot read ca_file")), "{:?}", missing.err());
        let dir = std::env::temp_dir().join(format!("turnpike-sql-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let result = client_config(Some(&empty));
        assert!(matches!(&result, Err(SqlError::Refused(m)) if m.contains("holds no certificate")), "{:?}", result.err());
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(client_config(None).is_ok());
    }
}
