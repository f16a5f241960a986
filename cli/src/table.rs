//! Plain-text tables for the human views.

/// `text` left-aligned in `width` characters. (A `{:<w$}` width above
/// `u16::MAX` panics, and a stored id or a document's name can be that
/// long.)
pub(crate) fn pad(text: &str, width: usize) -> String {
    let fill = width.saturating_sub(text.chars().count());
    let mut out = String::with_capacity(text.len() + fill);
    out.push_str(text);
    out.extend(std::iter::repeat_n(' ', fill));
    out
}

#[cfg(test)]
mod tests {
    use super::pad;

    #[test]
    fn pads_by_characters_and_never_truncates() {
        assert_eq!(pad("é", 3), "é  ");
        assert_eq!(pad("long", 2), "long");
        assert_eq!(pad("x", 70_000).chars().count(), 70_000);
    }
}
