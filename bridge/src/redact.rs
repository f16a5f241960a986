//! Userinfo out of URLs before they are shown.
//!
//! A URL may carry credentials in its userinfo (`https://svc:secret@host/`);
//! a base URL configured that way is how a host gives an API basic
//! authentication. Nothing the bridge shows (errors handed to the model,
//! skip reasons, what the approval queue stores, what the CLI prints) may
//! repeat them, so every URL goes through [`url`] (one URL) or [`text`]
//! (free text that may contain URLs) first. The userinfo becomes `***`:
//! `https://***@host/`, so a reader still sees that credentials were
//! there.
//!
//! Both are pure string functions, with no URL parser: they find the
//! authority the way a URL parser does (after `://`, or after a leading
//! `//`, up to the first `/`, `\`, `?` or `#`) and cut everything up to
//! its last `@`. They err on the side of redacting: whatever precedes
//! `://` counts as a scheme.

use std::borrow::Cow;

/// What replaces the userinfo.
const MASK: &str = "***";

/// `url` with its userinfo replaced by `***`
/// (`http://svc:pw@host/x` becomes `http://***@host/x`); borrowed when it
/// has none. A scheme-relative reference (`//user@host/x`, `\\user@host`)
/// is redacted too, and so is a URL quoted inside this one
/// (`/go?to=http://u:p@h/`).
pub fn url(url: &str) -> Cow<'_, str> {
    // A URL parser skips leading spaces and control characters.
    let lead = url.len() - url.trim_start_matches(|c: char| c <= ' ').len();
    if let Some(start) = after_slashes(url, lead)
        && let Some(at) = userinfo_end(url, start)
    {
        return Cow::Owned(format!("{}{MASK}{}", &url[..start], text(&url[at..])));
    }
    text(url)
}

/// `text` with the userinfo of every URL in it replaced by `***` (see
/// [`url`]); borrowed when there is none. A URL is whatever follows a `:`
/// and two or more slashes (`/` or `\`, which URL parsers read alike).
/// For messages that quote URLs: errors from an HTTP library, a stored
/// error, a log line.
pub fn text(text: &str) -> Cow<'_, str> {
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut from = 0;
    while let Some(found) = text.get(from..).and_then(|rest| rest.find(':')) {
        let colon = from + found;
        from = colon + 1;
        let Some(start) = after_slashes(text, colon + 1) else {
            continue;
        };
        from = start;
        if let Some(at) = userinfo_end(text, start) {
            let buf = out.get_or_insert_with(|| String::with_capacity(text.len()));
            buf.push_str(&text[copied..start]);
            buf.push_str(MASK);
            copied = at;
            from = at;
        }
    }
    match out {
        Some(mut buf) => {
            buf.push_str(&text[copied..]);
            Cow::Owned(buf)
        }
        None => Cow::Borrowed(text),
    }
}

/// Where the authority starts when `s` has two or more slashes (`/` or
/// `\`) at `at`.
fn after_slashes(s: &str, at: usize) -> Option<usize> {
    let rest = s.get(at..)?;
    let run = rest.len() - rest.trim_start_matches(['/', '\\']).len();
    (run >= 2).then_some(at + run)
}

/// The byte index of the `@` that ends the userinfo of the authority
/// starting at `start`, if it has one. The authority ends at `/`, `\`,
/// `?` or `#` (as URL parsers read it), or, in running text, at a space
/// or a quote or bracket that closes the URL. Tabs and line breaks do not
/// end it: URL parsers drop them.
fn userinfo_end(s: &str, start: usize) -> Option<usize> {
    let rest = s.get(start..)?;
    let end = rest
        .find(|c: char| {
            matches!(
                c,
                '/' | '\\' | '?' | '#' | '"' | '\'' | '`' | '<' | '>' | ')' | ']'
            ) || (c.is_whitespace() && !matches!(c, '\t' | '\n' | '\r'))
        })
        .unwrap_or(rest.len());
    rest[..end].rfind('@').map(|at| start + at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_url_loses_its_userinfo() {
        assert_eq!(
            url("http://svc:TOPSECRET@api.example.com:8080/v1/?q=1"),
            "http://***@api.example.com:8080/v1/?q=1"
        );
        assert_eq!(url("https://token@h/"), "https://***@h/");
        assert_eq!(url("//u:p@evil.example/x"), "//***@evil.example/x");
        // The last `@` ends the userinfo, as URL parsers read it.
        assert_eq!(url("http://a@b:c@host/x"), "http://***@host/x");
        assert_eq!(url("http://u:p@host"), "http://***@host");
        assert_eq!(url("http://u:p@host\\x"), "http://***@host\\x");
        // What a URL parser reads as an authority, however it is written.
        assert_eq!(url("\\\\u:p@evil\\x"), "\\\\***@evil\\x");
        assert_eq!(url(" \t/\\u:p@evil/x"), " \t/\\***@evil/x");
        assert_eq!(url("http:\\\\u:p@evil"), "http:\\\\***@evil");
        assert_eq!(url("http:///u:p@evil"), "http:///***@evil");
        assert_eq!(url("http://u:p\t@evil"), "http://***@evil");
    }

    #[test]
    fn urls_without_userinfo_are_borrowed_unchanged() {
        for u in [
            "https://api.example.com/v1/",
            "tasks/complete",
            "/v1/users/a@b.example",
            "https://host/path?mail=a@b.example",
            "mailto:a@b.example",
            "",
        ] {
            assert!(matches!(url(u), Cow::Borrowed(s) if s == u), "{u}");
        }
    }

    #[test]
    fn every_url_in_a_text_loses_its_userinfo() {
        assert_eq!(
            text(
                "error sending request for url (http://svc:TOPSECRET@127.0.0.1:9/x): \
                 redirected to https://a:b@c.example/y and 'ftp://u@f/z'"
            ),
            "error sending request for url (http://***@127.0.0.1:9/x): \
             redirected to https://***@c.example/y and 'ftp://***@f/z'"
        );
        let plain = "GET https://api.example.com/x failed: user a@b.example is unknown";
        assert!(matches!(text(plain), Cow::Borrowed(_)));
        assert_eq!(text("x://@h"), "x://***@h");
        // Whatever precedes `://`: better one redaction too many.
        assert_eq!(text("://u:p@h and 1://u@h"), "://***@h and 1://***@h");
        assert_eq!(
            url("/go?to=http://u:p@h/x"),
            "/go?to=http://***@h/x",
            "a URL inside a URL"
        );
        assert_eq!(
            text("é http://ü:p@h/ ü"),
            "é http://***@h/ ü",
            "multi-byte text around the URL"
        );
    }
}
