//! criterion benchmarks of the lint's four stages, each on its own: parse,
//! resolve, suggest and render; and of the checks on a parsed document:
//! the `spec` validation alone and the whole lint (see
//! docs/performance.md).
//!
//! `cargo bench -p objectstack-lint --bench lint` runs them; CI only
//! compiles them. The inputs come from the seeded generator, so every run
//! measures the same bytes.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use objectstack_lint::render::{Format, SourceText, render};
use objectstack_lint::synth::{SynthConfig, generate, names_and_references};
use objectstack_lint::universe::Universe;
use objectstack_lint::{Source, lint};
use std::hint::black_box;

fn config(references: usize, miss_percent: f64) -> SynthConfig {
    SynthConfig {
        references,
        miss_percent,
        ..SynthConfig::default()
    }
}

/// Reading 100,000 references' worth of stack (about 6 MB) into a tree.
fn parse(c: &mut Criterion) {
    let json = generate(&config(100_000, 0.5));
    let mut group = c.benchmark_group("parse");
    group.throughput(Throughput::Bytes(json.len() as u64));
    group.bench_function("parse_document_100k", |b| {
        b.iter(|| objectstack_spec::parse::parse_document(black_box(json.as_bytes())))
    });
    // The yardstick: serde_json checking the same text while building
    // nothing. The borrowed reader builds the whole tree.
    group.bench_function("skim_100k", |b| {
        b.iter(|| serde_json::from_str::<serde::de::IgnoredAny>(black_box(&json)).is_ok())
    });
    group.bench_function("parse_borrowed_100k", |b| {
        b.iter(|| {
            let arena = objectstack_spec::json::Arena::new();
            objectstack_spec::json::parse_document(black_box(json.as_bytes()), &arena)
                .map(|m| m.len())
        })
    });
    // The same tree with its own strings (as `serve` reads a stack): a
    // stack of many distinct short names is the case its caches are for.
    group.bench_function("parse_detached_100k", |b| {
        b.iter(|| {
            let arena = objectstack_spec::json::Arena::new();
            objectstack_spec::json::parse_document_detached(black_box(json.as_bytes()), &arena)
                .map(|m| m.len())
        })
    });
    group.finish();
}

/// Building the universe and resolving every reference (exact names and
/// wildcards), 1,000,000 references over 100,000 action tools.
fn resolve(c: &mut Criterion) {
    let (names, refs) = names_and_references(&config(1_000_000, 0.5));
    let mut group = c.benchmark_group("resolve");
    group.bench_function("universe_new_120k", |b| {
        b.iter_batched(|| names.clone(), Universe::new, BatchSize::LargeInput)
    });
    let universe = Universe::new(names.clone());
    group.throughput(Throughput::Elements(refs.len() as u64));
    group.bench_function("resolve_1m", |b| {
        b.iter(|| {
            refs.iter()
                .filter(|r| match r.strip_suffix('*') {
                    Some(prefix) => universe.matches_prefix(prefix),
                    None => universe.contains(r),
                })
                .count()
        })
    });
    // The same lookups a group at a time, as the rule makes them.
    let exact: Vec<&str> = refs
        .iter()
        .map(String::as_str)
        .filter(|r| !r.ends_with('*'))
        .collect();
    group.bench_function("resolve_1m_grouped", |b| {
        b.iter(|| {
            let mut found = 0;
            universe.contains_each(&exact, |_, hit| found += usize::from(hit));
            found
        })
    });
    group.finish();
}

/// Suggestions for the misses of 100,000 references at 5 % (5,000 queries
/// over about 12,000 names); the index build on its own; and upstream's
/// linear scan on a sample, for comparison.
fn suggest(c: &mut Criterion) {
    let (names, refs) = names_and_references(&config(100_000, 5.0));
    let probe = Universe::new(names.clone());
    let misses: Vec<&str> = refs
        .iter()
        .map(String::as_str)
        .filter(|r| !r.ends_with('*') && !probe.contains(r))
        .collect();
    let mut group = c.benchmark_group("suggest");
    group.sample_size(10);
    group.bench_function("index_build_12k", |b| {
        b.iter_batched(
            || Universe::new(names.clone()),
            |u| u.suggest("zzzz").is_some(),
            BatchSize::LargeInput,
        )
    });
    let universe = Universe::new(names.clone());
    universe.suggest("warm_up");
    group.throughput(Throughput::Elements(misses.len() as u64));
    group.bench_function("indexed_5000", |b| {
        b.iter(|| {
            misses
                .iter()
                .filter(|r| universe.suggest(r).is_some())
                .count()
        })
    });
    // Long names sharing a long prefix, and references far from all of
    // them: the walk's band is 2,335 cells wide and each miss walks about
    // 1,170 units before it is pruned (this took minutes when the walk kept
    // a row per unit and fell back to a linear scan past 4M cells).
    let long = Universe::new(
        (0..300)
            .map(|i| format!("{}{i}", "a".repeat(3500)))
            .collect(),
    );
    long.suggest("warm_up");
    let far: Vec<String> = (0..5).map(|i| format!("{}{i}", "b".repeat(3500))).collect();
    group.throughput(Throughput::Elements(far.len() as u64));
    group.bench_function("long_names_3500", |b| {
        b.iter(|| far.iter().filter(|r| long.suggest(r).is_some()).count())
    });
    // References that follow a name's 3,500-unit run and then differ: each
    // deletion or insertion inside the run spells the same string, and the
    // one-edit search must not descend the run once per unit.
    let near: Vec<String> = (0..5)
        .map(|i| format!("{}zz{i}", "a".repeat(3500)))
        .collect();
    group.throughput(Throughput::Elements(near.len() as u64));
    group.bench_function("long_names_near_3500", |b| {
        b.iter(|| near.iter().filter(|r| long.suggest(r).is_some()).count())
    });
    // Names one substitution away from the reference at every position
    // but two units longer: the one-edit search must drop each by its
    // length at once, not descend the rest of the reference.
    let query: String = (0..1000)
        .map(|i| char::from(b'a' + (i % 7) as u8))
        .collect();
    let longer = Universe::new(
        (0..1000)
            .map(|i| {
                let mut name: Vec<char> = query.chars().collect();
                if let Some(c) = name.get_mut(i) {
                    *c = 'x';
                }
                name.into_iter().chain("ZZ".chars()).collect()
            })
            .collect(),
    );
    longer.suggest("warm_up");
    group.throughput(Throughput::Elements(1));
    group.bench_function("one_off_longer_names_1000", |b| {
        b.iter(|| longer.suggest(&query).is_some())
    });
    let sample: Vec<&str> = misses.iter().step_by(100).copied().collect();
    group.throughput(Throughput::Elements(sample.len() as u64));
    group.bench_function("linear_scan_50", |b| {
        b.iter(|| {
            sample
                .iter()
                .filter(|r| universe.suggest_linear(r).is_some())
                .count()
        })
    });
    group.finish();
}

