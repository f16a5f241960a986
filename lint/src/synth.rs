//! A deterministic generator of large synthetic stacks, for the benchmarks
//! (and `cargo xtask bench-data`).
//!
//! For `N` skill references the stack has `N / 10` AI-exposed script
//! actions spread over objects of 50, `N / 50` tool records (each with a
//! label, parameters and a binding to an action), and skills of 20
//! references each; the stack lints clean apart from the planted misses. Of the references, the
//! chosen percentage miss: 70 % one-letter typos of real names
//! (substitution, insertion or deletion of a lowercase letter, never
//! landing on a real name) and 30 % random 12-letter words. Of the hits,
//! 1 % are wildcards (`action_<verb>_*`, which always match); the rest
//! name a real tool: 90 % materialised action tools, 8 % tool records and
//! 2 % platform tools. Misses and wildcards are spread evenly, so their
//! counts are exact; everything else comes from a seeded SplitMix64, so the
//! same configuration always yields the same bytes.
//!
//! ```
//! use objectstack_lint::synth::{SynthConfig, generate};
//!
//! let config = SynthConfig { references: 200, miss_percent: 5.0, seed: 1 };
//! let json = generate(&config);
//! assert_eq!(json, generate(&config));
//! assert!(json.starts_with('{'));
//! ```

use std::collections::HashSet;

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SynthConfig {
    /// Number of skill references (`N`).
    pub references: usize,
    /// Percentage of references that resolve to nothing, `0.0..=100.0`
    /// (values outside are clamped).
    pub miss_percent: f64,
    /// Seed of the pseudo-random generator.
    pub seed: u64,
}

impl Default for SynthConfig {
    fn default() -> Self {
        SynthConfig {
            references: 10_000,
            miss_percent: 0.5,
            seed: 0x0b5e_c7a5,
        }
    }
}

/// The stack as JSON text (compact, one line).
pub fn generate(config: &SynthConfig) -> String {
    let model = Model::build(config);
    let mut out = String::with_capacity(model.references.len() * 64 + 1024);
    model.write_json(&mut out);
    out
}

/// The stack's resolution universe in upstream's scan order (platform
/// tools, tool records, then action tools) and its skill references in
/// document order: what [`generate`] writes, without the JSON.
pub fn names_and_references(config: &SynthConfig) -> (Vec<String>, Vec<String>) {
    let model = Model::build(config);
    (model.universe(), model.references)
}

const ACTIONS_PER_OBJECT: usize = 50;
const REFERENCES_PER_SKILL: usize = 20;

const VERBS: [&str; ACTIONS_PER_OBJECT] = [
    "approve",
    "archive",
    "assign",
    "audit",
    "book",
    "cancel",
    "clone",
    "close",
    "complete",
    "confirm",
    "convert",
    "deactivate",
    "defer",
    "delegate",
    "dispatch",
    "duplicate",
    "enrich",
    "escalate",
    "export",
    "flag",
    "forecast",
    "freeze",
    "import",
    "invoice",
    "link",
    "lock",
    "merge",
    "notify",
    "pause",
    "publish",
    "qualify",
    "reassign",
    "recalculate",
    "reject",
    "release",
    "renew",
    "reopen",
    "reschedule",
    "resolve",
    "restore",
    "resume",
    "review",
    "schedule",
    "share",
    "start",
    "submit",
    "suspend",
    "sync",
    "transfer",
    "verify",
];

const NOUNS: [&str; 40] = [
    "account",
    "asset",
    "booking",
    "campaign",
    "case",
    "contact",
    "contract",
    "coupon",
    "customer",
    "deal",
    "delivery",
    "document",
    "employee",
    "event",
    "expense",
    "invoice",
    "issue",
    "lead",
    "license",
    "meeting",
    "milestone",
    "opportunity",
    "order",
    "partner",
    "payment",
    "policy",
    "product",
    "project",
    "quote",
    "refund",
    "renewal",
    "request",
    "shipment",
    "subscription",
    "supplier",
    "task",
    "territory",
    "ticket",
    "vendor",
    "warranty",
];

/// SplitMix64 (Steele, Lea and Flood): small, fast and good enough here.
#[derive(Debug, Clone)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }

    fn letter(&mut self) -> char {
        char::from(b'a' + self.below(26) as u8)
    }
}

/// Whether item `i` of `total` is one of `count` evenly spread picks.
fn spread(i: usize, count: usize, total: usize) -> bool {
    if total == 0 {
        return false;
    }
    let (i, count, total) = (i as u128, count as u128, total as u128);
    (i + 1) * count / total > i * count / total
}

