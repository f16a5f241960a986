//! The random stacks `parity` compares on: small, seeded, and aimed at
//! every branch of `ai-skill-tool-unresolved`.
//!
//! A stack has a handful of actions (stack-level and on objects), tool
//! records and skills, written in every collection shape upstream reads
//! (arrays with junk entries, maps keyed by name with and without an inner
//! `name`, non-collections, absent). Actions cover every type, missing and
//! junk types, truthy and falsy targets and bodies, `operation: "update"`,
//! and `ai` blocks exposed or not, with or without a description, with
//! well-formed optional keys. Skill references are drawn from the stack's
//! own names and the platform registry, then bent: typos, substrings and
//! superstrings (the suggestion's two scoring modes), `action_` forms of
//! exposed and unexposed actions, bare action names, wildcards that match
//! and that do not, short names, names outside the Basic Multilingual Plane
//! (UTF-16 lengths), and non-string junk.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

/// A SplitMix64 generator: small, fast, and the same everywhere.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`0` when `n` is 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        (self.next_u64() % n as u64) as usize
    }

    /// True with probability `percent` / 100.
    pub(crate) fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent as usize
    }

    pub(crate) fn pick<T: Copy>(&mut self, items: &[T], fallback: T) -> T {
        items
            .get(self.below(items.len()))
            .copied()
            .unwrap_or(fallback)
    }

    /// An index into `weights`, chosen in proportion to the weights.
    pub(crate) fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u32 = weights.iter().sum();
        let mut roll = self.below(total as usize) as u32;
        for (i, w) in weights.iter().enumerate() {
            if roll < *w {
                return i;
            }
            roll -= w;
        }
        0
    }
}

/// How often each generator branch was taken over a run.
#[derive(Debug, Default)]
pub(crate) struct Coverage {
    counts: BTreeMap<&'static str, u64>,
}

impl Coverage {
    fn hit(&mut self, what: &'static str) {
        *self.counts.entry(what).or_default() += 1;
    }

    #[cfg(test)]
    pub(crate) fn count(&self, what: &str) -> u64 {
        self.counts.get(what).copied().unwrap_or(0)
    }

    #[cfg(test)]
    pub(crate) fn categories(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.counts.keys().copied()
    }

    pub(crate) fn summary(&self) -> String {
        let parts: Vec<String> = self
            .counts
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        format!(
            "generator coverage ({} branches): {}",
            self.counts.len(),
            parts.join(", ")
        )
    }
}

const ACTION_NAMES: &[&str] = &[
    "send_invoice",
    "close_case",
    "escalate",
    "approve_deal",
    "archive",
    "log_call",
    "merge_leads",
    "assign_owner",
    "refund",
    "sync_crm",
    "query_data",
    "a",
    "ab",
];

const OBJECT_NAMES: &[&str] = &["account", "case", "deal", "invoice", "lead"];

const TOOL_NAMES: &[&str] = &[
    "lookup_account",
    "score_lead",
    "my_tool",
    "query_dataa",
    "get_records",
    "action_fake",
    "describe_object",
    "action_close_case",
    "forecast",
    "\u{1F600}_tool",
    "t\u{1F600}\u{1F600}l",
    "caf\u{e9}_lookup",
    "q",
    "ab",
    "da",
];

/// Keys at and around the edge of JavaScript's array-index rule (a
/// canonical decimal integer below 2^32 - 1).
const NUMERIC_LOOKING_KEYS: &[&str] = &[
    "01",
    "-1",
    "1.5",
    "1e3",
    " 1",
    "4294967294",
    "4294967295",
    "4294967296",
    "00",
    "0",
];

/// Keys an object inherits in JavaScript.
const PROTOTYPE_KEYS: &[&str] = &["__proto__", "constructor", "toString", "hasOwnProperty"];

const SKILL_NAMES: &[&str] = &[
    "case_triage",
    "sales_assist",
    "billing",
    "ops",
    "s",
    "say \"hi\"",
    "\u{fc}nic\u{f8}de \u{1F600}",
];

const SYLLABLES: &[&str] = &[
    "qu", "ery", "da", "ta", "get", "rec", "ord", "list", "ob", "ject", "ap", "ply", "edit",
    "sync", "lo", "ad", "to", "ol", "s", "_",
];

