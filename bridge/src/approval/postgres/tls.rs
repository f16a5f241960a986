//! TLS to the database, with libpq's meaning of `sslmode`.
//!
//! tokio-postgres reads `sslmode=disable|prefer|require` and knows neither
//! `verify-ca` nor `verify-full`, nor `sslrootcert`; [`split`] takes those
//! out of the URL first. The connector then checks what the mode asks for,
//! as libpq does:
//!
//! | `sslmode` | encrypted | certificate checked |
//! | --- | --- | --- |
//! | `disable` | no | no |
//! | `prefer` (the default) | when the server offers TLS | no |
//! | `require` | yes | only when `sslrootcert` is given (then as `verify-ca`) |
//! | `verify-ca` | yes | its chain, to a trusted root |
//! | `verify-full` | yes | its chain, and that it names the host |
//!
//! The trusted roots are the certificates in the PEM file `sslrootcert`
//! names, or else the system's (with `SSL_CERT_FILE` and `SSL_CERT_DIR`
//! honoured) and Mozilla's. libpq's default file `~/.postgresql/root.crt` is
//! not read.

use std::sync::Arc;

use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, Error as TlsError, RootCertStore,
    SignatureScheme,
    client::WebPkiServerVerifier,
    client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier},
    crypto::{WebPkiSupportedAlgorithms, ring, verify_tls12_signature, verify_tls13_signature},
    pki_types::{CertificateDer, ServerName, UnixTime, pem::PemObject},
};
use tokio_postgres_rustls::MakeRustlsConnect;

/// How much of the server's certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verify {
    /// Nothing: the connection is encrypted, not authenticated (`prefer`,
    /// `require`).
    Nothing,
    /// Its chain to a trusted root (`verify-ca`).
    Chain,
    /// Its chain, and that it names the host (`verify-full`).
    Full,
}

/// What [`split`] took out of a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Split {
    /// The URL tokio-postgres reads: `sslmode=verify-*` written as
    /// `require`, `sslrootcert` removed.
    pub(super) url: String,
    /// What is checked.
    pub(super) verify: Verify,
    /// The `sslrootcert` file, when given.
    pub(super) root_cert: Option<String>,
}

/// Takes `sslmode=verify-ca|verify-full` and `sslrootcert` out of a
/// `postgres://` URL's query. A key=value connection string is returned as
/// it is (tokio-postgres then refuses those two, and says which).
pub(super) fn split(url: &str) -> Split {
    let unchanged = || Split {
        url: url.to_owned(),
        verify: Verify::Nothing,
        root_cert: None,
    };
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return unchanged();
    }
    let Some((base, query)) = url.split_once('?') else {
        return unchanged();
    };
    let mut kept = Vec::new();
    let mut mode = None;
    let mut root_cert = None;
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match (key, value) {
            ("sslmode", "verify-ca") => {
                mode = Some(Verify::Chain);
                kept.push("sslmode=require".to_owned());
            }
            ("sslmode", "verify-full") => {
                mode = Some(Verify::Full);
                kept.push("sslmode=require".to_owned());
            }
            ("sslrootcert", _) => root_cert = Some(percent_decode(value)),
            _ => kept.push(pair.to_owned()),
        }
    }
    let requires = kept.iter().any(|p| p == "sslmode=require");
    let verify = match mode {
        Some(verify) => verify,
        // libpq: `require` with a root certificate checks the chain.
        None if requires && root_cert.is_some() => Verify::Chain,
        None => Verify::Nothing,
    };
    let url = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Split {
        url,
        verify,
        root_cert,
    }
}

/// `%XX` decoded, for a path given in a URL's query; anything else kept
/// (`+` too: libpq's URLs are percent-encoded, not form-encoded).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = |j: usize| {
            bytes
                .get(j)
                .and_then(|c| (*c as char).to_digit(16))
                .and_then(|d| u8::try_from(d).ok())
        };
        match (b, hex(i + 1), hex(i + 2)) {
            (b'%', Some(high), Some(low)) => {
                out.push(high * 16 + low);
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The connector for `verify`, trusting `root_cert`'s certificates (or the
/// system's and Mozilla's). Errors say what is wrong with the file.
pub(super) fn connector(
    verify: Verify,
    root_cert: Option<&str>,
) -> Result<MakeRustlsConnect, String> {
    let provider = Arc::new(ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS cannot be set up: {e}"))?;
    let config = match verify {
        Verify::Nothing => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Unchecked(
                provider.signature_verification_algorithms,
            )))
            .with_no_client_auth(),
        Verify::Chain | Verify::Full => {
            let roots = Arc::new(roots(root_cert)?);
            let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider)
                .build()
                .map_err(|e| format!("TLS cannot be set up: {e}"))?;
            let verifier: Arc<dyn ServerCertVerifier> = if verify == Verify::Full {
                webpki
            } else {
                Arc::new(ChainOnly(webpki))
            };
            builder
                .dangerous()
                .with_custom_certificate_verifier(verifier)
                .with_no_client_auth()
        }
    };
    Ok(MakeRustlsConnect::new(config))
}

