//! The registration checks of `api` actions: where a target may send a
//! request (and the API client's credentials with it), and whether a
//! `GET` or `DELETE` can carry the action's data.
//!
//! A target is judged as text, before any URL parser sees it, and only
//! plain forms pass: a relative path (`tasks/complete`, `./x`, `?q=1`,
//! `/v1/tasks` when that stays below the base URL's path), or an absolute
//! `http(s)://` URL whose origin the API client allows. Everything a
//! parser could read as another host or another path is refused, however
//! it is spelled: `//host/x`, `\\host\x`, `\t//host` (parsers drop tabs
//! and trim spaces), userinfo, other schemes, `..` segments, and the
//! encodings `%2e`, `%2f` and `%5c` that a server may decode into them.

use objectstack_spec::json;
use serde_json::{Map, Value};

use crate::redact;

/// Where the `api` actions of a stack may send requests, and so the API
/// client's credentials: the client's base URL and the other origins it
/// allows. A runtime takes it from its API client
/// ([`ApiClient::scope`](crate::runtime::ApiClient::scope)).
///
/// Every target must be a relative reference that stays below the base
/// URL, or an absolute `http`/`https` URL on one of `allowed_origins`;
/// [`check`](Self::check) says why one is not. The default (no base URL,
/// no other origin) applies the rules that need no base: a relative
/// target that names no host, no scheme and no `..`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ApiScope<'a> {
    /// The base URL relative targets resolve against
    /// (`https://api.example.com/v1/`), when known. A target starting with
    /// `/` must then stay below its path (`/v1/...`). Its userinfo, if any,
    /// is never repeated in a reason.
    pub base_url: Option<&'a str>,
    /// Other origins an absolute target may name, as an origin is written:
    /// `scheme://host[:port]`, lower case, the default port left out, no
    /// path (`https://hooks.example.com`). The target must start with the
    /// origin and then `/`. Requests there carry no credentials.
    pub allowed_origins: &'a [String],
}

impl ApiScope<'_> {
    /// `Ok` when a request to `target` stays where the API client's
    /// credentials belong; otherwise what is wrong with it and how to fix
    /// it (the target is quoted with its userinfo redacted).
    pub fn check(&self, target: &str) -> Result<(), String> {
        let shown = visible(&redact::url(target));
        let refuse = |what: &str, fix: &str| {
            Err(format!(
                "the api `target` `{shown}` {what}: the request, with the API client's \
                 credentials, could go to another server or path than the base URL; {fix}"
            ))
        };
        let relative = "write a path relative to the base URL (`tasks/complete`)";
        if target.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return refuse(
                "contains a space or a control character, which URL parsers trim or drop (`\\t//host` \
                 reads as `//host`)",
                "percent-encode it, or write a plain relative path",
            );
        }
        if target.contains('\\') {
            return refuse(
                "contains a backslash, which URL parsers read as `/` (`\\\\host\\x` names a host)",
                relative,
            );
        }
        if target.starts_with("//") {
            return refuse(
                "is scheme-relative (`//host/...`): it names its own host",
                relative,
            );
        }
        let path = match scheme(target) {
            None => target,
            Some(scheme) => {
                let Some(rest) = target
                    .get(scheme.len()..)
                    .and_then(|r| r.strip_prefix("://"))
                else {
                    return refuse(
                        &format!(
                            "starts with `{scheme}:`, which reads as a URL scheme (a first path \
                             segment holding `:`)"
                        ),
                        "write it as `./` and the path, or as a full http(s) URL on an allowed \
                         origin",
                    );
                };
                if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
                    return refuse(
                        &format!("uses the `{scheme}:` scheme, and only http and https are sent"),
                        relative,
                    );
                }
                let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
                let authority = rest.get(..authority_end).unwrap_or(rest);
                if authority.contains('@') {
                    return refuse(
                        "carries userinfo (credentials in the URL)",
                        "give the API client its credentials in its configuration, and write a \
                         path relative to the base URL",
                    );
                }
                let origin_len = scheme.len() + 3 + authority_end;
                let origin = target.get(..origin_len).unwrap_or(target);
                let allowed = self.allowed_origins.iter().any(|o| o == origin)
                    && target
                        .get(origin_len..)
                        .is_none_or(|r| r.is_empty() || r.starts_with('/'));
                if !allowed {
                    return refuse(
                        &format!(
                            "is an absolute URL on `{origin}`, an origin the API client does not \
                             allow"
                        ),
                        "write a path relative to the base URL, or add the origin to the API \
                         client's allowed origins",
                    );
                }
                target.get(origin_len..).unwrap_or_default()
            }
        };
        let path = path.split(['?', '#']).next().unwrap_or_default();
        if path.split('/').any(is_double_dot) {
            return refuse(
                "climbs out of the base path with a `..` segment",
                "write the path from the base URL down, without `..`",
            );
        }
        let lower = path.to_ascii_lowercase();
        if lower.contains("%2f") || lower.contains("%5c") || lower.contains("%2e") {
            return refuse(
                "contains an encoded dot, slash or backslash (`%2E`, `%2F`, `%5C`), which a \
                 server may decode into a path that leaves the base",
                "write the path plainly",
            );
        }
        if scheme(target).is_none()
            && path.starts_with('/')
            && let Some(base) = self.base_url
        {
            let dir = base_dir(base);
            if !path.starts_with(dir) {
                return refuse(
                    &format!("starts with `/` and leaves the base URL's path `{dir}`"),
                    &format!("write a path relative to the base URL, or one starting with `{dir}`"),
                );
            }
        }
        Ok(())
    }
}