struct Action {
    verb: &'static str,
    object: usize,
}

struct Model {
    objects: usize,
    actions: Vec<Action>,
    /// Tool record `i` binds action `tools[i]`.
    tools: Vec<usize>,
    /// Whether a record binds action `i`.
    bound: Vec<bool>,
    references: Vec<String>,
}

fn object_name(j: usize) -> String {
    format!("{}_{j}", NOUNS[j % NOUNS.len()])
}

fn action_name(action: &Action) -> String {
    format!("{}_{}", action.verb, object_name(action.object))
}

fn tool_name(action: &Action) -> String {
    format!(
        "{}_{}_{}",
        NOUNS[action.object % NOUNS.len()],
        action.verb,
        action.object
    )
}

impl Model {
    fn build(config: &SynthConfig) -> Model {
        let n = config.references;
        let action_count = if n == 0 { 0 } else { (n / 10).max(1) };
        let objects = action_count.div_ceil(ACTIONS_PER_OBJECT);
        let actions: Vec<Action> = (0..action_count)
            .map(|a| Action {
                verb: VERBS[a % ACTIONS_PER_OBJECT],
                object: a / ACTIONS_PER_OBJECT,
            })
            .collect();
        let tools: Vec<usize> = (0..n / 50).map(|i| (i * 5) % action_count.max(1)).collect();
        let mut bound = vec![false; actions.len()];
        for &a in &tools {
            if let Some(b) = bound.get_mut(a) {
                *b = true;
            }
        }
        let mut model = Model {
            objects,
            actions,
            tools,
            bound,
            references: Vec::with_capacity(n),
        };
        model.references = model.make_references(config);
        model
    }

    fn universe(&self) -> Vec<String> {
        let mut names: Vec<String> = objectstack_registry::all_names()
            .map(str::to_owned)
            .collect();
        names.extend(self.tools.iter().map(|&a| tool_name(&self.actions[a])));
        names.extend(
            self.actions
                .iter()
                .map(|a| format!("{}{}", objectstack_registry::ACTION_PREFIX, action_name(a))),
        );
        names
    }

    fn make_references(&self, config: &SynthConfig) -> Vec<String> {
        let n = config.references;
        let mut rng = SplitMix64(config.seed);
        let percent = if config.miss_percent.is_nan() {
            0.0
        } else {
            config.miss_percent.clamp(0.0, 100.0)
        };
        let misses = ((n as f64) * percent / 100.0).round() as usize;
        let universe = self.universe();
        let known: HashSet<&str> = universe.iter().map(String::as_str).collect();
        let platform: Vec<&str> = objectstack_registry::all_names().collect();
        let mut out = Vec::with_capacity(n);
        let (mut miss, mut hit) = (0usize, 0usize);
        for r in 0..n {
            if spread(r, misses, n) {
                let word = spread(miss, misses * 3 / 10, misses);
                miss += 1;
                out.push(if word {
                    self.random_word(&mut rng, &known)
                } else {
                    self.typo(&mut rng, &known, &platform)
                });
                continue;
            }
            let wildcard = spread(hit, (n - misses) / 100, n - misses);
            hit += 1;
            if wildcard && !self.actions.is_empty() {
                let verb = VERBS[rng.below(ACTIONS_PER_OBJECT)];
                out.push(format!("{}{verb}_*", objectstack_registry::ACTION_PREFIX));
            } else {
                out.push(self.real_name(&mut rng, &platform));
            }
        }
        out
    }

    /// A real name: 90 % action tools, 8 % tool records, 2 % platform.
    fn real_name(&self, rng: &mut SplitMix64, platform: &[&str]) -> String {
        let roll = rng.below(100);
        if roll < 2 || self.actions.is_empty() {
            platform[rng.below(platform.len())].to_owned()
        } else if roll < 10 && !self.tools.is_empty() {
            tool_name(&self.actions[self.tools[rng.below(self.tools.len())]])
        } else {
            // A bound action's raw tool is superseded by its record
            // (ADR-0109 Phase 2): name the next action instead.
            let mut a = rng.below(self.actions.len());
            if self.actions.len() > 1 && self.bound.get(a) == Some(&true) {
                a = (a + 1) % self.actions.len();
            }
            let action = &self.actions[a];
            format!(
                "{}{}",
                objectstack_registry::ACTION_PREFIX,
                action_name(action)
            )
        }
    }

