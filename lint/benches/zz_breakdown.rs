use std::time::Instant;
use objectstack_lint::synth::{SynthConfig, names_and_references};
use objectstack_lint::universe::Universe;
fn main() {
    let (names, refs) = names_and_references(&SynthConfig { references: 1_000_000, miss_percent: 5.0, ..SynthConfig::default() });
    let t = Instant::now();
    let u = Universe::new(names.clone());
    println!("new {:?}", t.elapsed());
    let t = Instant::now();
    let c = refs.iter().filter(|r| !r.ends_with('*') && u.contains(r)).count();
    println!("contains {c} {:?}", t.elapsed());
    let t = Instant::now();
    u.matches_prefix("x");
    println!("sort {:?}", t.elapsed());
    let t = Instant::now();
    let c = refs.iter().filter_map(|r| r.strip_suffix('*')).filter(|p| u.matches_prefix(p)).count();
    println!("wild {c} {:?}", t.elapsed());
    u.suggest("zzzz");
    let misses: Vec<&String> = refs.iter().filter(|r| !r.ends_with('*') && !u.contains(r)).collect();
    let (words, typos): (Vec<&String>, Vec<&String>) = misses.iter().partition(|m| !m.contains('_'));
    for (label, set) in [("words", &words), ("typos", &typos)] {
        let t = Instant::now();
        let c = set.iter().filter(|r| u.suggest(r).is_some()).count();
        println!("{label} {} -> {c} {:?} per {:?}", set.len(), t.elapsed(), t.elapsed() / set.len() as u32);
    }
    for r in typos.iter().take(8) { println!("{r} -> {:?}", u.suggest(r)); }
    for r in words.iter().take(3) { println!("{r} -> {:?}", u.suggest(r)); }
}