/// `s` with its control characters escaped (`\t`, `\n`, `\u{1b}`), so a
/// reason shows what a parser would see.
fn visible(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// The scheme of `s` when it starts with one (`ftp` in `ftp://x`, `tasks`
/// in `tasks:complete`): a letter, then letters, digits, `+`, `-` or `.`,
/// then `:`.
fn scheme(s: &str) -> Option<&str> {
    let end = s.find(':')?;
    let candidate = s.get(..end)?;
    let mut chars = candidate.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then_some(candidate)
}

/// A path segment URL parsers read as `..`: `..`, `.%2e`, `%2e.` or
/// `%2e%2e`, in any case.
fn is_double_dot(segment: &str) -> bool {
    let lower = segment.to_ascii_lowercase();
    matches!(lower.as_str(), ".." | ".%2e" | "%2e." | "%2e%2e")
}

/// The directory of a base URL's path: up to and including its last `/`
/// (`/v1/` for `https://h/v1/x?q`), `/` when it has none.
fn base_dir(base: &str) -> &str {
    let after_scheme = base.find("://").map_or(0, |i| i + 3);
    let rest = base.get(after_scheme..).unwrap_or_default();
    let Some(path_start) = rest.find(['/', '?', '#']) else {
        return "/";
    };
    let path = rest.get(path_start..).unwrap_or_default();
    let path = path.split(['?', '#']).next().unwrap_or_default();
    match path.rfind('/') {
        Some(i) => path.get(..=i).unwrap_or("/"),
        None => "/",
    }
}

/// The method of an `api` action, upper case (`POST` when it names none),
/// as the runtime sends it.
pub(crate) fn method_of(method: Option<&str>) -> String {
    method
        .filter(|m| !m.is_empty())
        .map_or_else(|| "POST".to_owned(), str::to_ascii_uppercase)
}

/// Whether an `api` action with this method sends its data in the query
/// string rather than a body (`GET`, `DELETE`).
pub(crate) fn sends_query(method: &str) -> bool {
    method == "GET" || method == "DELETE"
}

/// Why a `GET` or `DELETE` `api` action cannot carry its data in a query
/// string, if it cannot: its body shape nests the params, a `bodyExtra`
/// constant is not a scalar (or a list of scalars), or it is a row action
/// whose record id has no `recordIdParam` to go in.
pub(crate) fn unsendable(action: &json::Map<'_>, row_context: bool) -> Option<String> {
    let method = method_of(action.get("method").and_then(json::Value::as_str));
    if !sends_query(&method) {
        return None;
    }
    let because = |what: String| {
        Some(format!(
            "a `{method}` sends no body, so the bridge sends the action's data in the query \
             string, and {what}; the request would not carry what is approved"
        ))
    };
    let wrap = action
        .get("bodyShape")
        .and_then(json::Value::as_object)
        .and_then(|s| s.get("wrap"))
        .and_then(json::Value::as_str)
        .filter(|w| !w.is_empty());
    if let Some(wrap) = wrap {
        return because(format!(
            "a query cannot nest the params under `bodyShape.wrap` (`{}`): remove `bodyShape`, \
             or use a method with a body",
            visible(wrap)
        ));
    }
    if let Some(extra) = action.get("bodyExtra").and_then(json::Value::as_object) {
        for (key, value) in extra.iter() {
            if !fits_query_value(value) {
                return because(format!(
                    "`bodyExtra.{}` is not a string, number, boolean or list of them: make it \
                     one, or use a method with a body",
                    visible(key)
                ));
            }
        }
    }
    let record_id_param = action
        .get("recordIdParam")
        .and_then(json::Value::as_str)
        .filter(|p| !p.is_empty());
    if row_context && record_id_param.is_none() {
        return because(
            "the record id of this row action would go nowhere: set `recordIdParam` to the \
             query parameter that carries it"
                .to_owned(),
        );
    }
    None
}

/// Why a host's `parameters` schema for a `GET` or `DELETE` `api` action
/// declares arguments a query string cannot carry, if it does: a property
/// typed `object`, or an array whose `items` are typed `object` or
/// `array`. (Values the schema leaves open are checked when the call is
/// made: one that does not fit is an error, never dropped.)
// Only the runtime (`register_action`) refuses such a host definition.
#[cfg_attr(not(feature = "runtime"), allow(dead_code))]
pub(crate) fn unsendable_parameters(parameters: &Map<String, Value>) -> Option<String> {
    // Whether a `type` (a name or a list of names) admits one of `names`.
    let admits = |t: Option<&Value>, names: &[&str]| match t {
        Some(Value::String(t)) => names.contains(&t.as_str()),
        Some(Value::Array(types)) => types
            .iter()
            .any(|t| t.as_str().is_some_and(|t| names.contains(&t))),
        _ => false,
    };
    let properties = parameters.get("properties").and_then(Value::as_object)?;
    for (name, schema) in properties {
        let ty = schema.get("type");
        let nested = admits(ty, &["object"])
            || (admits(ty, &["array"])
                && admits(
                    schema.get("items").and_then(|i| i.get("type")),
                    &["object", "array"],
                ));
        if nested {
            return Some(format!(
                "a `GET` or `DELETE` sends its data in the query string, and parameter `{}` is \
                 declared as an object or a list of lists or objects, which a query cannot \
                 carry: make it a string, number, boolean or list of them, or use a method with \
                 a body",
                visible(name)
            ));
        }
    }
    None
}

/// A value a query string can carry: a scalar, `null` (left out), or a
/// list of scalars (one pair each).
fn fits_query_value(value: &json::Value<'_>) -> bool {
    match value {
        json::Value::Array(items) => items
            .iter()
            .all(|v| !matches!(v, json::Value::Array(_) | json::Value::Object(_))),
        json::Value::Object(_) => false,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope<'a>(base: &'a str, allowed: &'a [String]) -> ApiScope<'a> {
        ApiScope {
            base_url: Some(base),
            allowed_origins: allowed,
        }
    }

    #[test]
    fn plain_relative_targets_pass() {
        let s = scope("https://api.example.com/v1/", &[]);
        for t in [
            "tasks/complete",
            "./tasks",
            "tasks?status=open&x=a@b",
            "?q=1",
            "/v1/tasks",
            "/v1/",
            "tasks/./x",
            "1a:b",
            "tasks/a%20b",
            "users/a@b.example",
        ] {
            assert_eq!(s.check(t), Ok(()), "{t}");
            assert_eq!(ApiScope::default().check(t), Ok(()), "{t}");
        }
    }

    #[test]
    fn targets_that_could_leave_are_refused_with_why() {
        let s = scope("https://api.example.com/v1/", &[]);
        for (t, why) in [
            ("//evil.example/x", "scheme-relative"),
            ("\\\\evil.example\\x", "backslash"),
            ("/\\evil.example/x", "backslash"),
            (" //evil.example/x", "space or a control character"),
            ("\t//evil.example/x", "control character"),
            ("/\n/evil.example/x", "control character"),
            (
                "https://evil.example/x",
                "absolute URL on `https://evil.example`",
            ),
            ("HTTP://evil.example", "absolute URL"),
            ("http://user:pw@evil.example/", "userinfo"),
            ("ftp://evil.example/x", "`ftp:` scheme"),
            ("javascript:alert(1)", "reads as a URL scheme"),
            ("tasks:complete", "reads as a URL scheme"),
            ("http:evil.example/x", "reads as a URL scheme"),
            ("../../admin/x", "`..` segment"),
            ("a/../../x", "`..` segment"),
            ("%2e%2e/admin", "`..` segment"),
            (".%2E/admin", "`..` segment"),
            ("tasks/..%2f..%2fadmin", "encoded dot, slash or backslash"),
            ("tasks/%5c", "encoded"),
            ("/admin/x", "leaves the base URL's path `/v1/`"),
            ("/v1", "leaves the base URL's path"),
        ] {
            let err = s.check(t).expect_err(t);
            assert!(err.contains(why), "{t:?}: {err}");
        }
    }

    #[test]
    fn reasons_show_the_target_as_written_with_control_characters_escaped() {
        let err = ApiScope::default().check("\\\\evil\\x").unwrap_err();
        assert!(
            err.starts_with("the api `target` `\\\\evil\\x` contains"),
            "{err}"
        );
        let err = ApiScope::default().check("\t//evil\u{1b}[2J").unwrap_err();
        assert!(
            err.starts_with("the api `target` `\\t//evil\\u{1b}[2J` contains"),
            "{err}"
        );
    }

    #[test]
    fn reasons_never_repeat_userinfo() {
        let err = ApiScope::default()
            .check("http://svc:TOPSECRET@evil.example/x")
            .unwrap_err();
        assert!(!err.contains("TOPSECRET"), "{err}");
        assert!(err.contains("http://***@evil.example/x"), "{err}");
    }

    #[test]
    fn an_allowed_origin_admits_absolute_targets_there_only() {
        let allowed = ["https://hooks.example.com".to_owned()];
        let s = scope("https://api.example.com/v1/", &allowed);
        assert_eq!(s.check("https://hooks.example.com/in/1"), Ok(()));
        assert_eq!(s.check("https://hooks.example.com"), Ok(()));
        for t in [
            "https://hooks.example.com.evil.example/x",
            "https://hooks.example.com:444/x",
            "http://hooks.example.com/x",
            "https://u@hooks.example.com/x",
            "https://hooks.example.com/../x",
            "https://hooks.example.com/%2e%2e/x",
            "https://api.example.com/v1/x",
        ] {
            assert!(s.check(t).is_err(), "{t}");
        }
    }

    #[test]
    fn the_base_directory_is_the_path_up_to_its_last_slash() {
        assert_eq!(base_dir("https://h/v1/"), "/v1/");
        assert_eq!(base_dir("https://h/v1/x?q=/a/"), "/v1/");
        assert_eq!(base_dir("https://h"), "/");
        assert_eq!(base_dir("https://u:p@h:8/a/b"), "/a/");
        assert_eq!(base_dir("https://h?x"), "/");
        let root = scope("https://h", &[]);
        assert_eq!(root.check("/anything/at/all"), Ok(()));
    }

    #[test]
    fn query_data_checks() {
        let arena = json::Arena::new();
        let check = |text: &str, row: bool| {
            let map = json::parse_document(text.as_bytes(), &arena).unwrap();
            unsendable(map, row)
        };
        assert_eq!(
            check(r#"{"method": "POST", "bodyShape": {"wrap": "d"}}"#, true),
            None
        );
        assert_eq!(
            check(r#"{"bodyShape": {"wrap": "d"}}"#, true),
            None,
            "POST by default"
        );
        assert!(check(r#"{"method": "get", "bodyShape": {"wrap": "d"}}"#, false).is_some());
        assert!(
            check(
                r#"{"method": "DELETE", "bodyExtra": {"f": {"a": 1}}}"#,
                false
            )
            .is_some()
        );
        assert!(check(r#"{"method": "DELETE", "bodyExtra": {"f": [[1]]}}"#, false).is_some());
        assert_eq!(
            check(
                r#"{"method": "GET", "bodyExtra": {"f": [1, "a", null], "g": true}}"#,
                false
            ),
            None
        );
        let row = check(r#"{"method": "DELETE"}"#, true).unwrap();
        assert!(row.contains("recordIdParam"), "{row}");
        assert_eq!(
            check(r#"{"method": "DELETE", "recordIdParam": "id"}"#, true),
            None
        );
        assert_eq!(check(r#"{"method": "DELETE"}"#, false), None);
    }

    #[test]
    fn host_parameters_must_fit_a_query() {
        let schema = |props: Value| {
            let mut m = Map::new();
            m.insert("properties".into(), props);
            m
        };
        assert_eq!(
            unsendable_parameters(&schema(serde_json::json!({
                "recordId": {"type": "string"}, "n": {"type": "integer"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "open": {"type": "array"}, "any": {},
                "maybe": {"type": ["string", "null"]}
            }))),
            None
        );
        for bad in [
            serde_json::json!({"f": {"type": "object"}}),
            serde_json::json!({"f": {"type": ["object", "null"]}}),
            serde_json::json!({"f": {"type": "array", "items": {"type": "object"}}}),
            serde_json::json!({"f": {"type": "array", "items": {"type": ["array"]}}}),
        ] {
            assert!(
                unsendable_parameters(&schema(bad.clone())).is_some(),
                "{bad}"
            );
        }
    }
}