/// Rendering the findings of 10,000 references at 5 % (about 500) in every
/// format.
fn render_formats(c: &mut Criterion) {
    let json = generate(&config(10_000, 5.0));
    let arena = objectstack_spec::json::Arena::new();
    let Ok(root) = objectstack_spec::json::parse_document(json.as_bytes(), &arena) else {
        return;
    };
    let file = "stack.json";
    let findings = lint(&Source {
        file,
        text: Some(&json),
        root,
    });
    let sources = [SourceText { file, text: &json }];
    let mut group = c.benchmark_group("render");
    group.throughput(Throughput::Elements(findings.len() as u64));
    for format in Format::ALL {
        group.bench_function(format.as_str(), |b| {
            b.iter(|| render(format, black_box(&findings), &sources, 1).len())
        });
    }
    group.finish();
}

/// The checks on a parsed 100,000-reference stack at 0.5 % misses: the
/// `spec` validation on its own (what `validate` runs, and what `lint`
/// runs beside its rules), and the whole lint (rules, validation and
/// locating the findings); and the whole lint at 5 % misses, whose 5,000
/// unresolved references are put off, suggested, made a batch at a time
/// and located (the path the 1M-reference stack's peak memory comes from).
fn check(c: &mut Criterion) {
    let mut group = c.benchmark_group("check");
    for (name, misses, validate) in [("100k", 0.5, true), ("100k_5pct", 5.0, false)] {
        let json = generate(&config(100_000, misses));
        let arena = objectstack_spec::json::Arena::new();
        let Ok(root) = objectstack_spec::json::parse_document(json.as_bytes(), &arena) else {
            return;
        };
        group.throughput(Throughput::Bytes(json.len() as u64));
        if validate {
            group.bench_function(format!("validate_{name}"), |b| {
                b.iter(|| objectstack_spec::validate::validate(black_box(root)).len())
            });
        }
        group.bench_function(format!("lint_{name}"), |b| {
            b.iter(|| {
                lint(&Source {
                    file: "stack.json",
                    text: Some(&json),
                    root,
                })
                .len()
            })
        });
    }
    group.finish();
    superseded(c);
}

/// The lint of a stack whose 10,000 skills each name a raw action tool
/// that one of 10,000 tool records refines: 10,000 `ai-skill-tool-superseded`
/// findings, each naming its refinement (once a scan of every record per
/// finding).
fn superseded(c: &mut Criterion) {
    const N: usize = 10_000;
    let ai = r#"{"exposed": true, "description": "Does the thing for the record the user means."}"#;
    let actions: Vec<String> = (0..N)
        .map(|i| format!(r#"{{"name": "a{i}", "type": "script", "target": "t", "ai": {ai}}}"#))
        .collect();
    let tools: Vec<String> = (0..N)
        .map(|i| format!(r#"{{"name": "r{i}", "binding": {{"type": "action", "name": "a{i}"}}}}"#))
        .collect();
    let skills: Vec<String> = (0..N)
        .map(|i| format!(r#"{{"name": "s{i}", "tools": ["action_a{i}"]}}"#))
        .collect();
    let json = format!(
        r#"{{"actions": [{}], "tools": [{}], "skills": [{}]}}"#,
        actions.join(","),
        tools.join(","),
        skills.join(",")
    );
    let arena = objectstack_spec::json::Arena::new();
    let Ok(root) = objectstack_spec::json::parse_document(json.as_bytes(), &arena) else {
        return;
    };
    let mut group = c.benchmark_group("check");
    group.bench_function("superseded_10k", |b| {
        b.iter(|| {
            lint(&Source {
                file: "stack.json",
                text: None,
                root: black_box(root),
            })
            .len()
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = parse, resolve, suggest, render_formats, check
}
criterion_main!(benches);
