//! Running the suite: build the stack view once, run every rule, add the
//! `spec` validation diagnostics, and locate each finding in its source.

use std::sync::Arc;

use objectstack_spec::json::Map;
use objectstack_spec::path::JsonPath;
use objectstack_spec::source::{SourceIndex, Span};
use rayon::prelude::*;

use crate::finding::{Finding, Location};
use crate::rule::{Context, Hit, Pending, Site};
use crate::rules::RULES;
use crate::stack::Stack;

/// One stack document to lint.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    /// The file name findings report (use a path relative to the working
    /// directory for SARIF and GitHub output).
    pub file: &'a str,
    /// The text the document was parsed from, to locate findings; `None`
    /// leaves findings without a location.
    pub text: Option<&'a str>,
    /// The parsed top-level object.
    pub root: &'a Map<'a>,
}

/// Lints one stack; findings carry their rules' default severities (see
/// [`crate::Config::apply`]) and come in upstream's order: document
/// order, with map-form collections walked as JavaScript orders their keys
/// (see `order`).
pub fn lint(source: &Source<'_>) -> Vec<Finding> {
    lint_composed(std::slice::from_ref(source))
}

/// Lints several stacks independently, in parallel; one result per source,
/// in order.
pub fn lint_each(sources: &[Source<'_>]) -> Vec<Vec<Finding>> {
    sources.par_iter().map(lint).collect()
}

/// Lints the composition of several stacks as one: a skill in one file may
/// name an action of another. Each finding points into the file that holds
/// the offending value, with a path relative to that file.
///
/// Composition concatenates `skills`, `tools`, `actions`, `objects`,
/// `agents` and `flows` in file order, as upstream's `composeStacks` does
/// for the collections the rules read.
pub fn lint_composed(sources: &[Source<'_>]) -> Vec<Finding> {
    let roots: Vec<&Map<'_>> = sources.iter().map(|s| s.root).collect();
    // The rules and the `spec` validation are independent passes over the
    // same documents: run them side by side.
    let ((mut sites, mut findings), validation) = rayon::join(
        || {
            let arena = objectstack_spec::json::Arena::new();
            let stack = Stack::new(&roots, &arena);
            // The rules only read the context; each runs as its own task,
            // and their hits are joined in the suite's order. One rule a
            // task (`with_max_len(1)`): else a thread takes a run of rules,
            // and those after a long one (the reference check) wait for
            // it while the other core is free.
            let (per_rule, universe) = {
                let cx = Context::new(&stack);
                // The skills' references are resolved once, for the rules
                // that read them, before they run: no rule waits on one
                // thread while another resolves them.
                cx.references();
                let per_rule: Vec<Vec<Pending<'_>>> = RULES
                    .par_iter()
                    .with_max_len(1)
                    .map(|rule| {
                        let mut hits = Vec::new();
                        (rule.check)(&cx, &mut hits);
                        hits
                    })
                    .collect();
                (per_rule, cx.into_universe())
            };
            // Put-off hits carry what they need of the stack view: it goes
            // before the suggestion index is built.
            drop(stack);
            // The context is gone but for the universe. The suggestions
            // put-off hits wait for are looked up now, from a suggestion
            // index built in the room the context left (with every core,
            // so that no lookup waits for it), and the universe goes.
            let mut pending: Vec<Pending<'_>> =
                Vec::with_capacity(per_rule.iter().map(Vec::len).sum());
            for rule_hits in per_rule {
                pending.extend(rule_hits);
            }
            if pending.iter().any(Pending::wants_suggestion) {
                universe.prepare_suggestions();
                pending.par_iter_mut().for_each(|h| h.suggest(&universe));
            }
            drop(universe);
            // The hits put off until now are made in the room left, on
            // every core (a rule may have put off tens of thousands), and
            // collected in the suite's order. The findings go straight into
            // the vector the run returns (a batch's hits are moved there as
            // the batch is made), and their sites, a fifth of a hit's size,
            // into one beside it until the findings are located: tens of
            // thousands of findings are never held twice. Each batch is
            // freed once its hits are made.
            let total = pending.iter().map(Pending::len).sum();
            let mut sites: Vec<Site> = Vec::with_capacity(total);
            let mut findings: Vec<Finding> = Vec::with_capacity(total);
            for batch in pending {
                batch.finish_into(&mut sites, &mut findings);
            }
            (sites, findings)
        },
        || {
            sources
                .iter()
                .enumerate()
                .flat_map(|(i, source)| crate::validation::hits(i, source.root))
                .collect::<Vec<Hit>>()
        },
    );
    let files: Vec<&str> = sources.iter().map(|s| s.file).collect();
    let composed = crate::validation::compose_hits(&files, &roots);
    for hit in validation.into_iter().chain(composed) {
        sites.push(hit.site);
        findings.push(hit.finding);
    }
    locate(sources, sites, findings)
}

/// Attaches locations, sorting findings by file, then by their anchors'
/// places in upstream's walk (`order`), then by position. `sites[i]` is
/// where `findings[i]` is located.
fn locate(sources: &[Source<'_>], sites: Vec<Site>, findings: Vec<Finding>) -> Vec<Finding> {
    debug_assert_eq!(sites.len(), findings.len(), "a site for each finding");
    // Hits are grouped by source. One source (the usual case) is one group
    // already; copying tens of thousands of findings into it would cost
    // memory at the point where the run holds the most.
    let by_source: Vec<(Vec<Site>, Vec<Finding>)> = if sources.len() == 1 {
        vec![only_source(sites, findings, 0)]
    } else {
        let mut by_source: Vec<(Vec<Site>, Vec<Finding>)> = vec![Default::default(); sources.len()];
        for (site, finding) in sites.into_iter().zip(findings) {
            if let Some((sites, findings)) = by_source.get_mut(site.source) {
                sites.push(site);
                findings.push(finding);
            }
        }
        by_source
    };
    let mut out = Vec::new();
    for (source, (sites, mut hits)) in sources.iter().zip(by_source) {
        // Each finding's place in upstream's order (see `order`), with one
        // ranker per source so a large object's order is worked out once.
        // Ranking and locating read the sites independently: side by side.
        let (places, spans) = rayon::join(
            || Places::of(source.root, &sites),
            || {
                source
                    .text
                    .map(|text| locate_hits(&SourceIndex::new(text), source.root, &sites))
            },
        );
        drop(sites);
        // Every location of a source shares one copy of its file name.
        if let Some(spans) = spans {
            let file: Arc<str> = Arc::from(source.file);
            for (finding, span) in hits.iter_mut().zip(spans) {
                finding.location = span.map(|s| Location {
                    file: Arc::clone(&file),
                    line: s.line,
                    column: s.column,
                    byte_start: s.start,
                    byte_end: s.end,
                });
            }
        }
        // The order is worked out on indices and applied in place: tens of
        // thousands of findings are never held twice. The sort is stable,
        // so findings in one place keep the order the rules gave them.
        let at = |i: usize| {
            hits.get(i)
                .and_then(|f| f.location.as_ref())
                .map_or(usize::MAX, |l| l.byte_start)
        };
        let mut order: Vec<usize> = (0..hits.len()).collect();
        order.par_sort_by(|&a, &b| {
            places
                .get(a)
                .cmp(places.get(b))
                .then_with(|| at(a).cmp(&at(b)))
        });
        drop(places);
        permute(&mut hits, order);
        if out.is_empty() {
            out = hits;
        } else {
            out.extend(hits);
        }
    }
    out
}

/// The sites and findings of source `source`, in place (a run of one
/// source has no others, but a hit naming another is dropped, as a run of
/// several drops a hit naming none of them).
fn only_source(
    mut sites: Vec<Site>,
    mut findings: Vec<Finding>,
    source: usize,
) -> (Vec<Site>, Vec<Finding>) {
    if sites.iter().all(|s| s.source == source) {
        return (sites, findings);
    }
    let keep: Vec<bool> = sites.iter().map(|s| s.source == source).collect();
    let mut kept = keep.iter();
    sites.retain(|_| kept.next().copied().unwrap_or(false));
    let mut kept = keep.iter();
    findings.retain(|_| kept.next().copied().unwrap_or(false));
    (sites, findings)
}

/// Each hit's place in upstream's order: its anchor's ranks (see
/// `order`), all in one buffer rather than a vector a hit.
struct Places {
    ranks: Vec<u32>,
    /// Where each hit's ranks end in `ranks`.
    ends: Vec<u32>,
}

impl Places {
    fn of(root: &Map<'_>, hits: &[Site]) -> Self {
        let mut ranker = crate::order::Ranker::default();
        let mut places = Places {
            ranks: Vec::with_capacity(hits.len() * 6),
            ends: Vec::with_capacity(hits.len()),
        };
        for hit in hits {
            ranker.rank_into(root, &hit.anchor, &mut places.ranks);
            places
                .ends
                .push(u32::try_from(places.ranks.len()).unwrap_or(u32::MAX));
        }
        places.ranks.shrink_to_fit();
        places
    }

    /// Hit `i`'s place (empty when there is no such hit).
    fn get(&self, i: usize) -> &[u32] {
        let end_of = |i: usize| self.ends.get(i).map(|&e| e as usize);
        let start = i.checked_sub(1).and_then(end_of).unwrap_or(0);
        let end = end_of(i).unwrap_or(start);
        self.ranks.get(start..end).unwrap_or_default()
    }
}

/// Reorders `items` so that item `i` is what was at `order[i]`, by
/// following the permutation's cycles (`order` must be a permutation of
/// the indices; anything else leaves `items` partly reordered, never
/// loses an item).
fn permute<T>(items: &mut [T], mut order: Vec<usize>) {
    for start in 0..items.len() {
        let mut at = start;
        while let Some(slot) = order.get_mut(at) {
            let from = std::mem::replace(slot, at);
            if from == start || from == at || from >= items.len() {
                break;
            }
            items.swap(at, from);
            at = from;
        }
    }
}

/// Locates every hit's anchor: a key where the key is written; a string
/// the parsed document borrows from the text from the string's address,
/// with no scan; the rest (and keys not found) through one scan of the
/// text, falling back to the nearest ancestor.
fn locate_hits(index: &SourceIndex<'_>, root: &Map<'_>, hits: &[Site]) -> Vec<Option<Span>> {
    let text = index.text();
    let ranges: Vec<Option<(usize, usize)>> = hits
        .par_iter()
        .map(|hit| {
            if hit.anchor_key {
                return None;
            }
            let value = crate::stack::lookup(root, &hit.anchor)?;
            borrowed_string_range(text, value.as_str()?)
        })
        .collect();
    let mut spans = index.spans_of(&ranges);
    let keyed: Vec<usize> = (0..hits.len())
        .filter(|&i| hits.get(i).is_some_and(|h| h.anchor_key))
        .collect();
    if !keyed.is_empty() {
        let found = index.locate_keys_many(&anchors(hits, &keyed));
        fill(&mut spans, &keyed, found);
    }
    let rest: Vec<usize> = (0..hits.len())
        .filter(|&i| spans.get(i).is_some_and(Option::is_none))
        .collect();
    if !rest.is_empty() {
        let found = locate_with_fallback(index, anchors(hits, &rest));
        fill(&mut spans, &rest, found);
    }
    spans
}

/// The anchors of the hits at positions `at`.
fn anchors(hits: &[Site], at: &[usize]) -> Vec<JsonPath> {
    at.iter()
        .filter_map(|&i| hits.get(i))
        .map(|h| h.anchor.to_path())
        .collect()
}

/// Stores each span found for position `at[k]` of `spans`.
fn fill(spans: &mut [Option<Span>], at: &[usize], found: Vec<Option<Span>>) {
    for (&i, span) in at.iter().zip(found) {
        if let (Some(slot), Some(span)) = (spans.get_mut(i), span) {
            *slot = Some(span);
        }
    }
}

/// The byte range, quotes included, of a string value that is a slice of
/// `text` (a string without escapes, as the borrowed parser keeps it).
fn borrowed_string_range(text: &str, value: &str) -> Option<(usize, usize)> {
    let start = (value.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    let end = start.checked_add(value.len())?;
    let bytes = text.as_bytes();
    // The quotes around the slice prove it is the string token itself.
    let quoted = start >= 1
        && bytes.get(start - 1) == Some(&b'"')
        && bytes.get(end) == Some(&b'"')
        && end < text.len();
    quoted.then(|| (start - 1, end + 1))
}

/// Locates every path; a path that is not in the text falls back to its
/// nearest ancestor that is.
fn locate_with_fallback(index: &SourceIndex<'_>, mut paths: Vec<JsonPath>) -> Vec<Option<Span>> {
    let mut spans = index.locate_many(&paths);
    loop {
        let missing: Vec<usize> = spans
            .iter()
            .zip(&paths)
            .enumerate()
            .filter(|(_, (span, path))| span.is_none() && !path.is_root())
            .map(|(i, _)| i)
            .collect();
        if missing.is_empty() {
            return spans;
        }
        let parents: Vec<JsonPath> = missing
            .iter()
            .filter_map(|&i| paths.get(i))
            .map(parent)
            .collect();
        let found = index.locate_many(&parents);
        for ((&i, path), span) in missing.iter().zip(parents).zip(found) {
            if let (Some(slot), Some(p)) = (spans.get_mut(i), paths.get_mut(i)) {
                *slot = span;
                *p = path;
            }
        }
    }
}

fn parent(path: &JsonPath) -> JsonPath {
    path.parent().cloned().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A run of one source keeps its sites and findings in step, and
    /// drops a hit that names another source with its finding.
    #[test]
    fn only_source_keeps_sites_and_findings_in_step() {
        let site = |source| Site {
            source,
            anchor: JsonPath::root().key("skills").into(),
            anchor_key: false,
        };
        let finding = |path: &str| Finding {
            rule: "r".into(),
            severity: crate::Severity::Warning,
            where_: String::new(),
            path: path.to_owned(),
            message: crate::Text::default(),
            hint: crate::Text::default(),
            reference: None,
            suggestion: None,
            location: None,
        };
        let sources = [0, 1, 0, 0, 2];
        let sites: Vec<Site> = sources.iter().map(|&s| site(s)).collect();
        let findings: Vec<Finding> = (0..sources.len())
            .map(|i| finding(&i.to_string()))
            .collect();
        let (sites, findings) = only_source(sites, findings, 0);
        assert!(sites.iter().all(|s| s.source == 0));
        let kept: Vec<&str> = findings.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(kept, ["0", "2", "3"]);
        // All of one source: nothing moves.
        let sites: Vec<Site> = (0..3).map(|_| site(0)).collect();
        let findings: Vec<Finding> = (0..3).map(|i| finding(&i.to_string())).collect();
        let (sites, findings) = only_source(sites, findings, 0);
        assert_eq!((sites.len(), findings.len()), (3, 3));
    }

    mod permute {
        use proptest::prelude::*;

        proptest! {
            /// In place, the permutation puts each item where a copy would.
            #[test]
            fn is_a_gather(perm in (0..80usize).prop_flat_map(|n| Just((0..n).collect::<Vec<usize>>()).prop_shuffle())) {
                let items: Vec<String> = (0..perm.len()).map(|i| format!("item {i}")).collect();
                let wanted: Vec<String> = perm.iter().map(|&i| items[i].clone()).collect();
                let mut got = items;
                super::super::permute(&mut got, perm);
                prop_assert_eq!(got, wanted);
            }
        }
    }

    /// `text` parsed, as the object it must be.
    fn object<'a>(
        text: &'a str,
        arena: &'a objectstack_spec::json::Arena,
    ) -> &'a objectstack_spec::json::Map<'a> {
        objectstack_spec::json::parse_object(text, arena).unwrap()
    }

    /// Put-off hits come in batches, one per task of skills; an anchor
    /// keeps a record's raw index, which skips what is not a record.
    #[test]
    fn put_off_hits_of_many_batches_are_in_document_order_and_located() {
        let mut skills = Vec::new();
        let mut expected = Vec::new();
        for i in 0..1300 {
            if i % 7 == 3 {
                // Not a record: lenient indices skip it, raw ones do not.
                skills.push(json!(null));
            }
            let lenient = expected.len() / 2;
            skills.push(json!({"name": format!("s{i}"), "tools": ["query_data", format!("ghost_{i}"), "nope_*"]}));
            expected.push((
                format!("skills[{lenient}].tools[1]"),
                format!("\"ghost_{i}\""),
            ));
            expected.push((
                format!("skills[{lenient}].tools[2]"),
                "\"nope_*\"".to_owned(),
            ));
        }
        let text = serde_json::to_string_pretty(&json!({"skills": skills})).unwrap();
        let arena = objectstack_spec::json::Arena::new();
        let root = object(&text, &arena);
        let findings: Vec<Finding> = lint(&Source {
            file: "many.json",
            text: Some(&text),
            root,
        })
        .into_iter()
        .filter(|f| f.rule == "ai-skill-tool-unresolved")
        .collect();
        assert_eq!(findings.len(), expected.len());
        // Tens of thousands of findings share their file's name.
        let first = findings.first().and_then(|f| f.location.as_ref()).unwrap();
        for (finding, (path, quoted)) in findings.iter().zip(&expected) {
            assert_eq!(&finding.path, path);
            let location = finding.location.as_ref().unwrap();
            assert_eq!(&*location.file, "many.json");
            assert!(Arc::ptr_eq(&location.file, &first.file));
            assert_eq!(
                &text[location.byte_start..location.byte_end],
                quoted,
                "{path}"
            );
        }
    }

    #[test]
    fn put_off_hits_of_a_map_shaped_collection_are_located() {
        let text = r#"{"skills": {"b": {"tools": ["ghost"]}, "7": {"name": "seven", "tools": ["x", "phantom"]}}}"#;
        let arena = objectstack_spec::json::Arena::new();
        let root = object(text, &arena);
        let findings = lint(&Source {
            file: "map.json",
            text: Some(text),
            root,
        });
        let located: Vec<(&str, &str)> = findings
            .iter()
            .filter(|f| f.rule == "ai-skill-tool-unresolved")
            .map(|f| {
                let l = f.location.as_ref().unwrap();
                (f.path.as_str(), &text[l.byte_start..l.byte_end])
            })
            .collect();
        // JavaScript's key order: the integer-like key first.
        assert_eq!(
            located,
            [
                ("skills[0].tools[0]", "\"x\""),
                ("skills[0].tools[1]", "\"phantom\""),
                ("skills[1].tools[0]", "\"ghost\"")
            ]
        );
    }

    #[test]
    fn locations_fall_back_to_the_parent() {
        let text = "{\n  \"tools\": [\n    {\"label\": \"x\"}\n  ]\n}";
        let arena = objectstack_spec::json::Arena::new();
        let root = object(text, &arena);
        let index = SourceIndex::new(text);
        let spans = locate_with_fallback(
            &index,
            vec![JsonPath::root().key("tools").index(0).key("name")],
        );
        let span = spans[0].unwrap();
        assert_eq!((span.line, span.column), (3, 5));
        let findings = lint(&Source {
            file: "t.json",
            text: Some(text),
            root,
        });
        assert!(findings.iter().all(|f| f.location.is_some()));
    }

    #[test]
    fn string_anchors_are_located_as_the_scan_locates_them() {
        let text = "{\"skills\": [\n  {\"name\": \"s\", \"tools\": [\"a\\u00e9\", \"é x\", 3, \"\"]},\n  \
                    {\"name\": \"t\", \"tools\": [\"b\"], \"tools\": [\"c\", \"d\"]}\n]}";
        let arena = objectstack_spec::json::Arena::new();
        let root = object(text, &arena);
        let index = SourceIndex::new(text);
        let anchor = |i: usize, j: usize| {
            JsonPath::root()
                .key("skills")
                .index(i)
                .key("tools")
                .index(j)
        };
        let anchors = vec![
            anchor(0, 0), // escaped: found by the scan
            anchor(0, 1), // borrowed, after a multibyte character
            anchor(0, 2), // a number: found by the scan
            anchor(0, 3), // the empty string
            anchor(1, 1), // the last of a repeated key
            anchor(1, 5), // missing: falls back to the array
            JsonPath::root().key("skills").index(0).key("name"),
        ];
        let hits: Vec<Site> = anchors
            .iter()
            .map(|a| Site {
                source: 0,
                anchor: a.clone().into(),
                anchor_key: false,
            })
            .collect();
        let fast = locate_hits(&index, root, &hits);
        let scanned = locate_with_fallback(&index, anchors);
        assert_eq!(fast, scanned);
        assert!(fast.iter().all(Option::is_some));
    }

    #[test]
    fn composition_resolves_across_files() {
        let a = json!({"skills": [{"name": "s", "tools": ["action_close", "ghost"]}]});
        let b = json!({"actions": [{"name": "close", "type": "script", "target": "t",
            "ai": {"exposed": true, "description": "Close the case the user is looking at now."}}]});
        let (a, b) = (crate::testing::doc(a), crate::testing::doc(b));
        let src = |file, root| Source {
            file,
            text: None,
            root,
        };
        let alone = lint(&src("a.json", a));
        let unresolved = |fs: &[Finding]| {
            fs.iter()
                .filter(|f| f.rule == "ai-skill-tool-unresolved")
                .count()
        };
        assert_eq!(unresolved(&alone), 2);
        let composed = lint_composed(&[src("a.json", a), src("b.json", b)]);
        assert_eq!(unresolved(&composed), 1);
        let each = lint_each(&[src("a.json", a), src("b.json", b)]);
        assert_eq!(unresolved(&each[0]), 2);
    }
}
