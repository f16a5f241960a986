use std::time::{Duration, Instant};
use objectstack_lint::synth::{SynthConfig, names_and_references};
use objectstack_lint::universe::Universe;
fn min_of<T>(reps: usize, mut f: impl FnMut() -> T) -> (T, Duration) {
    let mut best = Duration::MAX; let mut out = None;
    for _ in 0..reps { let t = Instant::now(); let o = f(); best = best.min(t.elapsed()); out = Some(o); }
    (out.unwrap(), best)
}
fn cpu() -> Duration {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
    Duration::from_nanos(s.split_whitespace().next().unwrap().parse().unwrap())
}
fn main() {
    let (names, refs) = names_and_references(&SynthConfig { references: 1_000_000, miss_percent: 5.0, ..SynthConfig::default() });
    if std::env::var("ONLY").is_ok() {
        let u = Universe::new(names.clone());
        u.suggest("zzzz");
        let misses: Vec<&String> = refs.iter().filter(|r| !r.ends_with('*') && !u.contains(r)).collect();
        let words: Vec<&String> = misses.iter().copied().filter(|m| !m.contains('_')).collect();
        use std::sync::atomic::Ordering::Relaxed;
        objectstack_lint::universe::ROWS.store(0, Relaxed); objectstack_lint::universe::WALKS.store(0, Relaxed);
        let c = words.iter().filter(|r| u.suggest(r).is_some()).count();
        println!("{c} rows/word {} nodes/word {}", objectstack_lint::universe::ROWS.load(Relaxed) / words.len(), objectstack_lint::universe::WALKS.load(Relaxed)/words.len());
        let typos: Vec<&String> = misses.iter().copied().filter(|m| m.contains('_')).collect();
        for _ in 0..5 { let c0 = cpu(); let t = Instant::now(); let c = words.iter().filter(|r| u.suggest(r).is_some()).count(); println!("words {c} wall {:?} cpu {:?}", t.elapsed() / words.len() as u32, (cpu() - c0) / words.len() as u32); }
        for _ in 0..5 { let c0 = cpu(); let t = Instant::now(); let c = typos.iter().filter(|r| u.suggest(r).is_some()).count(); println!("typos {c} wall {:?} cpu {:?}", t.elapsed() / typos.len() as u32, (cpu() - c0) / typos.len() as u32); }
        return;
    }
    let (u, d) = min_of(5, || Universe::new(names.clone()));
    println!("new {d:?}");
    let set: std::collections::HashSet<&str> = names.iter().map(String::as_str).collect();
    let (c, d) = min_of(7, || refs.iter().filter(|r| !r.ends_with('*') && set.contains(r.as_str())).count());
    println!("std hashset {c} {d:?}");
    let (c, d) = min_of(7, || refs.iter().filter(|r| !r.ends_with('*') && u.contains(r)).count());
    println!("contains {c} {d:?}");
    let (_, d) = min_of(5, || { let u = Universe::new(names.clone()); let t = Instant::now(); u.matches_prefix("x"); t.elapsed() });
    println!("sort+new {d:?}");
    let (c, d) = min_of(5, || refs.iter().filter_map(|r| r.strip_suffix('*')).filter(|p| u.matches_prefix(p)).count());
    println!("wild {c} {d:?}");
    let (_, d) = min_of(3, || { let u = Universe::new(names.clone()); u.matches_prefix("x"); let t = Instant::now(); u.suggest("zzzz"); t.elapsed() });
    println!("index build (after new+sort) {d:?}");
    u.suggest("zzzz");
    let misses: Vec<&String> = refs.iter().filter(|r| !r.ends_with('*') && !u.contains(r)).collect();
    let (words, typos): (Vec<&String>, Vec<&String>) = misses.iter().partition(|m| !m.contains('_'));
    for (label, set) in [("words", &words), ("typos", &typos)] {
        use std::sync::atomic::Ordering::Relaxed;
        objectstack_lint::universe::ROWS.store(0, Relaxed); objectstack_lint::universe::WALKS.store(0, Relaxed);
        let (c, d) = min_of(3, || set.iter().filter(|r| u.suggest(r).is_some()).count());
        println!("rows {} walks {}", objectstack_lint::universe::ROWS.load(Relaxed), objectstack_lint::universe::WALKS.load(Relaxed));
        println!("{label} {} -> {c} {d:?} per {:?}", set.len(), d / set.len() as u32);
    }
}
