//! Benchmarks of the `tools` pipeline: parse a stack, materialise its
//! actions, serialise the outcome; both over a `serde_json` stack
//! (`materialise`: borrowed with `from_serde` and materialised, what a
//! runtime holding one does) and over the borrowed document
//! `objectstack-ai tools` reads (`parse_document`, then
//! `materialise_document` building the definitions with `materialise_each`
//! and `stream` building and writing them as the command does).
//!
//! The stack is synthetic, shaped like the performance scenario of the
//! bridge issue: objects with 10 fields each, 50 exposed actions per object,
//! 10 params per action (half field-backed, half typed) and one param hint.
//! Criterion runs a 10,000-action stack (200 objects).
//!
//! To write the full scenario (100,000 actions over 2,000 objects, about
//! 67 MB) for a whole-process comparison, run
//! `BRIDGE_BENCH_FIXTURE=/tmp/stack.json cargo bench -p objectstack-bridge
//! --bench materialise`; it writes the file and exits.

use std::hint::black_box;
use std::io::{self, BufWriter, Write};

use criterion::{Criterion, Throughput, criterion_group};
use objectstack_bridge::materialise::{
    Event, Materialised, Registration, Wiring, materialise_each,
};
use objectstack_spec::json::{self, Arena};
use serde_json::{Map, Value};

const FIELDS_PER_OBJECT: usize = 10;
const ACTIONS_PER_OBJECT: usize = 50;
const PARAMS_PER_ACTION: usize = 10;

/// Writes a synthetic stack of `objects` objects as JSON.
fn write_stack(out: &mut impl Write, objects: usize) -> io::Result<()> {
    let field_types = [
        "text", "number", "select", "boolean", "date", "currency", "tags", "textarea", "lookup",
        "percent",
    ];
    write!(out, "{{\"objects\":[")?;
    for o in 0..objects {
        if o > 0 {
            write!(out, ",")?;
        }
        write!(
            out,
            "{{\"name\":\"object_{o}\",\"label\":\"Object {o}\",\"fields\":{{"
        )?;
        for f in 0..FIELDS_PER_OBJECT {
            if f > 0 {
                write!(out, ",")?;
            }
            let t = field_types[f % field_types.len()];
            write!(
                out,
                "\"field_{f}\":{{\"label\":\"Field {f}\",\"type\":\"{t}\",\"required\":{},\
                 \"description\":\"Field {f} of object {o}\"",
                f % 3 == 0
            )?;
            if t == "select" || t == "tags" {
                write!(
                    out,
                    ",\"options\":[{{\"label\":\"One\",\"value\":\"one\"}},{{\"label\":\"Two\",\
                     \"value\":\"two\"}},{{\"label\":\"Three\",\"value\":\"three\"}}]"
                )?;
            }
            write!(out, "}}")?;
        }
        write!(out, "}},\"actions\":[")?;
        for a in 0..ACTIONS_PER_OBJECT {
            if a > 0 {
                write!(out, ",")?;
            }
            write!(
                out,
                "{{\"name\":\"action_{o}_{a}\",\"label\":\"Action {a}\",\"type\":\"script\",\
                 \"target\":\"runAction{a}\",\"locations\":\
                 [\"record_header\",\"list_item\"],\"params\":["
            )?;
            for p in 0..PARAMS_PER_ACTION {
                if p > 0 {
                    write!(out, ",")?;
                }
                if p < PARAMS_PER_ACTION / 2 {
                    write!(
                        out,
                        "{{\"field\":\"field_{}\"}}",
                        (a + p) % FIELDS_PER_OBJECT
                    )?;
                } else {
                    write!(
                        out,
                        "{{\"name\":\"param_{p}\",\"label\":\"Param {p}\",\"type\":\"{}\",\
                         \"required\":{}}}",
                        field_types[p % field_types.len()],
                        p % 2 == 0
                    )?;
                }
            }
            write!(
                out,
                "],\"ai\":{{\"exposed\":true,\"description\":\"Runs action {a} of object {o} on \
                 one record for the user.\",\"paramHints\":{{\"param_{}\":\
                 {{\"description\":\"A hint for the model\",\"examples\":[\"x\"]}}}}}}}}",
                PARAMS_PER_ACTION - 1
            )?;
        }
        write!(out, "]}}")?;
    }
    write!(out, "]}}")
}

fn stack_bytes(objects: usize) -> Vec<u8> {
    let mut bytes = Vec::new();
    write_stack(&mut bytes, objects).unwrap_or_default();
    bytes
}

fn parse(bytes: &[u8]) -> Map<String, Value> {
    match serde_json::from_slice(bytes) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

/// Materialises a `serde_json` stack as a runtime holding one does:
/// borrowed through `from_serde`, then detached.
fn materialise(stack: &Map<String, Value>) -> Materialised<'static> {
    let arena = Arena::new();
    let document = json::Map::from_serde(stack, &arena);
    objectstack_bridge::materialise::materialise(document, &arena, Some(&Wiring::ALL), &|_| false)
        .into_owned()
}

