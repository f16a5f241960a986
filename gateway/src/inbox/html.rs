//! HTML writing: one escaping function that every value from a stack, a
//! model, a proposer or an approver goes through, and the page frame.

use std::fmt::Write as _;

use serde_json::Value;

/// `text` escaped for HTML text and for double- or single-quoted
/// attribute values.
pub(crate) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        // Control characters other than tab and newline would be shown as
        // nothing or as garbage, and a bidirectional control or a
        // zero-width mark reorders or hides what follows it (an argument
        // could read `10 EUR` and be `1000000`): show them as what they are.
        if hidden(c) {
            let _ = write!(out, "\\u{{{:04x}}}", u32::from(c));
        } else {
            push_markup(&mut out, c);
        }
    }
    out
}

/// `text` escaped for a form control's value (an `<input>`'s `value`, a
/// `<textarea>`'s content): markup only, every other character as it is,
/// so an untouched control submits the text it was given. Pages show
/// values with [`esc`]; a control that holds characters [`esc`] would show
/// escaped says so beside it ([`hidden_characters`]).
pub(crate) fn esc_value(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        push_markup(&mut out, c);
    }
    out
}

/// Pushes `c`, as a character reference when it is markup.
fn push_markup(out: &mut String, c: char) {
    match c {
        '&' => out.push_str("&amp;"),
        '<' => out.push_str("&lt;"),
        '>' => out.push_str("&gt;"),
        '"' => out.push_str("&quot;"),
        '\'' => out.push_str("&#39;"),
        c => out.push(c),
    }
}

/// Whether [`esc`] shows `c` as an escape.
fn hidden(c: char) -> bool {
    objectstack_spec::text::is_terminal_unsafe(c) && c != '\n' && c != '\t'
}

/// Whether `text` holds a character [`esc`] shows as an escape (a control
/// other than tab and newline, a bidirectional control, a zero-width mark).
pub(crate) fn hidden_characters(text: &str) -> bool {
    text.chars().any(hidden)
}

/// A JSON value pretty-printed, escaped, for a `<pre>`.
pub(crate) fn pretty(value: &Value) -> String {
    esc(&serde_json::to_string_pretty(value).unwrap_or_default())
}

/// A JSON value on one line (strings without their quotes), escaped.
pub(crate) fn compact(value: &Value) -> String {
    match value {
        Value::String(s) => esc(s),
        other => esc(&other.to_string()),
    }
}

/// A duration in milliseconds, as a person reads it: `45 s`, `12 min`,
/// `3 h 5 min`, `2 d 4 h`.
pub(crate) fn span(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min", s / 60),
        3600..86_400 => {
            let (h, m) = (s / 3600, (s % 3600) / 60);
            if m == 0 {
                format!("{h} h")
            } else {
                format!("{h} h {m} min")
            }
        }
        _ => {
            let (d, h) = (s / 86_400, (s % 86_400) / 3600);
            if h == 0 {
                format!("{d} d")
            } else {
                format!("{d} d {h} h")
            }
        }
    }
}

/// A time as UTC text, `2026-12-01 10:52 UTC`, inside a `<time>` element
/// carrying the exact RFC 3339 value.
pub(crate) fn time(ms: i64) -> String {
    let exact = objectstack_bridge::approval::format_timestamp(ms);
    let shown = exact.get(..16).unwrap_or(&exact).replace('T', " ");
    format!("<time datetime=\"{exact}\">{shown} UTC</time>")
}

/// The page frame: title, the signed-in bar, the flash message, the body.
pub(crate) struct Page<'a> {
    /// The `<title>` and `<h1>`.
    pub(crate) title: &'a str,
    /// Who is signed in (shown with a sign-out button), with the session's
    /// CSRF token.
    pub(crate) signed_in: Option<(&'a str, &'a str)>,
    /// A message about the last decision: (is it an error, text).
    pub(crate) flash: Option<(bool, &'a str)>,
    /// The main content, already HTML.
    pub(crate) body: String,
}

impl Page<'_> {
    /// The whole document.
    pub(crate) fn render(&self) -> String {
        let mut out = String::with_capacity(self.body.len() + 2048);
        let _ = write!(
            out,
            "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{title} · ObjectStack approvals</title>\n\
             <link rel=\"stylesheet\" href=\"/approvals/ui/style.css\">\n</head>\n<body>\n\
             <a class=\"skip\" href=\"#main\">Skip to the content</a>\n\
             <header class=\"bar\"><a class=\"home\" href=\"/approvals/ui\">ObjectStack approvals</a>",
            title = esc(self.title)
        );
        if let Some((who, csrf)) = self.signed_in {
            let _ = write!(
                out,
                "<form class=\"signout\" method=\"post\" action=\"/approvals/ui/sign-out\">\
                 <span>Signed in as <strong>{who}</strong></span> \
                 <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
                 <button type=\"submit\">Sign out</button></form>",
                who = esc(who),
                csrf = esc(csrf)
            );
        }
        out.push_str("</header>\n<main id=\"main\" tabindex=\"-1\">\n");
        let _ = writeln!(out, "<h1>{}</h1>", esc(self.title));
        if let Some((error, text)) = self.flash {
            let (class, role) = if error {
                ("flash error", "alert")
            } else {
                ("flash ok", "status")
            };
            let _ = writeln!(
                out,
                "<p class=\"{class}\" role=\"{role}\">{}</p>",
                esc(text)
            );
        }
        out.push_str(&self.body);
        out.push_str("</main>\n</body>\n</html>\n");
        out
    }
}

