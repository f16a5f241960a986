//! One-run measurements for docs/performance.md, printed as ratios so they
//! carry over between machines:
//!
//! ```text
//! cargo bench -p objectstack-lint --bench ratios              # measure
//! cargo bench -p objectstack-lint --bench ratios -- --write-data
//!     # also write target/bench-data/synth-1m-{0.5,5}pct.json
//! target/release/deps/ratios-<hash> --generate N PERCENT PATH
//!     # write one synthetic stack
//! target/release/deps/ratios-<hash> --whole FILE > /dev/null
//!     # what `objectstack-ai lint --format json FILE` does, timed by phase
//!     # on stderr (run it under `/usr/bin/time` beside node)
//! ```
//!
//! Upstream's linear suggestion scan is timed on an evenly spaced sample of
//! the queries (every 100th) and compared per query; every sampled answer
//! is also checked to be identical.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use objectstack_lint::synth::{SynthConfig, generate, names_and_references};
use objectstack_lint::universe::Universe;

const N: usize = 1_000_000;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--whole") {
        match args.get(at + 1) {
            Some(file) => whole(file),
            None => eprintln!("--whole needs a FILE"),
        }
        return;
    }
    if let Some(at) = args.iter().position(|a| a == "--generate") {
        let n = args.get(at + 1).and_then(|a| a.parse().ok());
        let pct = args.get(at + 2).and_then(|a| a.parse().ok());
        match (n, pct, args.get(at + 3)) {
            (Some(references), Some(miss_percent), Some(path)) => {
                let text = generate(&SynthConfig {
                    references,
                    miss_percent,
                    ..SynthConfig::default()
                });
                if let Err(e) = std::fs::write(path, text) {
                    eprintln!("cannot write {path}: {e}");
                }
            }
            _ => eprintln!("--generate needs N PERCENT PATH"),
        }
        return;
    }
    let write = args.iter().any(|a| a == "--write-data");
    let config = |miss_percent| SynthConfig {
        references: N,
        miss_percent,
        ..SynthConfig::default()
    };

    let mut texts = Vec::new();
    let mut rows: Vec<(String, Duration, String)> = Vec::new();
    for pct in [0.5, 5.0] {
        let (text, took) = timed(|| generate(&config(pct)));
        rows.push((
            format!("generate N = {N} at {pct} % misses"),
            took,
            format!("{} bytes", text.len()),
        ));
        texts.push((pct, text));
    }
    // The yardstick every figure is divided by: a validating pass over the
    // 0.5 % file that builds nothing (serde_json into IgnoredAny).
    let Some((_, text)) = texts.first() else {
        return;
    };
    let (_, skim) = timed(|| serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok());
    let (_, tree) = timed(|| objectstack_spec::parse::parse_document(text.as_bytes()).is_ok());
    rows.push((
        "parse_document of the 0.5 % file (Value tree)".into(),
        tree,
        String::new(),
    ));

    let (names, refs) = names_and_references(&config(5.0));
    let (universe, build) = timed(|| Universe::new(names.clone()));
    rows.push((
        "Universe::new".into(),
        build,
        format!("{} names", universe.names().len()),
    ));
    let (resolved, resolve) = timed(|| {
        refs.iter()
            .filter(|r| match r.strip_suffix('*') {
                Some(prefix) => universe.matches_prefix(prefix),
                None => universe.contains(r),
            })
            .count()
    });
    rows.push((
        "resolve every reference (hash; wildcards by binary search)".into(),
        resolve,
        format!("{} references, {resolved} resolve", refs.len()),
    ));
    let misses: Vec<&str> = refs
        .iter()
        .map(String::as_str)
        .filter(|r| !r.ends_with('*') && !universe.contains(r))
        .collect();
    let (_, index) = timed(|| universe.suggest("zzzz"));
    rows.push((
        "suggestion index (first suggest)".into(),
        index,
        String::new(),
    ));
    let (answers, indexed) = timed(|| {
        misses
            .iter()
            .map(|r| universe.suggest(r))
            .collect::<Vec<_>>()
    });
    let found = answers.iter().filter(|a| a.is_some()).count();
    rows.push((
        "suggest for every miss, indexed".into(),
        indexed,
        format!("{} queries, {found} suggestions", misses.len()),
    ));
    let sample: Vec<(usize, &str)> = misses.iter().copied().enumerate().step_by(100).collect();
    let (linear_answers, linear) = timed(|| {
        sample
            .iter()
            .map(|(_, r)| universe.suggest_linear(r))
            .collect::<Vec<_>>()
    });
    for ((i, r), expected) in sample.iter().zip(&linear_answers) {
        let got = answers.get(*i).copied().flatten();
        assert_eq!(
            got, *expected,
            "indexed and linear answers differ for {r:?}"
        );
    }
    let per_indexed = indexed.as_secs_f64() / misses.len().max(1) as f64;
    let per_linear = linear.as_secs_f64() / sample.len().max(1) as f64;
    rows.push((
        "suggest, upstream's linear scan, every 100th miss".into(),
        linear,
        format!("{} queries, answers identical", sample.len()),
    ));

    println!(
        "Yardstick: serde_json skim of the 0.5 % file (IgnoredAny) = {}\n",
        ms(skim)
    );
    println!("| step | x skim | on this machine | notes |");
    println!("|---|---:|---:|---|");
    for (step, took, notes) in &rows {
        println!(
            "| {step} | {:.2} | {} | {notes} |",
            ratio(*took, skim),
            ms(*took)
        );
    }
    println!(
        "\nPer query the index is {:.0} x faster than the linear scan; all {} misses by linear scan would take about {:.0} x skim.",
        per_linear / per_indexed.max(1e-12),
        misses.len(),
        per_linear * misses.len() as f64 / skim.as_secs_f64().max(1e-9)
    );

    if write {
        let dir = target_dir().join("bench-data");
        if let Err(e) = std::fs::create_dir_all(&dir) {
            eprintln!("cannot create {}: {e}", dir.display());
            return;
        }
        for (pct, text) in &texts {
            let path = dir.join(format!("synth-1m-{pct}pct.json"));
            match std::fs::write(&path, text) {
                Ok(()) => println!("\nwrote {}", path.display()),
                Err(e) => eprintln!("cannot write {}: {e}", path.display()),
            }
        }
    }
}

