//! Admin API settings: where it listens, who may reach it, and the bounds on requests.

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

use crate::{Problem, Ranged};

/// Admin API settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AdminConfig {
    /// Listen address. Default `127.0.0.1:8080`: loopback only. Any other address needs
    /// `auth: true`.
    pub listen: String,
    /// Require a token (`Authorization: Bearer …`) on every request but `/healthz` and
    /// `/v1/openapi.json`, and enforce roles and teams. Default false: then the API answers
    /// anyone who reaches it, so it may listen on loopback only. Tokens are made with
    /// `turnpike token create` on the host.
    pub auth: bool,
    /// Kept so that old configs still parse: it no longer opens a non-loopback address
    /// without `auth` (it is refused, with a message saying how to enable auth).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub allow_remote: bool,
    /// Serve HTTPS with this certificate and key (PEM files, relative to the config file).
    /// Default: plain HTTP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls: Option<AdminTls>,
    /// Host names the API answers to (the request's `Host` header) besides the listen address
    /// itself and, on loopback, `localhost`: e.g. the name of a reverse proxy. Requests naming
    /// any other host are refused, which defeats DNS rebinding.
    pub hosts: Vec<String>,
    /// Web origins (`https://console.example.com`) allowed to send state-changing requests
    /// besides the API's own; browsers' cross-site requests from anywhere else are refused.
    pub origins: Vec<String>,
    /// Bounds on requests.
    pub limits: ApiLimits,
}

impl Default for AdminConfig {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:8080".to_owned(),
            auth: false,
            allow_remote: false,
            tls: None,
            hosts: Vec::new(),
            origins: Vec::new(),
            limits: ApiLimits::default(),
        }
    }
}

/// The admin API's TLS certificate and key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdminTls {
    /// The certificate chain, PEM, leaf first.
    pub cert_file: std::path::PathBuf,
    /// The private key, PEM (PKCS#8, PKCS#1 or SEC1).
    pub key_file: std::path::PathBuf,
}

/// Bounds on what one request, or all of them, may cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ApiLimits {
    /// Largest JSON body (connectors, validations, dry runs, offset resets), in KiB. Default
    /// 1,024; 1 to 65,536.
    pub max_json_body_kib: Ranged<1, 65_536>,
    /// Largest uploaded component, in MiB. Default 50; 1 to 1,024.
    pub max_upload_mib: Ranged<1, 1_024>,
    /// Time a client may take to send a request head, in seconds. Default 10; 1 to 600.
    pub header_timeout_s: Ranged<1, 600>,
    /// Time a request may take from its head to the start of the answer (body upload
    /// included), in seconds. Default 120; 1 to 3,600.
    pub request_timeout_s: Ranged<1, 3_600>,
    /// Connections open at once. Default 256; 1 to 65,536.
    pub max_connections: Ranged<1, 65_536>,
}

impl Default for ApiLimits {
    fn default() -> Self {
        Self {
            max_json_body_kib: Ranged::constant(1_024),
            max_upload_mib: Ranged::constant(50),
            header_timeout_s: Ranged::constant(10),
            request_timeout_s: Ranged::constant(120),
            max_connections: Ranged::constant(256),
        }
    }
}

impl AdminConfig {
    /// Problems with these settings, each with its key.
    pub fn validate(&self) -> Vec<Problem> {
        let mut problems = Vec::new();
        match self.listen.parse::<SocketAddr>() {
            Err(_) => problems.push(Problem::new("admin.listen", format!("{:?} is not an address like `127.0.0.1:8080`", self.listen))),
            Ok(address) => {
                if let Err(why) = check_listen(address, self.auth) {
                    problems.push(Problem::new("admin.listen", why));
                }
            }
        }
        for (i, origin) in self.origins.iter().enumerate() {
            if !(origin.starts_with("http://") || origin.starts_with("https://")) || origin.ends_with('/') {
                problems.push(Problem::new(format!("admin.origins[{i}]"), format!("{origin:?} is not an origin like `https://console.example.com`")));
            }
        }
        for (i, host) in self.hosts.iter().enumerate() {
            if host.is_empty() || host.contains(['/', ' ', '@']) {
                problems.push(Problem::new(format!("admin.hosts[{i}]"), format!("{host:?} is not a host name like `turnpike.internal` (a port is optional)")));
            }
        }
        problems
    }
}

/// Refuses a non-loopback listen address without authentication: anyone on the network could
/// upload code and read every topic through a connector.
pub fn check_listen(address: SocketAddr, auth: bool) -> Result<(), String> {
    if address.ip().is_loopback() || auth {
        Ok(())
    } else {
        Err(format!(
            "{address} is reachable from other machines, and the admin API has no authentication: listen on 127.0.0.1, or set `admin.auth: true` and create an admin token on the host with `turnpike token create --role admin -c <config>`"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_listen_address_needs_an_explicit_yes() {
        let open = AdminConfig { listen: "0.0.0.0:8080".into(), ..AdminConfig::default() };
        let problems = open.validate();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].key, "admin.listen");
        assert!(problems[0].message.contains("admin.auth: true"), "{}", problems[0].message);
        assert_eq!(AdminConfig { allow_remote: true, ..open.clone() }.validate().len(), 1, "allow_remote alone no longer opens it");
        assert!(AdminConfig { auth: true, ..open }.validate().is_empty());
        assert!(AdminConfig { listen: "[::1]:9000".into(), ..AdminConfig::default() }.validate().is_empty());
    }

    #[test]
    fn bad_origins_and_hosts_are_named() {
        let c = AdminConfig { origins: vec!["console.example.com".into()], hosts: vec!["a/b".into()], ..AdminConfig::default() };
        let keys: Vec<_> = c.validate().into_iter().map(|p| p.key).collect();
        assert_eq!(keys, ["admin.origins[0]", "admin.hosts[0]"]);
    }
}