    fn typo(&self, rng: &mut SplitMix64, known: &HashSet<&str>, platform: &[&str]) -> String {
        loop {
            let mut chars: Vec<char> = self.real_name(rng, platform).chars().collect();
            // Substitutions and deletions hit a letter, so a typo keeps the
            // name's underscores.
            let letters: Vec<usize> = (0..chars.len())
                .filter(|&i| chars[i].is_ascii_lowercase())
                .collect();
            if letters.is_empty() {
                continue;
            }
            let at = letters[rng.below(letters.len())];
            match rng.below(3) {
                0 => chars[at] = rng.letter(),
                1 => chars.insert(rng.below(chars.len() + 1), rng.letter()),
                _ => {
                    chars.remove(at);
                }
            }
            let typo: String = chars.into_iter().collect();
            if !typo.is_empty() && !known.contains(typo.as_str()) {
                return typo;
            }
        }
    }

    fn random_word(&self, rng: &mut SplitMix64, known: &HashSet<&str>) -> String {
        loop {
            let word: String = (0..12).map(|_| rng.letter()).collect();
            if !known.contains(word.as_str()) {
                return word;
            }
        }
    }

    fn write_json(&self, out: &mut String) {
        out.push_str("{\"name\":\"synthetic_stack\",\"objects\":[");
        for j in 0..self.objects {
            if j > 0 {
                out.push(',');
            }
            let object = object_name(j);
            let noun = NOUNS[j % NOUNS.len()];
            out.push_str("{\"name\":");
            push_str(out, &object);
            out.push_str(",\"label\":");
            push_str(out, &format!("{} {j}", title(noun)));
            out.push_str(
                ",\"fields\":{\"name\":{\"type\":\"text\",\"label\":\"Name\"},\
                 \"status\":{\"type\":\"select\",\"label\":\"Status\"}},\"actions\":[",
            );
            let first = j * ACTIONS_PER_OBJECT;
            let last = (first + ACTIONS_PER_OBJECT).min(self.actions.len());
            for (k, action) in self.actions[first..last].iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                write_action(out, action, noun);
            }
            out.push_str("]}");
        }
        out.push_str("],\"tools\":[");
        for (i, &a) in self.tools.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let action = &self.actions[a];
            out.push_str("{\"name\":");
            push_str(out, &tool_name(action));
            out.push_str(",\"label\":");
            push_str(
                out,
                &format!(
                    "{} {} {}",
                    title(action.verb),
                    title(NOUNS[action.object % NOUNS.len()]),
                    action.object
                ),
            );
            out.push_str(",\"description\":");
            push_str(
                out,
                &format!(
                    "{} one {} record on request.",
                    title(action.verb),
                    NOUNS[action.object % NOUNS.len()]
                ),
            );
            // No `parameters`: a bound record takes its action's.
            out.push_str(",\"binding\":{\"type\":\"action\",\"name\":");
            push_str(out, &action_name(action));
            out.push_str("}}");
        }
        out.push_str("],\"skills\":[");
        for (s, refs) in self.references.chunks(REFERENCES_PER_SKILL).enumerate() {
            if s > 0 {
                out.push(',');
            }
            out.push_str(&format!(
                "{{\"name\":\"skill_{s}\",\"label\":\"Skill {s}\",\"tools\":["
            ));
            for (t, reference) in refs.iter().enumerate() {
                if t > 0 {
                    out.push(',');
                }
                push_str(out, reference);
            }
            out.push_str("]}");
        }
        out.push_str("]}");
    }
}

fn write_action(out: &mut String, action: &Action, noun: &str) {
    let name = action_name(action);
    out.push_str("{\"name\":");
    push_str(out, &name);
    out.push_str(",\"label\":");
    push_str(out, &format!("{} {}", title(action.verb), title(noun)));
    out.push_str(",\"type\":\"script\",\"target\":");
    push_str(out, &camel(&name));
    out.push_str(",\"locations\":[\"record_header\"],\"successMessage\":\"Done.\"");
    out.push_str(",\"ai\":{\"exposed\":true,\"description\":");
    push_str(
        out,
        &format!(
            "{} this {noun} record when the user asks to {} it.",
            title(action.verb),
            action.verb
        ),
    );
    out.push_str("}}");
}