/// The stylesheet (served at `/approvals/ui/style.css`, so the pages need
/// no inline style and the content security policy can forbid it).
pub(crate) const STYLE: &str = r#"
:root { color-scheme: light; --fg: #1a1a1a; --muted: #555; --line: #d0d0d0; --accent: #0b57d0;
        --ok: #0a6b2d; --bad: #a51d1d; --warn: #8a5a00; --bg: #fafafa; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 1rem; top: 1rem; background: #fff; padding: .5rem; z-index: 2; }
.bar { display: flex; justify-content: space-between; align-items: center; gap: 1rem;
       padding: .6rem 1.5rem; background: #fff; border-bottom: 1px solid var(--line); }
.home { font-weight: 600; text-decoration: none; color: var(--fg); }
.signout { display: flex; gap: .6rem; align-items: center; margin: 0; }
main { max-width: 70rem; margin: 0 auto; padding: 1rem 1.5rem 3rem; }
main:focus { outline: none; }
h1 { font-size: 1.6rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.25rem; margin: 2rem 0 .75rem; }
h3 { font-size: 1.1rem; margin: 0 0 .25rem; }
.flash { padding: .6rem .9rem; border-radius: 6px; border: 1px solid; }
.flash.ok { color: var(--ok); background: #eef8f0; }
.flash.error { color: var(--bad); background: #fbeeee; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 1rem 1.2rem;
        margin: 0 0 1rem; }
.card.doubt { border-color: var(--warn); border-left-width: 6px; }
.tool { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; color: var(--muted);
        font-size: .9rem; }
.desc { margin: .25rem 0 .75rem; color: var(--muted); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: 0 0 .75rem; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
pre { background: #f3f3f3; border: 1px solid var(--line); border-radius: 6px; padding: .6rem .8rem;
      overflow-x: auto; font-size: .9rem; margin: .25rem 0 .75rem; white-space: pre-wrap; }
.decide { display: flex; flex-wrap: wrap; gap: 1rem; align-items: flex-end; }
.decide form { display: flex; gap: .5rem; align-items: flex-end; flex-wrap: wrap; margin: 0; }
label { display: block; font-weight: 600; }
.hint { display: block; font-weight: normal; color: var(--muted); font-size: .9rem; }
input[type=text], input[type=password], input[type=number], input[type=email], input[type=url],
input[type=date], select, textarea { font: inherit; padding: .35rem .5rem; border: 1px solid #888;
      border-radius: 4px; min-width: 16rem; max-width: 100%; }
textarea { width: 100%; min-height: 4.5rem; font-family: ui-monospace, Menlo, monospace; }
button, .button { font: inherit; padding: .4rem .9rem; border-radius: 4px; border: 1px solid #666;
      background: #fff; cursor: pointer; text-decoration: none; color: var(--fg); display: inline-block; }
button.primary { background: var(--accent); color: #fff; border-color: var(--accent); }
button.danger { color: var(--bad); border-color: var(--bad); }
:focus-visible { outline: 3px solid #f5a623; outline-offset: 2px; }
.field { margin: 0 0 1rem; }
.req { color: var(--bad); font-weight: normal; }
fieldset { border: 1px solid var(--line); border-radius: 6px; margin: 0 0 1rem; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; }
td.outcome-executed, td.outcome-approved { color: var(--ok); }
td.outcome-failed, td.outcome-rejected { color: var(--bad); }
td.outcome-expired, td.outcome-in_doubt { color: var(--warn); }
del { background: #fbeeee; color: var(--bad); }
ins { background: #eef8f0; color: var(--ok); text-decoration: none; }
.badge { display: inline-block; padding: 0 .5rem; border-radius: 999px; font-size: .85rem;
         border: 1px solid currentColor; }
.badge.warn { color: var(--warn); }
.empty { color: var(--muted); }
label.check { display: block; font-weight: normal; margin: .15rem 0; }
.field input[type=text], .field input[type=email], .field input[type=url] { width: min(40rem, 100%); }
ul.sections { display: flex; flex-wrap: wrap; gap: .4rem 1.5rem; list-style: none; padding: 0; margin: 0 0 .5rem; }
caption.skip:focus { position: static; }
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_markup_character_is_escaped() {
        assert_eq!(
            esc(r#"<script>alert("x") & 'y'</script>"#),
            "&lt;script&gt;alert(&quot;x&quot;) &amp; &#39;y&#39;&lt;/script&gt;"
        );
        assert_eq!(esc("a\u{1b}[2Jb\nc"), "a\\u{001b}[2Jb\nc");
        // What reorders or hides text is shown, not obeyed.
        assert_eq!(
            esc("refund 10 EUR \u{202e}0000001 RUE"),
            "refund 10 EUR \\u{202e}0000001 RUE"
        );
        assert_eq!(esc("ad\u{200b}min\u{2066}"), "ad\\u{200b}min\\u{2066}");
        assert_eq!(compact(&Value::from("<b>")), "&lt;b&gt;");
        assert_eq!(
            pretty(&serde_json::json!({"k": "</pre>"})),
            "{\n  &quot;k&quot;: &quot;&lt;/pre&gt;&quot;\n}"
        );
    }

    #[test]
    fn spans_read_like_a_person_says_them() {
        assert_eq!(span(-5), "0 s");
        assert_eq!(span(45_000), "45 s");
        assert_eq!(span(12 * 60_000 + 59_000), "12 min");
        assert_eq!(span(3 * 3_600_000), "3 h");
        assert_eq!(span(3 * 3_600_000 + 5 * 60_000), "3 h 5 min");
        assert_eq!(span(2 * 86_400_000 + 4 * 3_600_000), "2 d 4 h");
    }

    #[test]
    fn times_carry_the_exact_value() {
        assert_eq!(
            time(1_735_689_599_999),
            "<time datetime=\"2024-12-31T23:59:59.999Z\">2024-12-31 23:59 UTC</time>"
        );
    }
}