/// `stack` with a tool record bound to every fifth action: one in two
/// takes the action's parameters, the other narrows them to those the
/// action requires (read from its definition).
fn with_records(stack: &Map<String, Value>) -> Map<String, Value> {
    let plain = materialise(stack);
    let mut tools = Vec::new();
    for (i, r) in plain
        .registered
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 5 == 0)
    {
        let mut record = serde_json::json!({
            "name": format!("refined_{}", r.action_name),
            "label": "Refined",
            "description": "Runs the action on one record, with fewer choices for the model.",
            "binding": {"type": "action", "name": r.action_name},
        });
        if i % 10 == 0 {
            let required = r.definition.parameters.get("required").cloned();
            let properties: Map<String, Value> = required
                .iter()
                .flat_map(|v| v.as_array().into_iter().flatten())
                .filter_map(Value::as_str)
                .map(|name| (name.to_owned(), serde_json::json!({})))
                .collect();
            record["parameters"] = serde_json::json!({
                "type": "object", "properties": properties, "required": required,
            });
        }
        tools.push(record);
    }
    let mut refined = stack.clone();
    refined.insert("tools".into(), Value::Array(tools));
    refined
}

fn benches(c: &mut Criterion) {
    let bytes = stack_bytes(200);
    let stack = parse(&bytes);
    let actions = 200 * ACTIONS_PER_OBJECT;

    let mut group = c.benchmark_group("tools_10k_actions");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("parse", |b| b.iter(|| parse(black_box(&bytes))));
    group.throughput(Throughput::Elements(actions as u64));
    group.bench_function("materialise", |b| b.iter(|| materialise(black_box(&stack))));
    // The same stack with a bound tool record for every fifth action
    // (ADR-0109 Phase 2): each supersedes its action's raw tool, and one
    // in two narrows it to the injected `recordId` and the required
    // params.
    let refined = with_records(&stack);
    group.bench_function("materialise_refined", |b| {
        b.iter(|| materialise(black_box(&refined)))
    });
    assert_eq!(materialise(&refined).registered.len(), actions);
    let materialised = materialise(&stack);
    assert_eq!(materialised.registered.len(), actions);
    let mut output = Vec::new();
    serde_json::to_writer(&mut output, &materialised).unwrap_or_default();
    group.throughput(Throughput::Bytes(output.len() as u64));
    group.bench_function("serialise", |b| {
        b.iter(|| {
            let mut sink = BufWriter::new(io::sink());
            serde_json::to_writer(&mut sink, black_box(&materialised)).unwrap_or_default();
        })
    });

    // The borrowed document, as `objectstack-ai tools` reads it.
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("parse_document", |b| {
        b.iter(|| {
            let arena = Arena::new();
            json::parse_document(black_box(&bytes), &arena)
                .map(|d| d.len())
                .unwrap_or(0)
        })
    });
    // The detached document, as `objectstack-ai serve` reads it (strings
    // copied, keys and short strings once).
    group.bench_function("parse_document_detached", |b| {
        b.iter(|| {
            let arena = Arena::new();
            json::parse_document_detached(black_box(&bytes), &arena)
                .map(|d| d.len())
                .unwrap_or(0)
        })
    });
    let arena = Arena::new();
    let Ok(document) = json::parse_document(&bytes, &arena) else {
        panic!("the generated stack does not parse");
    };
    // The walk as the command runs it, with what to do with each
    // registration.
    let walk = |on_registered: &mut dyn FnMut(Registration<'_>)| {
        materialise_each(
            black_box(document),
            &arena,
            Some(&Wiring::ALL),
            &|_| false,
            &mut |e| {
                if let Event::Registered(r) = e {
                    on_registered(r);
                }
            },
        );
    };
    group.throughput(Throughput::Elements(actions as u64));
    group.bench_function("materialise_document", |b| {
        b.iter(|| {
            let mut registered = 0;
            walk(&mut |r| registered += black_box(r.definition.name().len()));
            registered
        })
    });
    group.bench_function("stream", |b| {
        b.iter(|| {
            let mut sink = BufWriter::new(io::sink());
            walk(&mut |r| {
                serde_json::to_writer(&mut sink, &r.definition).unwrap_or_default();
            });
        })
    });
    group.finish();
}

criterion_group!(bridge, benches);

fn main() {
    if let Some(path) = std::env::var_os("BRIDGE_BENCH_FIXTURE") {
        let file = std::fs::File::create(&path).map(BufWriter::new);
        let written = file.and_then(|mut f| {
            write_stack(&mut f, 2_000)?;
            f.flush()
        });
        if let Err(err) = written {
            eprintln!("cannot write {}: {err}", path.to_string_lossy());
            std::process::exit(1);
        }
        return;
    }
    bridge();
    Criterion::default().configure_from_args().final_summary();
}