/// Reads, parses, lints and renders `file` as JSON on stdout, as the CLI
/// does, printing each phase's time on stderr; exits without freeing.
fn whole(file: &str) {
    let start = Instant::now();
    let Ok(bytes) = std::fs::read(file) else {
        eprintln!("cannot read {file}");
        return;
    };
    let Ok(text) = String::from_utf8(bytes) else {
        eprintln!("{file} is not UTF-8");
        return;
    };
    let read = start.elapsed();
    let arena = objectstack_spec::json::Arena::new();
    let Ok(root) = objectstack_spec::json::parse_document(text.as_bytes(), &arena) else {
        eprintln!("{file} is not a JSON object");
        return;
    };
    let parsed = start.elapsed();
    let findings = objectstack_lint::lint(&objectstack_lint::Source {
        file,
        text: Some(&text),
        root,
    });
    let linted = start.elapsed();
    let out =
        objectstack_lint::render::render(objectstack_lint::render::Format::Json, &findings, &[], 1);
    let rendered = start.elapsed();
    {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(out.as_bytes());
        let _ = stdout.flush();
    }
    eprintln!(
        "read {} | parse {} | lint {} ({} findings) | render {} | write {}",
        ms(read),
        ms(parsed - read),
        ms(linted - parsed),
        findings.len(),
        ms(rendered - linted),
        ms(start.elapsed() - rendered)
    );
    // Like a CLI that is about to exit: do not pay to free the tree.
    std::process::exit(0);
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"))
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed())
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(1e-9)
}