fn roots(root_cert: Option<&str>) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    match root_cert {
        Some(file) => {
            let certificates = CertificateDer::pem_file_iter(file)
                .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
                .map_err(|e| format!("sslrootcert `{file}` cannot be read as PEM: {e}"))?;
            let (added, _) = roots.add_parsable_certificates(certificates);
            if added == 0 {
                return Err(format!(
                    "sslrootcert `{file}` holds no usable certificate; give the PEM file of \
                     the CA that signed the server's certificate"
                ));
            }
        }
        None => {
            // Unreadable system certificates are skipped, as a browser
            // would; Mozilla's roots are always there.
            let native = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(native.certs);
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        }
    }
    Ok(roots)
}

/// `prefer` and `require`: the handshake's signatures are checked, the
/// certificate is not (libpq's meaning: encrypted, not authenticated).
#[derive(Debug)]
struct Unchecked(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, TlsError> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}

/// `verify-ca`: the chain is checked, the name is not.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, TlsError> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(TlsError::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verify_modes_are_taken_out_of_the_url() {
        let s = split("postgres://u@db:5432/q?sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem");
        assert_eq!(s.url, "postgres://u@db:5432/q?sslmode=require");
        assert_eq!(s.verify, Verify::Full);
        assert_eq!(s.root_cert.as_deref(), Some("/etc/ca.pem"));

        let s = split("postgresql://u@db/q?application_name=x&sslmode=verify-ca");
        assert_eq!(
            s.url,
            "postgresql://u@db/q?application_name=x&sslmode=require"
        );
        assert_eq!(s.verify, Verify::Chain);
        assert_eq!(s.root_cert, None);
    }

    #[test]
    fn require_checks_the_chain_only_with_a_root_certificate() {
        let s = split("postgres://u@db/q?sslmode=require");
        assert_eq!(s.verify, Verify::Nothing);
        assert_eq!(s.url, "postgres://u@db/q?sslmode=require");
        let s = split("postgres://u@db/q?sslmode=require&sslrootcert=ca.pem");
        assert_eq!(s.verify, Verify::Chain);
        assert_eq!(s.url, "postgres://u@db/q?sslmode=require");
    }

    #[test]
    fn other_urls_are_unchanged() {
        for url in [
            "postgres://u@db/q",
            "postgres://u@db/q?sslmode=disable",
            "postgres://u@db/q?sslmode=prefer&connect_timeout=3",
            "host=db user=u sslmode=verify-full",
        ] {
            let s = split(url);
            assert_eq!(s.url, url);
            assert_eq!(s.verify, Verify::Nothing);
        }
        // Only the root certificate goes: the URL is otherwise as given.
        assert_eq!(
            split("postgres://u@db/q?sslrootcert=a%20b.pem").url,
            "postgres://u@db/q"
        );
        assert_eq!(
            split("postgres://u@db/q?sslrootcert=a%20b.pem")
                .root_cert
                .as_deref(),
            Some("a b.pem")
        );
        assert_eq!(
            split("postgres://u@db/q?sslrootcert=/etc/c++/ca.pem").root_cert,
            Some("/etc/c++/ca.pem".to_owned())
        );
    }

    #[test]
    fn a_bad_root_certificate_file_is_named() {
        let dir = std::env::temp_dir().join(format!("osk-tls-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap_or_default();
        let path = empty.to_string_lossy().into_owned();
        let err = connector(Verify::Full, Some(&path))
            .err()
            .unwrap_or_default();
        assert!(
            err.contains(&path) && err.contains("no usable certificate"),
            "{err}"
        );
        let missing = dir.join("missing.pem").to_string_lossy().into_owned();
        let err = connector(Verify::Chain, Some(&missing))
            .err()
            .unwrap_or_default();
        assert!(err.contains("cannot be read as PEM"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn every_mode_builds_a_connector_from_the_system_roots() {
        for verify in [Verify::Nothing, Verify::Chain, Verify::Full] {
            assert!(connector(verify, None).is_ok(), "{verify:?}");
        }
    }
}
