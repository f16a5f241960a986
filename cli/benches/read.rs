//! Reading a large stack file as the stack commands do: on as many threads
//! as there are cores, into a mapping advised for transparent huge pages
//! (Linux), against the same read into a vector. Both check the text once.
//!
//! The file is written once, to a temporary directory: a 64 MiB JSON
//! object of ASCII records, about the size of the 1M-reference benchmark
//! stack. Run with `cargo bench -p objectstack-cli --bench read`; the two
//! results, taken in one run, give the ratio (docs/performance.md,
//! "Stop 40").

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};

/// About 64 MiB of stack text, written once per run.
fn stack_file() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("osk-read-bench-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("stack.json");
    let mut text = String::from("{\"skills\": [");
    let mut i = 0usize;
    while text.len() < 64 << 20 {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!(
            "{{\"name\": \"skill_{i}\", \"tools\": [\"action_close_{i}\", \"query_records\"]}}"
        ));
        i += 1;
    }
    text.push_str("]}");
    if let Err(err) = std::fs::write(&path, text) {
        panic!("cannot write {}: {err}", path.display());
    }
    path
}

fn read(c: &mut Criterion) {
    let path = stack_file();
    let mut group = c.benchmark_group("read");
    group.sample_size(20);
    for (name, mapped) in [("mapped", true), ("vector", false)] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let len = objectstack_cli::bench::read_stack(black_box(&path), mapped);
                black_box(len.unwrap_or_else(|e| panic!("{e:#}")))
            });
        });
    }
    group.finish();
    if let Some(dir) = path.parent() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

criterion_group!(benches, read);
criterion_main!(benches);
