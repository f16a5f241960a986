//! The `human` format: each finding with its source line marked, the hint
//! and the suggestion, then a summary line.

use annotate_snippets::renderer::DecorStyle;
use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};

use crate::finding::{Finding, Severity, Summary};
use crate::render::{SourceText, summary_line};

/// Options of the `human` format.
#[derive(Debug, Clone, Default)]
pub struct HumanOptions {
    /// Colour with ANSI escapes.
    pub color: bool,
}

/// Renders findings for a terminal.
pub fn human(
    findings: &[Finding],
    sources: &[SourceText<'_>],
    files: usize,
    options: &HumanOptions,
) -> String {
    let renderer = if options.color {
        Renderer::styled()
    } else {
        Renderer::plain()
    }
    .decor_style(DecorStyle::Ascii);
    let mut out = String::new();
    for f in findings {
        out.push_str(&one(&renderer, f, sources));
        out.push_str("\n\n");
    }
    out.push_str(&summary_line(&Summary::of(findings, files)));
    out.push('\n');
    out
}

fn one(renderer: &Renderer, f: &Finding, sources: &[SourceText<'_>]) -> String {
    let level = match f.severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
    };
    let title = level.primary_title(f.message.as_str()).id(f.rule.as_str());
    let label = format!("{} ({})", f.where_, f.path);
    let snippet = f.location.as_ref().and_then(|l| {
        let text = sources.iter().find(|s| s.file == l.file)?.text;
        let line_start = text.get(..l.byte_start)?.rfind('\n').map_or(0, |i| i + 1);
        let line_end = text
            .get(l.byte_start..)?
            .find('\n')
            .map_or(text.len(), |i| l.byte_start + i);
        let line = text.get(line_start..line_end)?.trim_end_matches('\r');
        let start = l.byte_start - line_start;
        let end = l.byte_end.min(line_start + line.len()).max(l.byte_start) - line_start;
        Some(
            Snippet::source(line.to_owned())
                .line_start(l.line)
                .path(l.file.clone())
                .annotation(
                    AnnotationKind::Primary
                        .span(start..end.max(start))
                        .label(label.clone()),
                ),
        )
    });
    let mut primary = Group::with_title(title);
    match snippet {
        Some(s) => primary = primary.element(s),
        None => {
            let at = match &f.location {
                Some(l) => format!("at {}:{}:{}: {label}", l.file, l.line, l.column),
                None => format!("at {label}"),
            };
            primary = primary.element(Level::NOTE.message(at));
        }
    }
    primary = primary.element(Level::HELP.message(f.hint.as_str()));
    if let Some(s) = f
        .suggestion
        .as_ref()
        .filter(|s| !f.message.contains(&format!("Did you mean \"{s}\"?")))
    {
        primary = primary.element(Level::HELP.message(format!("did you mean \"{s}\"?")));
    }
    renderer.render(&[primary])
}
