//! criterion benchmarks of the capability view: building it, and writing
//! it in each format (summarised and expanded), on the seeded benchmark
//! stack and on N agents each granted `action_*` over N actions, the shape
//! that was quadratic (see docs/performance.md).
//!
//! `cargo bench -p objectstack-lint --bench capabilities` runs them; CI
//! only compiles them.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use objectstack_lint::capabilities::{self, Format, RenderOptions};
use objectstack_lint::synth::{SynthConfig, generate};
use objectstack_spec::json::{Arena, parse_document};
use std::hint::black_box;

/// `n` exposed actions and `n` agents, each with its own skill granting
/// `action_*`.
fn every_agent_every_action(n: usize) -> String {
    let mut s = String::from("{\"actions\":[");
    for i in 0..n {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&format!(
            "{{\"name\":\"act_{i}\",\"type\":\"script\",\"target\":\"t\",\
             \"ai\":{{\"exposed\":true,\"description\":\"Does a thing well enough.\"}}}}"
        ));
    }
    s.push_str("],\"skills\":[");
    for i in 0..n {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&format!(
            "{{\"name\":\"skill_{i}\",\"tools\":[\"action_*\"]}}"
        ));
    }
    s.push_str("],\"agents\":[");
    for i in 0..n {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&format!(
            "{{\"name\":\"agent_{i}\",\"skills\":[\"skill_{i}\"]}}"
        ));
    }
    s.push_str("]}");
    s
}

fn bench_stack(c: &mut Criterion, group: &str, json: &str, formats: &[(Format, bool)]) {
    let arena = Arena::new();
    let Ok(root) = parse_document(json.as_bytes(), &arena) else {
        return;
    };
    let mut group = c.benchmark_group(group);
    group.sample_size(10);
    group.throughput(Throughput::Bytes(json.len() as u64));
    group.bench_function("build", |b| {
        b.iter(|| {
            let arena = Arena::new();
            capabilities::build(black_box(root), &arena).skills.len()
        })
    });
    let caps_arena = Arena::new();
    let caps = capabilities::build(root, &caps_arena);
    for &(format, expand) in formats {
        let options = RenderOptions {
            format,
            agent: None,
            expand,
        };
        let name =
            format!("write_{format:?}{}", if expand { "_expanded" } else { "" }).to_lowercase();
        group.bench_function(name, |b| {
            b.iter(|| capabilities::write(&caps, &options, std::io::sink()).is_ok())
        });
    }
    group.finish();
}

/// 100,000 references (about 6 MB): build, and every format.
fn synth(c: &mut Criterion) {
    let json = generate(&SynthConfig {
        references: 100_000,
        ..SynthConfig::default()
    });
    let formats = [
        (Format::Text, false),
        (Format::Json, false),
        (Format::Dot, false),
        (Format::Mermaid, false),
        (Format::Text, true),
    ];
    bench_stack(c, "capabilities_100k", &json, &formats);
}

/// 1,000 agents x 1,000 actions: summarised it is linear; expanded it
/// writes the million grants it was asked for.
fn every_agent(c: &mut Criterion) {
    let json = every_agent_every_action(1_000);
    let formats = [
        (Format::Text, false),
        (Format::Json, false),
        (Format::Dot, false),
        (Format::Text, true),
    ];
    bench_stack(c, "capabilities_1000x1000", &json, &formats);
}

criterion_group!(benches, synth, every_agent);
criterion_main!(benches);
