//! Which `Host` names the HTTP listener answers to (DNS-rebinding
//! protection), read the way rmcp reads them for `/mcp`, so the JSON
//! approvals API and the inbox accept exactly what `/mcp` accepts.
//!
//! An allowed entry is `name`, `name:port`, `[v6]` or `[v6]:port`: a name
//! (compared without brackets and case) with any port, or with that port
//! only. An empty list allows every name, as rmcp's does. The inbox's
//! public URL (`--public-url`) is allowed by its name, whatever the port.

use axum::http::uri::Authority;
use axum::http::{HeaderMap, header};

/// A `Host` value's name (brackets dropped, lower case) and port.
#[derive(Debug, PartialEq, Eq)]
struct Named {
    name: String,
    port: Option<u16>,
}

/// A host name as compared: without IPv6 brackets, in lower case.
fn bare(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

fn named(authority: &Authority) -> Named {
    Named {
        name: bare(authority.host()),
        port: authority.port_u16(),
    }
}

/// An allowed entry as a name and optional port (`None` when blank).
fn entry(allowed: &str) -> Option<Named> {
    let allowed = allowed.trim();
    if allowed.is_empty() {
        return None;
    }
    Some(match Authority::try_from(allowed) {
        Ok(authority) => named(&authority),
        Err(_) => Named {
            name: bare(allowed),
            port: None,
        },
    })
}

/// The name of a URL's authority (`https://inbox.example.com:8443/x` →
/// `inbox.example.com`).
fn url_name(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    Authority::try_from(authority).ok().map(|a| named(&a).name)
}

/// Whether a request with these headers is one the gateway answers:
/// its `Host` matches an entry of `allowed`, or names `public_url`'s host.
/// A request without a readable `Host` is refused (unless `allowed` is
/// empty and there is no public URL to hold it to).
pub(crate) fn allowed(allowed: &[String], public_url: Option<&str>, headers: &HeaderMap) -> bool {
    if allowed.is_empty() {
        return true;
    }
    let Some(host) = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| Authority::try_from(h).ok())
        .map(|a| named(&a))
    else {
        return false;
    };
    allowed
        .iter()
        .filter_map(|a| entry(a))
        .any(|a| a.name == host.name && a.port.is_none_or(|p| host.port == Some(p)))
        || public_url
            .and_then(url_name)
            .is_some_and(|name| name == host.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Ok(v) = value.parse() {
            headers.insert(header::HOST, v);
        }
        headers
    }

    fn list(entries: &[&str]) -> Vec<String> {
        entries.iter().map(|e| (*e).to_owned()).collect()
    }

    #[test]
    fn names_match_with_any_port_and_ports_only_their_own() {
        let allowed = list(&["localhost", "gw.example.com:8443", "[fd00::1]", "::1"]);
        for (value, ok) in [
            ("localhost", true),
            ("LOCALHOST:8787", true),
            ("gw.example.com:8443", true),
            ("gw.example.com:9000", false),
            ("gw.example.com", false),
            ("[fd00::1]:9000", true),
            ("[::1]:8787", true),
            ("evil.example.com", false),
            ("localhost.evil.example.com", false),
            ("", false),
            ("local host", false),
        ] {
            assert_eq!(allowed_for(&allowed, None, value), ok, "{value:?}");
        }
    }

    fn allowed_for(allowed: &[String], public: Option<&str>, value: &str) -> bool {
        super::allowed(allowed, public, &host(value))
    }

    #[test]
    fn the_public_url_is_answered_by_name() {
        let allowed = list(&["localhost"]);
        let public = Some("https://inbox.example.com:8443/approvals/ui");
        assert!(allowed_for(&allowed, public, "inbox.example.com"));
        assert!(allowed_for(&allowed, public, "inbox.example.com:443"));
        assert!(!allowed_for(&allowed, public, "example.com"));
        let v6 = Some("https://[fd00::2]:8443/");
        assert!(allowed_for(&allowed, v6, "[fd00::2]:8443"));
    }

    #[test]
    fn no_host_is_refused_and_an_empty_list_allows_all() {
        assert!(!super::allowed(
            &list(&["localhost"]),
            None,
            &HeaderMap::new()
        ));
        assert!(super::allowed(&[], None, &host("anything.example.com")));
    }
}