fn title(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn camel(snake: &str) -> String {
    let mut parts = snake.split('_');
    let mut out = parts.next().unwrap_or_default().to_owned();
    for part in parts {
        out.push_str(&title(part));
    }
    out
}

/// Appends `s` as a JSON string literal.
fn push_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn config(references: usize, miss_percent: f64) -> SynthConfig {
        SynthConfig {
            references,
            miss_percent,
            seed: 42,
        }
    }

    #[test]
    fn shape_matches_the_issue() {
        let json = generate(&config(10_000, 5.0));
        let stack: Value = serde_json::from_str(&json).unwrap();
        let objects = stack["objects"].as_array().unwrap();
        assert_eq!(objects.len(), 20);
        assert!(
            objects
                .iter()
                .all(|o| o["actions"].as_array().unwrap().len() == 50)
        );
        assert_eq!(stack["tools"].as_array().unwrap().len(), 200);
        let skills = stack["skills"].as_array().unwrap();
        assert_eq!(skills.len(), 500);
        assert!(
            skills
                .iter()
                .all(|s| s["tools"].as_array().unwrap().len() == 20)
        );
        let action = &objects[3]["actions"][7];
        assert_eq!(action["ai"]["exposed"], Value::Bool(true));
        assert_eq!(action["type"], "script");
    }

    #[test]
    fn misses_wildcards_and_kinds_are_exact() {
        let cfg = config(20_000, 5.0);
        let (names, refs) = names_and_references(&cfg);
        let known: HashSet<&str> = names.iter().map(String::as_str).collect();
        assert_eq!(refs.len(), 20_000);
        let wildcards: Vec<&String> = refs.iter().filter(|r| r.ends_with('*')).collect();
        assert_eq!(wildcards.len(), 190);
        for w in &wildcards {
            let prefix = w.trim_end_matches('*');
            assert!(names.iter().any(|n| n.starts_with(prefix)), "{w}");
        }
        let misses: Vec<&String> = refs
            .iter()
            .filter(|r| !r.ends_with('*') && !known.contains(r.as_str()))
            .collect();
        assert_eq!(misses.len(), 1_000);
        let words = misses.iter().filter(|m| !m.contains('_')).count();
        assert!(misses.iter().all(|m| m.contains('_') || m.len() == 12));
        assert_eq!(words, 300);
        // The typos are one edit away from a real name.
        for typo in misses.iter().filter(|m| m.contains('_')).take(50) {
            let near = names.iter().any(|n| {
                n.len().abs_diff(typo.len()) <= 1
                    && objectstack_spec::text::levenshtein_utf16(n, typo) == 1
            });
            assert!(near, "{typo}");
        }
    }

    #[test]
    fn generation_is_deterministic_and_seeded() {
        let a = generate(&config(2_000, 5.0));
        assert_eq!(a, generate(&config(2_000, 5.0)));
        let other = SynthConfig {
            seed: 43,
            ..config(2_000, 5.0)
        };
        assert_ne!(a, generate(&other));
    }

    #[test]
    fn the_json_agrees_with_names_and_references() {
        let cfg = config(1_000, 10.0);
        let stack: Value = serde_json::from_str(&generate(&cfg)).unwrap();
        let (names, refs) = names_and_references(&cfg);
        let from_json: Vec<&str> = stack["skills"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|s| s["tools"].as_array().unwrap())
            .map(|t| t.as_str().unwrap())
            .collect();
        assert_eq!(from_json, refs);
        let tools: Vec<&str> = stack["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        let platform = objectstack_registry::all_names().count();
        assert_eq!(&names[platform..platform + tools.len()], tools.as_slice());
        assert_eq!(names.len(), platform + tools.len() + 100);
    }

    #[test]
    fn the_only_findings_are_the_planted_misses() {
        let json = generate(&config(2_000, 5.0));
        let arena = objectstack_spec::json::Arena::new();
        let root = objectstack_spec::json::parse_document(json.as_bytes(), &arena).unwrap();
        let findings = crate::lint(&crate::Source {
            file: "synth.json",
            text: Some(&json),
            root,
        });
        let rules: HashSet<&str> = findings.iter().map(|f| f.rule.as_ref()).collect();
        assert_eq!(rules, HashSet::from(["ai-skill-tool-unresolved"]));
        assert_eq!(findings.len(), 100);
    }

    #[test]
    fn degenerate_configurations_do_not_panic() {
        for (n, p) in [(0, 0.0), (1, 100.0), (7, f64::NAN), (30, -5.0), (45, 250.0)] {
            let json = generate(&config(n, p));
            let stack: Value = serde_json::from_str(&json).unwrap();
            assert!(stack.is_object());
        }
    }
}