const LONG_DESCRIPTION: &str =
    "Performs this business operation on the record, described for a model.";

/// The random stack of `case` under `seed`.
pub(crate) fn generate(seed: u64, case: u64, coverage: &mut Coverage) -> Value {
    let mut mixer = Rng::new(seed ^ case.wrapping_mul(0xd1b5_4a32_d192_ed03));
    let rng = Rng::new(mixer.next_u64());
    let mut g = Gen {
        rng,
        cov: coverage,
        action_names: Vec::new(),
        tool_names: Vec::new(),
    };
    g.stack()
}

struct Gen<'c> {
    rng: Rng,
    cov: &'c mut Coverage,
    action_names: Vec<String>,
    tool_names: Vec<String>,
}

impl Gen<'_> {
    fn stack(&mut self) -> Value {
        let mut stack = Map::new();
        if self.rng.chance(20) {
            stack.insert("name".into(), json!("parity_app"));
        }

        // Actions: a few names, each declared once or twice, at stack level
        // or on an object.
        let count = self.rng.below(7);
        for _ in 0..count {
            let name = if self.rng.chance(75) {
                self.rng.pick(ACTION_NAMES, "a").to_owned()
            } else {
                self.word()
            };
            self.action_names.push(name);
        }
        let object_count = self.rng.below(4);
        let mut stack_actions = Vec::new();
        let mut object_actions: Vec<Vec<Map<String, Value>>> = vec![Vec::new(); object_count];
        for name in self.action_names.clone() {
            let copies = if self.rng.chance(15) { 2 } else { 1 };
            for _ in 0..copies {
                let action = self.action(&name);
                if object_count > 0 && self.rng.chance(60) {
                    let i = self.rng.below(object_count);
                    if let Some(list) = object_actions.get_mut(i) {
                        list.push(action);
                    }
                } else {
                    stack_actions.push(action);
                }
            }
        }
        if (!stack_actions.is_empty() || self.rng.chance(10))
            && let Some(c) = self.collection(stack_actions)
        {
            stack.insert("actions".into(), c);
        }
        if object_count > 0 {
            let mut objects = Vec::new();
            for actions in object_actions {
                let mut object = Map::new();
                object.insert("name".into(), json!(self.rng.pick(OBJECT_NAMES, "case")));
                if self.rng.chance(30) {
                    object.insert("label".into(), json!("Thing"));
                    object.insert("fields".into(), json!({"status": {"type": "text"}}));
                }
                if let Some(c) = self.collection(actions) {
                    object.insert("actions".into(), c);
                }
                objects.push(object);
            }
            if let Some(c) = self.collection(objects) {
                stack.insert("objects".into(), c);
            }
        }

        // Tool records.
        let tools: Vec<Map<String, Value>> = (0..self.rng.below(4)).map(|_| self.tool()).collect();
        if (!tools.is_empty() || self.rng.chance(10))
            && let Some(c) = self.collection(tools)
        {
            stack.insert("tools".into(), c);
        }

        // Skills, last: their references draw on everything above.
        let skills: Vec<Map<String, Value>> =
            (0..1 + self.rng.below(4)).map(|_| self.skill()).collect();
        if let Some(c) = self.collection(skills) {
            stack.insert("skills".into(), c);
        }
        if self.rng.chance(10) {
            stack.insert("views".into(), json!([{"name": "all"}]));
        }
        Value::Object(stack)
    }

    /// Writes records in one of the shapes upstream reads leniently.
    fn collection(&mut self, items: Vec<Map<String, Value>>) -> Option<Value> {
        match self.rng.weighted(&[55, 27, 9, 9]) {
            0 => {
                self.cov.hit("collection: array");
                let mut out: Vec<Value> = items.into_iter().map(Value::Object).collect();
                if self.rng.chance(25) {
                    self.cov.hit("collection: array with non-record entries");
                    for _ in 0..1 + self.rng.below(3) {
                        let junk = self.junk();
                        let at = self.rng.below(out.len() + 1);
                        out.insert(at, junk);
                    }
                }
                Some(Value::Array(out))
            }
            1 => {
                self.cov.hit("collection: map keyed by name");
                let mut out = Map::new();
                for mut item in items {
                    let key = match item.get("name").and_then(Value::as_str) {
                        Some(n) if !n.is_empty() && !self.rng.chance(10) => n.to_owned(),
                        _ => self.word(),
                    };
                    let key = match self.rng.weighted(&[93, 4, 2, 1]) {
                        0 => key,
                        1 => {
                            // JavaScript lists array-index keys first, in
                            // numeric order.
                            self.cov.hit("collection: map with an array-index key");
                            self.rng.below(20).to_string()
                        }
                        2 => {
                            self.cov
                                .hit("collection: map with a key that looks numeric");
                            self.rng.pick(NUMERIC_LOOKING_KEYS, "01").to_owned()
                        }
                        _ => {
                            self.cov.hit("collection: map with an Object.prototype key");
                            self.rng.pick(PROTOTYPE_KEYS, "constructor").to_owned()
                        }
                    };
                    let inner = item.get("name").cloned();
                    match self.rng.weighted(&[60, 25, 15]) {
                        0 => {
                            // The key is the name: drop the inner one when it matches.
                            if inner.as_ref().and_then(Value::as_str) == Some(key.as_str()) {
                                item.shift_remove("name");
                            }
                        }
                        1 => self.cov.hit("collection: map entry with its own name"),
                        _ => {
                            self.cov.hit("collection: map entry that is not a record");
                            out.insert(key, self.junk());
                            continue;
                        }
                    }
                    out.insert(key, Value::Object(item));
                }
                Some(Value::Object(out))
            }
            2 => {
                self.cov.hit("collection: not a collection");
                Some(self.junk())
            }
            _ => {
                self.cov.hit("collection: absent");
                None
            }
        }
    }

    fn junk(&mut self) -> Value {
        match self.rng.below(7) {
            0 => Value::Null,
            1 => json!(3),
            2 => json!("text"),
            3 => json!([]),
            4 => json!(true),
            5 => json!(0),
            _ => json!(""),
        }
    }

    fn word(&mut self) -> String {
        let mut w = String::new();
        for _ in 0..2 + self.rng.below(3) {
            w.push_str(self.rng.pick(SYLLABLES, "x"));
        }
        let w = w.trim_matches('_').to_owned();
        if w.is_empty() { "zz".to_owned() } else { w }
    }

    fn name_value(&mut self, name: &str) -> Option<Value> {
        match self.rng.weighted(&[90, 4, 3, 3]) {
            0 => Some(json!(name)),
            1 => {
                self.cov.hit("record: no name");
                None
            }
            2 => {
                self.cov.hit("record: non-string name");
                Some(json!(7))
            }
            _ => {
                self.cov.hit("record: empty name");
                Some(json!(""))
            }
        }
    }

    fn action(&mut self, name: &str) -> Map<String, Value> {
        let mut a = Map::new();
        if let Some(n) = self.name_value(name) {
            a.insert("name".into(), n);
        }
        if self.rng.chance(40) {
            a.insert("label".into(), json!("Do it"));
        }
        let types: &[(&'static str, Option<Value>)] = &[
            ("type: script", Some(json!("script"))),
            ("type: api", Some(json!("api"))),
            ("type: flow", Some(json!("flow"))),
            ("type: url", Some(json!("url"))),
            ("type: modal", Some(json!("modal"))),
            ("type: form", Some(json!("form"))),
            ("type: absent", None),
            ("type: empty", Some(json!(""))),
            ("type: other string", Some(json!("Script"))),
            ("type: not a string", Some(json!(42))),
        ];
        let i = self.rng.weighted(&[26, 15, 15, 7, 7, 7, 10, 3, 5, 5]);
        if let Some((label, value)) = types.get(i) {
            self.cov.hit(label);
            if let Some(v) = value {
                a.insert("type".into(), v.clone());
            }
        }
        if let Some(target) = self.maybe_truthy("target", "do_it") {
            a.insert("target".into(), target);
        }
        if self.rng.chance(35)
            && let Some(body) = self.maybe_truthy("body", "return 1")
        {
            a.insert("body".into(), body);
        }
        match self.rng.weighted(&[78, 14, 8]) {
            0 => {}
            1 => {
                self.cov.hit("operation: update");
                a.insert("operation".into(), json!("update"));
                if self.rng.chance(80) {
                    a.insert("patch".into(), json!({"status": "closed"}));
                }
            }
            _ => {
                self.cov.hit("operation: other");
                let op = self.rng.pick(&["delete", "UPDATE", "create"], "delete");
                a.insert("operation".into(), json!(op));
            }
        }
        if self.rng.chance(10) {
            a.insert("locations".into(), json!(["record_header"]));
            a.insert("variant".into(), json!("danger"));
        }
        if let Some(ai) = self.ai() {
            a.insert("ai".into(), ai);
        }
        a
    }

    /// A value for a target-like key: absent, truthy, or falsy in one of
    /// JavaScript's ways (and truthy in its surprising ones).
    fn maybe_truthy(&mut self, key: &'static str, good: &str) -> Option<Value> {
        let i = self.rng.weighted(&[30, 45, 5, 3, 3, 3, 3, 3, 3, 2]);
        let (label, value) = match i {
            0 => ("absent", None),
            1 => ("a string", Some(json!(good))),
            2 => ("empty string", Some(json!(""))),
            3 => match self.rng.below(3) {
                // JSON `0`, `0.0` and `-0.0` are all falsy in JavaScript.
                0 => ("zero", Some(json!(0))),
                1 => ("zero", Some(json!(0.0))),
                _ => ("zero", Some(json!(-0.0))),
            },
            4 => ("false", Some(json!(false))),
            5 => ("null", Some(Value::Null)),
            6 => ("\"0\" (truthy)", Some(json!("0"))),
            7 => ("[] (truthy)", Some(json!([]))),
            8 => ("{} (truthy)", Some(json!({}))),
            _ => ("a number (truthy)", Some(json!(5))),
        };
        self.cov.hit(match (key, label) {
            ("target", "absent") => "target: absent",
            ("target", "a string") => "target: a string",
            ("target", "empty string") => "target: empty string",
            ("target", "zero") => "target: zero",
            ("target", "false") => "target: false",
            ("target", "null") => "target: null",
            ("target", "\"0\" (truthy)") => "target: \"0\"",
            ("target", "[] (truthy)") => "target: []",
            ("target", "{} (truthy)") => "target: {}",
            ("target", _) => "target: a number",
            (_, "absent") => "body: absent",
            (_, "a string") => "body: a string",
            _ => "body: falsy or odd",
        });
        value
    }

    /// A well-formed `ai` block, or none, or a non-object one.
    fn ai(&mut self) -> Option<Value> {
        match self.rng.weighted(&[15, 3, 2, 2, 78]) {
            0 => {
                self.cov.hit("ai: absent");
                return None;
            }
            1 => {
                self.cov.hit("ai: null");
                return Some(Value::Null);
            }
            2 => {
                self.cov.hit("ai: a string");
                return Some(json!("exposed"));
            }
            3 => {
                self.cov.hit("ai: an array");
                return Some(json!([true]));
            }
            _ => {}
        }
        let mut ai = Map::new();
        let exposed = match self.rng.weighted(&[58, 14, 4, 3, 21]) {
            0 => Some(json!(true)),
            1 => Some(json!(false)),
            2 => Some(json!("true")),
            3 => Some(json!(1)),
            _ => None,
        };
        self.cov.hit(match &exposed {
            Some(Value::Bool(true)) => "ai.exposed: true",
            Some(Value::Bool(false)) => "ai.exposed: false",
            Some(_) => "ai.exposed: not a boolean",
            None => "ai.exposed: absent",
        });
        if let Some(e) = exposed {
            ai.insert("exposed".into(), e);
        }
        let description = match self.rng.weighted(&[62, 9, 7, 4, 3, 15]) {
            0 => Some(json!(LONG_DESCRIPTION)),
            1 => Some(json!("")),
            2 => Some(json!("Short.")),
            3 => Some(json!(42)),
            4 => Some(json!("   ")),
            _ => None,
        };
        self.cov.hit(match &description {
            Some(Value::String(s)) if s.is_empty() => "ai.description: empty",
            Some(Value::String(s)) if s.trim().is_empty() => "ai.description: blank",
            Some(Value::String(_)) => "ai.description: a string",
            Some(_) => "ai.description: not a string",
            None => "ai.description: absent",
        });
        if let Some(d) = description {
            ai.insert("description".into(), d);
        }
        // Well-formed optional keys only (see the module docs of `parity`).
        if self.rng.chance(15) {
            let c = self
                .rng
                .pick(objectstack_spec::materialise::AI_CATEGORIES, "data");
            ai.insert("category".into(), json!(c));
            self.cov.hit("ai.category");
        }
        if self.rng.chance(15) {
            ai.insert("requiresConfirmation".into(), json!(self.rng.chance(50)));
            self.cov.hit("ai.requiresConfirmation");
        }
        if self.rng.chance(8) {
            let hints = if self.rng.chance(50) {
                json!({})
            } else {
                json!({"recordId": {"description": "The record to act on."}})
            };
            ai.insert("paramHints".into(), hints);
            self.cov.hit("ai.paramHints");
        }
        if self.rng.chance(8) {
            ai.insert(
                "outputSchema".into(),
                json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
            );
            self.cov.hit("ai.outputSchema");
        }
        Some(Value::Object(ai))
    }

    fn tool(&mut self) -> Map<String, Value> {
        let name = match self.rng.weighted(&[60, 15, 15, 10]) {
            0 => self.rng.pick(TOOL_NAMES, "my_tool").to_owned(),
            1 => {
                self.cov.hit("tool record: a platform name");
                self.platform_name().to_owned()
            }
            2 => {
                self.cov.hit("tool record: an action_ name");
                let action = self.action_name();
                format!("action_{action}")
            }
            _ => self.word(),
        };
        self.tool_names.push(name.clone());
        let mut t = Map::new();
        if let Some(n) = self.name_value(&name) {
            t.insert("name".into(), n);
        }
        if self.rng.chance(50) {
            t.insert("label".into(), json!("A tool"));
            t.insert("description".into(), json!("Does something."));
        }
        t
    }

    fn skill(&mut self) -> Map<String, Value> {
        let mut s = Map::new();
        let name = self.rng.pick(SKILL_NAMES, "s");
        if let Some(n) = self.name_value(name) {
            s.insert("name".into(), n);
        }
        let refs: Vec<Value> = (0..self.rng.below(9)).map(|_| self.reference()).collect();
        match self.rng.weighted(&[86, 5, 5, 4]) {
            0 => {
                s.insert("tools".into(), Value::Array(refs));
            }
            1 => {
                self.cov.hit("skill.tools: a map");
                let map: Map<String, Value> = refs
                    .into_iter()
                    .enumerate()
                    .map(|(i, r)| (format!("t{i}"), r))
                    .collect();
                s.insert("tools".into(), Value::Object(map));
            }
            2 => {
                self.cov.hit("skill.tools: a string");
                s.insert("tools".into(), json!("query_data"));
            }
            _ => self.cov.hit("skill.tools: absent"),
        }
        if self.rng.chance(20) {
            s.insert("surface".into(), json!("ask"));
        }
        s
    }

    fn platform_name(&mut self) -> &'static str {
        let names: Vec<&'static str> = objectstack_registry::all_names().collect();
        self.rng.pick(&names, "query_data")
    }

    fn action_name(&mut self) -> String {
        if self.action_names.is_empty() || self.rng.chance(10) {
            return self.rng.pick(ACTION_NAMES, "a").to_owned();
        }
        let i = self.rng.below(self.action_names.len());
        self.action_names.get(i).cloned().unwrap_or_default()
    }

    fn tool_name(&mut self) -> String {
        if self.tool_names.is_empty() {
            return self.rng.pick(TOOL_NAMES, "my_tool").to_owned();
        }
        let i = self.rng.below(self.tool_names.len());
        self.tool_names.get(i).cloned().unwrap_or_default()
    }

    /// A name the universe may hold: platform, action tool or tool record.
    fn known_name(&mut self) -> String {
        match self.rng.below(3) {
            0 => self.platform_name().to_owned(),
            1 => format!("action_{}", self.action_name()),
            _ => self.tool_name(),
        }
    }

    fn reference(&mut self) -> Value {
        let kinds: &[(&'static str, u32)] = &[
            ("ref: platform name", 14),
            ("ref: action_ of a stack action", 16),
            ("ref: bare action name", 7),
            ("ref: tool record name", 7),
            ("ref: typo of a known name", 14),
            ("ref: substring of a known name", 5),
            ("ref: superstring of a known name", 5),
            ("ref: wildcard", 9),
            ("ref: short name", 3),
            ("ref: outside the BMP or accented", 3),
            ("ref: fictional word", 6),
            ("ref: action_ of an unknown action", 3),
            ("ref: odd spacing or case", 2),
            ("ref: empty string", 2),
            ("ref: not a string", 4),
        ];
        let weights: Vec<u32> = kinds.iter().map(|(_, w)| *w).collect();
        let i = self.rng.weighted(&weights);
        let label = kinds.get(i).map_or("ref: platform name", |(l, _)| *l);
        self.cov.hit(label);
        let s = match i {
            0 => self.platform_name().to_owned(),
            1 => format!("action_{}", self.action_name()),
            2 => self.action_name(),
            3 => self.tool_name(),
            4 => {
                let base = self.known_name();
                self.typo(&base)
            }
            5 => {
                let base = self.known_name();
                let chars: Vec<char> = base.chars().collect();
                let len = chars.len();
                let start = self.rng.below(len.max(1));
                let take = 1 + self.rng.below(len.saturating_sub(start).max(1));
                chars.iter().skip(start).take(take).collect()
            }
            6 => {
                let base = self.known_name();
                match self.rng.below(3) {
                    0 => format!("{base}s"),
                    1 => format!("my_{base}"),
                    _ => format!("{base}_v2"),
                }
            }
            7 => self.wildcard(),
            8 => {
                let base = self.known_name();
                base.chars().take(1 + self.rng.below(2)).collect()
            }
            9 => {
                let base = self.known_name();
                match self.rng.below(4) {
                    0 => format!("{base}\u{1F600}"),
                    1 => "\u{1F600}\u{1F600}".to_owned(),
                    2 => base.replacen('e', "\u{e9}", 1),
                    _ => format!("\u{1D4B6}{}", base.get(1..).unwrap_or_default()),
                }
            }
            10 => self.word(),
            11 => format!("action_{}", self.word()),
            12 => {
                let base = self.known_name();
                match self.rng.below(3) {
                    0 => format!(" {base}"),
                    1 => format!("{base} "),
                    _ => base.to_uppercase(),
                }
            }
            13 => String::new(),
            _ => {
                return match self.rng.below(5) {
                    0 => Value::Null,
                    1 => json!(5),
                    2 => json!(true),
                    3 => json!({"name": "query_data"}),
                    _ => json!(["query_data"]),
                };
            }
        };
        Value::String(s)
    }

    fn wildcard(&mut self) -> String {
        match self.rng.below(8) {
            0 => "action_*".to_owned(),
            1 => "*".to_owned(),
            2 => format!("{}*", self.word()),
            3 => "zzz_*".to_owned(),
            4 => self
                .rng
                .pick(
                    &["action_**", "query*data", "action_", "**", "\u{1F600}*"],
                    "**",
                )
                .to_owned(),
            _ => {
                let base = self.known_name();
                let cut = self.rng.below(base.len() + 1);
                let prefix: String = base.chars().take(cut).collect();
                format!("{prefix}*")
            }
        }
    }

    /// One or two edits of `base` (substitution, insertion, deletion,
    /// transposition).
    fn typo(&mut self, base: &str) -> String {
        let mut chars: Vec<char> = base.chars().collect();
        for _ in 0..1 + self.rng.below(2) {
            let len = chars.len();
            let at = self.rng.below(len.max(1));
            let letter = char::from(b'a' + self.rng.below(26) as u8);
            match self.rng.below(4) {
                0 if len > 0 => {
                    if let Some(c) = chars.get_mut(at) {
                        *c = letter;
                    }
                }
                1 => chars.insert(at.min(len), letter),
                2 if len > 1 => {
                    chars.remove(at);
                }
                _ if len > 1 && at + 1 < len => chars.swap(at, at + 1),
                _ => chars.push(letter),
            }
        }
        chars.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parity::{Kind, ours};

    #[test]
    fn the_same_seed_and_case_give_the_same_stack() {
        let mut c = Coverage::default();
        assert_eq!(generate(7, 3, &mut c), generate(7, 3, &mut c));
        assert_ne!(generate(7, 3, &mut c), generate(7, 4, &mut c));
        assert_ne!(generate(7, 3, &mut c), generate(8, 3, &mut c));
    }

    /// Every generator branch is taken, and our lint sees every kind of
    /// finding, over a few hundred cases.
    #[test]
    fn covers_every_branch_of_the_rule() {
        let mut cov = Coverage::default();
        let mut kinds = BTreeMap::new();
        let mut suggested_action = 0;
        let mut suggested_other = 0;
        for case in 0..400 {
            let stack = generate(1, case, &mut cov);
            for f in ours(&stack.to_string()).unwrap() {
                *kinds.entry(f.kind).or_insert(0) += 1;
                match f.suggestion.as_deref() {
                    Some(s)
                        if f.reference.as_deref().map(|r| format!("action_{r}"))
                            == Some(s.to_owned()) =>
                    {
                        suggested_action += 1;
                    }
                    Some(_) => suggested_other += 1,
                    None => {}
                }
            }
        }
        let categories: Vec<&str> = cov.categories().collect();
        for expected in [
            "collection: array",
            "collection: array with non-record entries",
            "collection: map keyed by name",
            "collection: map entry with its own name",
            "collection: map entry that is not a record",
            "collection: not a collection",
            "collection: absent",
            "collection: map with an array-index key",
            "collection: map with a key that looks numeric",
            "collection: map with an Object.prototype key",
            "type: script",
            "type: api",
            "type: flow",
            "type: url",
            "type: modal",
            "type: form",
            "type: absent",
            "type: not a string",
            "operation: update",
            "target: empty string",
            "target: \"0\"",
            "target: []",
            "ai: absent",
            "ai: a string",
            "ai.exposed: true",
            "ai.exposed: not a boolean",
            "ai.description: empty",
            "ai.description: blank",
            "ref: platform name",
            "ref: typo of a known name",
            "ref: substring of a known name",
            "ref: wildcard",
            "ref: outside the BMP or accented",
            "ref: not a string",
            "skill.tools: a map",
            "tool record: a platform name",
            "record: non-string name",
        ] {
            assert!(
                cov.count(expected) > 0,
                "never generated: {expected}; have {categories:?}"
            );
        }
        for kind in [Kind::Wildcard, Kind::Unexposed, Kind::Fictional] {
            assert!(
                kinds.get(&kind).copied().unwrap_or(0) > 10,
                "{kind}: {kinds:?}"
            );
        }
        assert!(suggested_action > 0 && suggested_other > 0);
    }

    /// The generator never writes a malformed optional `ai` key (the one
    /// deliberate difference from upstream).
    #[test]
    fn ai_blocks_are_well_formed() {
        let mut cov = Coverage::default();
        let mut checked = 0;
        for case in 0..300 {
            let stack = generate(2, case, &mut cov);
            let mut stack_actions = Vec::new();
            collect_ai_blocks(&stack, &mut stack_actions);
            for ai in stack_actions {
                assert_eq!(
                    objectstack_spec::materialise::ai_block_fault(
                        objectstack_spec::json::Map::from_serde(
                            &ai,
                            &objectstack_spec::json::Arena::new()
                        )
                    ),
                    None,
                    "{ai:?}"
                );
                checked += 1;
            }
        }
        assert!(checked > 100);
    }

    fn collect_ai_blocks(v: &Value, out: &mut Vec<Map<String, Value>>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::Object(ai)) = m.get("ai") {
                    out.push(ai.clone());
                }
                m.values().for_each(|x| collect_ai_blocks(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| collect_ai_blocks(x, out)),
            _ => {}
        }
    }
}
