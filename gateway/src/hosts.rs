//! Which `Host` names the HTTP listener answers to (DNS-rebinding
//! protection), read the way rmcp reads them for `/mcp`, so the JSON
//! approvals API and the inbox accept exactly what `/mcp` accepts; and
//! which browser `Origin`s it answers (MCP's Streamable HTTP transport:
//! a request whose `Origin` is present and not valid gets 403).
//!
//! An allowed entry is `name`, `name:port`, `[v6]` or `[v6]:port`: a name
//! (compared without brackets and case) with any port, or with that port
//! only. An empty list allows every name, as rmcp's does. The inbox's
//! public URL (`--public-url`) is allowed by its name, whatever the port.
//!
//! An `Origin` is valid when its host would be an allowed `Host` (a page
//! the gateway itself serves, or a local tool on a loopback port), or when
//! it is one of the origins allowed by name (`--allowed-origin`). A request
//! without `Origin` (every non-browser client) is not affected.

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
    answers(allowed, public_url, &host)
}

/// Whether `host` matches an entry of `allowed` or names `public_url`'s
/// host.
fn answers(allowed: &[String], public_url: Option<&str>, host: &Named) -> bool {
    allowed
        .iter()
        .filter_map(|a| entry(a))
        .any(|a| a.name == host.name && a.port.is_none_or(|p| host.port == Some(p)))
        || public_url
            .and_then(url_name)
            .is_some_and(|name| name == host.name)
}

/// An origin as compared: `scheme://host[:port]`, the scheme and host in
/// lower case, IPv6 in brackets, a default port (80 for http, 443 for
/// https) left out. `None` when `origin` is not one (`null`, a path, no
/// host).
pub(crate) fn normal_origin(origin: &str) -> Option<String> {
    let (scheme, authority) = origin.trim().split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if !matches!(scheme.as_str(), "http" | "https") || authority.contains(['/', '?', '#', '@']) {
        return None;
    }
    let authority = Authority::try_from(authority).ok()?;
    let host = authority.host().to_ascii_lowercase();
    let default = if scheme == "https" { 443 } else { 80 };
    Some(match authority.port_u16() {
        Some(port) if port != default => format!("{scheme}://{host}:{port}"),
        _ => format!("{scheme}://{host}"),
    })
}

/// An origin as [`crate::Config::allowed_origins`] takes it (see
/// [`normal_origin`]), or why `text` is not one.
pub fn parse_origin(text: &str) -> Result<String, String> {
    normal_origin(text).ok_or_else(|| {
        format!(
            "`{}` is not an origin: write the scheme and host of the page, and its port if \
             it is not the default (`https://app.example.com`, `http://localhost:3000`), with \
             no path",
            text.escape_debug()
        )
    })
}

/// Whether a request with these headers comes from a browser page the
/// gateway answers: no `Origin` (not a browser's cross-site request), an
/// `Origin` whose host [`allowed`] would answer, or one of `origins`
/// (normalised as [`normal_origin`]). An empty `allowed` answers every
/// origin, as it answers every `Host`.
pub(crate) fn origin_allowed(
    allowed: &[String],
    origins: &[String],
    public_url: Option<&str>,
    headers: &HeaderMap,
) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    if allowed.is_empty() {
        return true;
    }
    let Some(origin) = origin.to_str().ok().and_then(normal_origin) else {
        return false;
    };
    if origins
        .iter()
        .filter_map(|o| normal_origin(o))
        .any(|o| o == origin)
    {
        return true;
    }
    origin
        .split_once("://")
        .and_then(|(_, authority)| Authority::try_from(authority).ok())
        .is_some_and(|authority| answers(allowed, public_url, &named(&authority)))
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

    fn origin(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Ok(v) = value.parse() {
            headers.insert(header::ORIGIN, v);
        }
        headers
    }

    #[test]
    fn origins_are_answered_like_their_host_or_by_name() {
        let allowed = list(&["localhost", "127.0.0.1", "gw.example.com:8443"]);
        let origins = list(&["https://App.Example.com:443"]);
        let public = Some("https://inbox.example.com/approvals/ui");
        for (value, ok) in [
            ("http://localhost:6274", true),
            ("http://127.0.0.1:8787", true),
            ("https://gw.example.com:8443", true),
            ("https://gw.example.com", false),
            ("https://app.example.com", true),
            ("https://app.example.com:8443", false),
            ("http://app.example.com", false),
            ("https://inbox.example.com", true),
            ("http://evil.example", false),
            ("http://localhost.evil.example", false),
            ("null", false),
            ("file://", false),
            ("http://user@localhost:1", false),
            ("", false),
        ] {
            let ok_now = origin_allowed(&allowed, &origins, public, &origin(value));
            assert_eq!(ok_now, ok, "{value:?}");
        }
        assert!(origin_allowed(&allowed, &[], None, &HeaderMap::new()));
        assert!(origin_allowed(
            &[],
            &[],
            None,
            &origin("http://evil.example")
        ));
    }

    #[test]
    fn origins_are_normalised() {
        assert_eq!(
            normal_origin("HTTPS://Gw.Example.com:443").as_deref(),
            Some("https://gw.example.com")
        );
        assert_eq!(
            normal_origin("http://[FD00::1]:8080").as_deref(),
            Some("http://[fd00::1]:8080")
        );
        assert_eq!(normal_origin("https://gw.example.com/x"), None);
        assert_eq!(normal_origin("ftp://gw.example.com"), None);
        assert_eq!(normal_origin("null"), None);
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
