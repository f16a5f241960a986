//! A compact JSON document that borrows from the text it was parsed from.
//!
//! [`serde_json::Value`] owns every string and keeps each object in an
//! ordered hash map. For a stack of tens of megabytes that is most of the
//! cost of reading it: millions of small allocations, and several times the
//! file's size in memory. The checks in this workspace only *read* the
//! document, so this module offers a read-only tree instead:
//!
//! - strings are slices of the input text; only strings with escapes are
//!   decoded, into the [`Arena`];
//! - arrays and objects are slices allocated in the [`Arena`], each exactly
//!   as long as it needs to be; nothing is freed one by one;
//! - objects keep document order. A key written twice keeps its first
//!   position and its last value, as `JSON.parse` does; the parser notes
//!   each such key on the document's root ([`Map::duplicates`]), so
//!   validation can warn about it. Objects with many keys carry a sorted
//!   index, so a lookup never scans thousands of keys;
//! - objects that write the same keys in the same order (the actions of a
//!   stack) share one array of keys and its index, and each holds only its
//!   values.
//!
//! The API mirrors `serde_json`'s (`get`, `as_str`, `as_object`, `iter`,
//! ...), so code reads the same. This tree is the one reading of a stack:
//! [`Value::from_serde`] (and [`Map::from_serde`]) borrows an existing
//! `serde_json::Value` (for callers that already have one), and
//! [`Value::to_serde`] copies a part out when an owned value is needed.
//! [`kind`] and [`truthy`] ([`shape`]) read either tree; [`order`] is
//! JavaScript's property order and the writer that follows it.
//!
//! ```
//! use objectstack_spec::json::{self, Arena};
//! let arena = Arena::new();
//! let doc = json::parse_document(br#"{"skills": [{"name": "triage"}]}"#, &arena)?;
//! let skills = doc.get("skills").and_then(|v| v.as_array()).unwrap_or_default();
//! assert_eq!(skills[0].get("name").and_then(|v| v.as_str()), Some("triage"));
//! # Ok::<(), objectstack_spec::parse::ParseError>(())
//! ```

use std::fmt;

use bumpalo::Bump;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::parse::ParseError;

mod fast;
pub mod order;
pub mod shape;
mod split;
pub mod terminal;

pub use split::parse_object_on_two_threads;

pub use shape::{JsonValue, Shape, kind, truthy};

/// Owns what a [`Value`] tree does not borrow from the text: the slices of
/// arrays and objects and the decoded strings. Drop it to free the whole
/// tree at once (or leak it at process exit).
#[derive(Default)]
pub struct Arena {
    bump: Bump,
}

impl Arena {
    /// An empty arena.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty arena with room for about `bytes` before it grows: one
    /// allocation up front rather than a chain of ever larger ones while a
    /// tree is built (memory is only used as it is written). An empty
    /// arena when that much cannot be reserved.
    pub fn with_capacity(bytes: usize) -> Self {
        Self {
            bump: Bump::try_with_capacity(bytes).unwrap_or_default(),
        }
    }

    /// Bytes allocated so far.
    pub fn allocated_bytes(&self) -> usize {
        self.bump.allocated_bytes()
    }
}

impl fmt::Debug for Arena {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Arena")
            .field("allocated_bytes", &self.allocated_bytes())
            .finish()
    }
}

/// A JSON number, as `serde_json` reads it (without arbitrary precision).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    /// A non-negative integer.
    PosInt(u64),
    /// A negative integer.
    NegInt(i64),
    /// Anything with a fraction or exponent, or out of the integer ranges.
    Float(f64),
}

impl Number {
    /// The number as a float (always succeeds, possibly lossy).
    #[allow(clippy::cast_precision_loss)]
    pub fn as_f64(&self) -> f64 {
        match *self {
            Number::PosInt(n) => n as f64,
            Number::NegInt(n) => n as f64,
            Number::Float(n) => n,
        }
    }

    /// The number when it is a non-negative integer.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Number::PosInt(n) => Some(n),
            _ => None,
        }
    }

    /// The number when it is an integer that fits `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Number::PosInt(n) => i64::try_from(n).ok(),
            Number::NegInt(n) => Some(n),
            Number::Float(_) => None,
        }
    }

    /// Whether it was read as a float.
    pub fn is_f64(&self) -> bool {
        matches!(self, Number::Float(_))
    }

    /// The same number as a `serde_json::Number`.
    pub fn to_serde(&self) -> serde_json::Number {
        match *self {
            Number::PosInt(n) => n.into(),
            Number::NegInt(n) => n.into(),
            // The parser never yields a non-finite float; 0 is unreachable.
            Number::Float(n) => serde_json::Number::from_f64(n).unwrap_or_else(|| 0.into()),
        }
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.to_serde(), f)
    }
}

/// A JSON value borrowed from its text and [`Arena`]. It is `Copy`: passing
/// one around copies 24 bytes, never the tree.
#[derive(Debug, Clone, Copy)]
pub enum Value<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(Number),
    /// A string.
    String(&'a str),
    /// An array.
    Array(&'a [Value<'a>]),
    /// An object.
    Object(&'a Map<'a>),
}

/// A JSON object: its entries in document order (a key appears once).
///
/// The keys live in a layout that every object of a document writing
/// the same keys in the same order shares (the hundred thousand actions of
/// a large stack have a handful of layouts), so an object holds only its
/// values: a key lookup scans a short array of keys that stays in cache,
/// and the tree is a value, not a key and a value, per entry.
#[derive(Debug)]
pub struct Map<'a> {
    layout: &'a Layout<'a>,
    /// The values, in the order of the layout's keys (as many).
    values: &'a [Value<'a>],
}

/// The identity of an object's keys, for work that depends only on them:
/// objects with equal ids have the same keys in the same order (the parser
/// lets objects of one kind share one layout), so such work can be done
/// once per id. Objects with the same keys need not have equal ids. An id
/// means something only while the tree it came from is alive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LayoutId(usize);

impl LayoutId {
    /// The id as a number (to hash it, or to mix it with another).
    pub fn as_usize(self) -> usize {
        self.0
    }
}

/// The keys of one or more objects, and what is known of them.
#[derive(Debug)]
struct Layout<'a> {
    /// The keys in document order.
    keys: &'a [&'a str],
    /// Key positions sorted by key, for objects with many keys; empty for
    /// the others.
    sorted: &'a [u32],
    /// On the root of a parsed document only (its own layout).
    duplicates: Option<&'a Duplicates<'a>>,
    /// Each key's [`key_bit`]: a key whose bit is not set is not among the
    /// keys, known without reading one (most lookups of optional fields
    /// miss).
    filter: u64,
}

/// A key's length and first and last bytes in one word: what the layout
/// table's slots ([`Layouts::slot`]) and a layout's filter ([`key_bit`])
/// are computed from.
#[inline]
fn key_signature(key: &str) -> u64 {
    let bytes = key.as_bytes();
    let first = u64::from(bytes.first().copied().unwrap_or(0));
    let last = u64::from(bytes.last().copied().unwrap_or(0));
    bytes.len() as u64 | first << 32 | last << 40
}

/// A key's bit in [`Layout::filter`].
#[inline]
fn key_bit(key: &str) -> u64 {
    1 << (key_signature(key).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58)
}

/// The keys a parsed document writes more than once in one object, noted
/// by the parser on the document's root (see [`Map::duplicates`]).
#[derive(Debug, Clone, Copy)]
pub struct Duplicates<'a> {
    /// The text the document was parsed from.
    pub text: &'a str,
    /// Each object and key, in the order the parser finished the objects
    /// (inner objects before the objects holding them).
    pub keys: &'a [DuplicateKey<'a>],
}

/// A key written more than once in one object.
#[derive(Debug, Clone, Copy)]
pub struct DuplicateKey<'a> {
    /// The object, as kept (the key at its first position, with its last
    /// value). It may sit inside a value that was itself overwritten, and
    /// so not be reachable from the root.
    pub object: &'a Map<'a>,
    /// The key (once per object, however many times it is written).
    pub key: &'a str,
}

/// Key equality, inlined: keys are short, and most candidates differ in
/// length or in their first byte, so a call to `memcmp` per candidate
/// would cost more than the comparison.
#[inline]
fn same_key(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// Objects with more keys than this get a sorted index.
const INDEXED_FROM: usize = 16;

impl<'a> Map<'a> {
    /// The empty object.
    pub const EMPTY: Map<'a> = Map {
        layout: &Layout {
            keys: &[],
            sorted: &[],
            duplicates: None,
            filter: 0,
        },
        values: &[],
    };

    /// The value under `key`.
    #[inline]
    pub fn get(&self, key: &str) -> Option<&'a Value<'a>> {
        let values = self.values;
        self.position(key).and_then(|i| values.get(i))
    }

    /// The position of `key` among the entries ([`iter`](Self::iter)'s
    /// order: document order, a key written twice at its first position).
    #[inline]
    pub fn position(&self, key: &str) -> Option<usize> {
        let Layout {
            keys,
            sorted,
            filter,
            ..
        } = *self.layout;
        if filter & key_bit(key) == 0 {
            return None;
        }
        if sorted.is_empty() {
            return keys.iter().position(|k| same_key(k, key));
        }
        let found = sorted
            .binary_search_by(|&i| {
                keys.get(i as usize)
                    .map_or(std::cmp::Ordering::Less, |k| (*k).cmp(key))
            })
            .ok()?;
        sorted.get(found).map(|&i| i as usize)
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The entries in document order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&'a str, &'a Value<'a>)> + 'a {
        self.layout.keys.iter().copied().zip(self.values)
    }

    /// The identity of this object's keys (see [`LayoutId`]).
    pub fn layout_id(&self) -> LayoutId {
        LayoutId(std::ptr::from_ref(self.layout) as usize)
    }

    /// The value at `position` in document order (a position
    /// [`Map::position`] gave).
    pub fn value_at(&self, position: usize) -> Option<&'a Value<'a>> {
        self.values.get(position)
    }

    /// The keys in document order.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &'a str> + 'a {
        self.layout.keys.iter().copied()
    }

    /// The values in document order.
    pub fn values(&self) -> impl ExactSizeIterator<Item = &'a Value<'a>> + 'a {
        self.values.iter()
    }

    /// The number of keys.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether the object has no keys.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// An owned copy.
    pub fn to_serde(&self) -> serde_json::Map<String, serde_json::Value> {
        self.iter()
            .map(|(k, v)| (k.to_owned(), v.to_serde()))
            .collect()
    }

    /// Builds a map from entries, applying `JSON.parse`'s rule for a key
    /// written twice (first position, last value) and indexing large maps.
    /// Nothing is noted about such a key (see [`Map::duplicates`]).
    pub fn from_entries(arena: &'a Arena, entries: &[(&'a str, Value<'a>)]) -> &'a Map<'a> {
        build_map(&arena.bump, entries, None, None)
    }

    /// On the root of a document read by [`parse`] (or [`parse_document`],
    /// [`parse_object`]): every key some object of the text writes more
    /// than once, with the text. `None` when there is none, and for every
    /// other map.
    pub fn duplicates(&self) -> Option<&'a Duplicates<'a>> {
        self.layout.duplicates
    }

    /// The `i`-th entry in document order.
    pub(crate) fn entry_at(&self, i: usize) -> Option<(&'a str, &'a Value<'a>)> {
        Some((*self.layout.keys.get(i)?, self.values.get(i)?))
    }

    /// An address that tells this object from every other of its tree
    /// (objects with no entries share one).
    pub(crate) fn identity(&self) -> usize {
        self.values.as_ptr().addr()
    }

    /// Whether `self` and `other` are the same object of one tree (not
    /// merely equal ones).
    pub fn same_object(&self, other: &Map<'_>) -> bool {
        !self.values.is_empty() && std::ptr::addr_eq(self.values, other.values)
    }
}

impl shape::JsonValue for Value<'_> {
    fn shape(&self) -> shape::Shape<'_> {
        match *self {
            Value::Null => shape::Shape::Null,
            Value::Bool(b) => shape::Shape::Bool(b),
            Value::Number(n) => shape::Shape::Number(n.as_f64()),
            Value::String(s) => shape::Shape::String(s),
            Value::Array(_) => shape::Shape::Array,
            Value::Object(_) => shape::Shape::Object,
        }
    }
}

impl<'a> Value<'a> {
    /// The value under `key` when this is an object.
    pub fn get(&self, key: &str) -> Option<&'a Value<'a>> {
        match self {
            Value::Object(m) => m.get(key),
            _ => None,
        }
    }

    /// The string, when this is one.
    pub fn as_str(&self) -> Option<&'a str> {
        match *self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean, when this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// The number as a float, when this is a number.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => Some(n.as_f64()),
            _ => None,
        }
    }

    /// The number, when this is a non-negative integer.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Number(n) => n.as_u64(),
            _ => None,
        }
    }

    /// The number, when this is an integer that fits `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Number(n) => n.as_i64(),
            _ => None,
        }
    }

    /// The elements, when this is an array.
    pub fn as_array(&self) -> Option<&'a [Value<'a>]> {
        match *self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The object, when this is one.
    pub fn as_object(&self) -> Option<&'a Map<'a>> {
        match *self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Whether this is a string.
    pub fn is_string(&self) -> bool {
        matches!(self, Value::String(_))
    }

    /// Whether this is an array.
    pub fn is_array(&self) -> bool {
        matches!(self, Value::Array(_))
    }

    /// Whether this is an object.
    pub fn is_object(&self) -> bool {
        matches!(self, Value::Object(_))
    }

    /// Whether this is a number.
    pub fn is_number(&self) -> bool {
        matches!(self, Value::Number(_))
    }

    /// Whether this is a boolean.
    pub fn is_boolean(&self) -> bool {
        matches!(self, Value::Bool(_))
    }

    /// An owned copy.
    pub fn to_serde(&self) -> serde_json::Value {
        match *self {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(b),
            Value::Number(n) => serde_json::Value::Number(n.to_serde()),
            Value::String(s) => serde_json::Value::String(s.to_owned()),
            Value::Array(a) => serde_json::Value::Array(a.iter().map(Value::to_serde).collect()),
            Value::Object(m) => serde_json::Value::Object(m.to_serde()),
        }
    }

    /// Borrows a `serde_json::Value`: strings are shared, containers are
    /// allocated in `arena`. Keys already appear once in a `serde_json` map.
    pub fn from_serde(value: &'a serde_json::Value, arena: &'a Arena) -> Value<'a> {
        let bump = &arena.bump;
        match value {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => Value::Number(number_from_serde(n)),
            serde_json::Value::String(s) => Value::String(s),
            serde_json::Value::Array(items) => Value::Array(
                bump.alloc_slice_fill_iter(items.iter().map(|v| Value::from_serde(v, arena))),
            ),
            serde_json::Value::Object(map) => Value::Object(Map::from_serde(map, arena)),
        }
    }
}

impl<'a> Map<'a> {
    /// Borrows a `serde_json` map (see [`Value::from_serde`]).
    pub fn from_serde(
        map: &'a serde_json::Map<String, serde_json::Value>,
        arena: &'a Arena,
    ) -> &'a Map<'a> {
        let entries: Vec<(&'a str, Value<'a>)> = map
            .iter()
            .map(|(k, v)| (k.as_str(), Value::from_serde(v, arena)))
            .collect();
        build_map(&arena.bump, &entries, None, None)
    }
}

fn number_from_serde(n: &serde_json::Number) -> Number {
    if let Some(u) = n.as_u64() {
        Number::PosInt(u)
    } else if let Some(i) = n.as_i64() {
        Number::NegInt(i)
    } else {
        Number::Float(n.as_f64().unwrap_or(0.0))
    }
}

impl PartialEq for Value<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Number(a), Value::Number(b)) => a.to_serde() == b.to_serde(),
            (Value::String(a), Value::String(b)) => a == b,
            (Value::Array(a), Value::Array(b)) => a == b,
            (Value::Object(a), Value::Object(b)) => a == b,
            _ => false,
        }
    }
}

impl PartialEq for Map<'_> {
    /// Same keys with equal values, in any order (as `serde_json` compares).
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().all(|(k, v)| other.get(k) == Some(v))
    }
}

impl PartialEq<serde_json::Value> for Value<'_> {
    fn eq(&self, other: &serde_json::Value) -> bool {
        self.to_serde() == *other
    }
}

impl fmt::Display for Value<'_> {
    /// Compact JSON, as `serde_json::Value` displays.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.to_serde(), f)
    }
}

impl<'a> IntoIterator for &Map<'a> {
    type Item = (&'a str, &'a Value<'a>);
    type IntoIter = std::iter::Zip<
        std::iter::Copied<std::slice::Iter<'a, &'a str>>,
        std::slice::Iter<'a, Value<'a>>,
    >;

    fn into_iter(self) -> Self::IntoIter {
        self.layout.keys.iter().copied().zip(self.values)
    }
}

/// Parses `text` into a tree borrowing from it and from `arena`. Errors are
/// those of [`crate::parse::parse_value`]: line and column (in characters),
/// and the nesting limit of 128. As there, a lone surrogate escape is read
/// as U+FFFD (the tree then borrows a patched copy of the text, of the same
/// length, from `arena`).
pub fn parse<'a>(text: &'a str, arena: &'a Arena) -> Result<Value<'a>, ParseError> {
    parse_with(text, arena, Borrow)
}

/// [`parse`], but the tree borrows nothing from `text`: every string is
/// copied into `arena`, so the caller may drop the text as soon as this
/// returns. A key, or a string of up to [`SHARED_UP_TO`] bytes, that was
/// seen recently is not copied again but shared (a stack repeats its keys
/// and its short values, `type`, `script`, `text`, thousands of times), so
/// the copies cost much less than the text they replace. "Recently" is a
/// fixed-size cache, so a document of millions of distinct names costs no
/// more than one copy of each. The tree is the one [`parse`] builds, value
/// for value.
///
/// For a holder that keeps the tree for a while and has no use for the
/// text (the gateway holds the tree while it builds what it serves).
pub fn parse_detached<'a>(text: &str, arena: &'a Arena) -> Result<Value<'a>, ParseError> {
    parse_with(text, arena, Detach::default())
}

fn parse_with<'de, 'a, S: Strings<'de, 'a>>(
    text: &'de str,
    arena: &'a Arena,
    strings: S,
) -> Result<Value<'a>, ParseError> {
    match parse_text(text, arena, strings, None) {
        Ok(value) => Ok(value),
        // A lone surrogate escape is read as U+FFFD; the patched text is as
        // long as the original, so positions hold.
        Err((err, strings)) => match crate::parse::patch_lone_surrogates(text) {
            Some(patched) => strings.reparse(&patched, arena),
            None => Err(err),
        },
    }
}

/// How the parser keeps the strings it reads: borrowed from the text
/// ([`Borrow`]) or copied into the arena ([`Detach`]).
trait Strings<'de, 'a>: Sized {
    /// Parses `patched`, the text with its lone surrogates replaced, with
    /// the same policy.
    fn reparse(self, patched: &str, arena: &'a Arena) -> Result<Value<'a>, ParseError>;
    /// A string (key or value) that lives as long as the text.
    fn borrowed(&mut self, bump: &'a Bump, s: &'de str, key: bool) -> &'a str;
    /// A string decoded from escapes, gone when the call returns.
    fn transient(&mut self, bump: &'a Bump, s: &str, key: bool) -> &'a str;
    /// The text, for the notes on duplicate keys (rare).
    fn text(&mut self, bump: &'a Bump, text: &'de str) -> &'a str;
}

/// Strings are slices of the text, which outlives the tree.
struct Borrow;

impl<'a> Strings<'a, 'a> for Borrow {
    fn reparse(self, patched: &str, arena: &'a Arena) -> Result<Value<'a>, ParseError> {
        // The tree borrows the patched text, so the arena keeps it.
        parse_text(arena.bump.alloc_str(patched), arena, self, None).map_err(|(err, _)| err)
    }

    fn borrowed(&mut self, _: &'a Bump, s: &'a str, _: bool) -> &'a str {
        s
    }

    fn transient(&mut self, bump: &'a Bump, s: &str, _: bool) -> &'a str {
        bump.alloc_str(s)
    }

    fn text(&mut self, _: &'a Bump, text: &'a str) -> &'a str {
        text
    }
}

/// The longest string [`parse_detached`] shares between the places it
/// occurs (keys of any length are shared).
pub const SHARED_UP_TO: usize = 32;

/// Slots in each of [`Detach`]'s caches (a power of two).
const CACHE_SLOTS: usize = 1 << 12;

/// Strings are copied into the arena; a key or short string seen recently
/// is shared instead.
///
/// "Recently" is two direct-mapped caches, one for keys and one for short
/// values, of [`CACHE_SLOTS`] slots each: a string's hash picks its slot,
/// a hit shares the copy in it, and a miss copies the string and takes the
/// slot. The strings a stack repeats (its keys, `type`s, `locations`) stay
/// in their slots and are copied about once; a string seen once costs one
/// copy and evicts nothing that matters. Unlike a set of every string,
/// the caches never grow, so a document of millions of distinct names
/// parses in time and memory proportional to its size.
struct Detach<'a> {
    hasher: foldhash::fast::FixedState,
    keys: Vec<&'a str>,
    values: Vec<&'a str>,
}

impl Default for Detach<'_> {
    fn default() -> Self {
        Detach {
            hasher: foldhash::fast::FixedState::default(),
            keys: vec![""; CACHE_SLOTS],
            values: vec![""; CACHE_SLOTS],
        }
    }
}

impl<'a> Detach<'a> {
    fn copy(&mut self, bump: &'a Bump, s: &str, key: bool) -> &'a str {
        if s.is_empty() {
            return "";
        }
        if !key && s.len() > SHARED_UP_TO {
            return bump.alloc_str(s);
        }
        let hash = std::hash::BuildHasher::hash_one(&self.hasher, s);
        #[allow(clippy::cast_possible_truncation)] // the low bits pick the slot
        let slot = hash as usize & (CACHE_SLOTS - 1);
        let cache = if key {
            &mut self.keys
        } else {
            &mut self.values
        };
        let Some(kept) = cache.get_mut(slot) else {
            return bump.alloc_str(s);
        };
        if !same_key(kept, s) {
            *kept = bump.alloc_str(s);
        }
        let shared: &'a str = kept;
        shared
    }
}

impl<'de, 'a> Strings<'de, 'a> for Detach<'a> {
    fn reparse(self, patched: &str, arena: &'a Arena) -> Result<Value<'a>, ParseError> {
        parse_text(patched, arena, self, None).map_err(|(err, _)| err)
    }

    fn borrowed(&mut self, bump: &'a Bump, s: &'de str, key: bool) -> &'a str {
        self.copy(bump, s, key)
    }

    fn transient(&mut self, bump: &'a Bump, s: &str, key: bool) -> &'a str {
        self.copy(bump, s, key)
    }

    fn text(&mut self, bump: &'a Bump, text: &'de str) -> &'a str {
        bump.alloc_str(text)
    }
}

/// Parses `text` once; on failure, hands the string policy back for a
/// second try.
fn parse_text<'de, 'a, S: Strings<'de, 'a>>(
    text: &'de str,
    arena: &'a Arena,
    strings: S,
    stop: Option<split::Stop<'a>>,
) -> Result<Value<'a>, (ParseError, S)> {
    let mut builder = Builder::new(&arena.bump, strings, stop);
    let read = match fast::read(text, &mut builder) {
        Ok(value) => Ok(value),
        Err(fast::GiveUp) => {
            // serde_json reads it all again, and says what is wrong.
            let Builder { strings, stop, .. } = builder;
            builder = Builder::new(&arena.bump, strings, stop);
            let mut de = serde_json::Deserializer::from_str(text);
            ValueSeed(&mut builder)
                .deserialize(&mut de)
                .and_then(|v| de.end().map(|()| v))
        }
    };
    let value = match (read, builder.stopped) {
        // The root took its last entry from the second thread; serde_json
        // refuses the `:` after the key it stopped at.
        (_, Some(root)) => Value::Object(root),
        (Ok(value), None) => value,
        (Err(err), None) => return Err((crate::parse::located(text, &err), builder.strings)),
    };
    match value {
        Value::Object(root) if !builder.duplicates.is_empty() => {
            // A second header for the root, sharing its entries, that
            // carries the notes; only a document with a repeated key pays.
            let bump = &arena.bump;
            let layout = bump.alloc(Layout {
                keys: root.layout.keys,
                sorted: root.layout.sorted,
                filter: root.layout.filter,
                duplicates: Some(bump.alloc(Duplicates {
                    text: builder.strings.text(bump, text),
                    keys: bump.alloc_slice_copy(&builder.duplicates),
                })),
            });
            Ok(Value::Object(bump.alloc(Map {
                layout,
                values: root.values,
            })))
        }
        value => Ok(value),
    }
}

/// Decodes `bytes` (UTF-8, an optional byte-order mark) and parses a stack:
/// a JSON object at the top level. The borrowed counterpart of
/// [`crate::parse::parse_document`], with the same errors.
pub fn parse_document<'a>(bytes: &'a [u8], arena: &'a Arena) -> Result<&'a Map<'a>, ParseError> {
    parse_object(crate::parse::decode_utf8(bytes)?, arena)
}

/// [`parse_document`] into a tree that does not borrow `bytes`
/// ([`parse_detached`]): the bytes may be dropped once it returns.
pub fn parse_document_detached<'a>(
    bytes: &[u8],
    arena: &'a Arena,
) -> Result<&'a Map<'a>, ParseError> {
    object(parse_detached(crate::parse::decode_utf8(bytes)?, arena)?)
}

/// [`parse_document`] for text already decoded (and without a byte-order
/// mark): a large file is checked to be UTF-8 once, when it is read.
pub fn parse_object<'a>(text: &'a str, arena: &'a Arena) -> Result<&'a Map<'a>, ParseError> {
    object(parse(text, arena)?)
}

fn object<'a>(value: Value<'a>) -> Result<&'a Map<'a>, ParseError> {
    match value {
        Value::Object(map) => Ok(map),
        other => Err(ParseError::NotAnObject {
            found: kind(&other),
        }),
    }
}

struct Builder<'a, S> {
    bump: &'a Bump,
    /// Elements of the arrays being read, innermost last.
    values: Vec<Value<'a>>,
    /// Entries of the objects being read, innermost last.
    entries: Vec<(&'a str, Value<'a>)>,
    /// The keys the object just built wrote more than once.
    repeated: Vec<&'a str>,
    /// Every object's repeated keys so far.
    duplicates: Vec<DuplicateKey<'a>>,
    /// Where strings are kept.
    strings: S,
    /// Arrays and objects open now, and the most ever open at once.
    depth: u32,
    deepest: u32,
    /// Where to take the root's last entry from a second thread.
    stop: Option<split::Stop<'a>>,
    /// The root, once built with that entry.
    stopped: Option<&'a Map<'a>>,
    /// Layouts seen lately, for objects that write the same keys.
    layouts: Layouts<'a>,
}

/// serde_json's nesting limit: arrays and objects open at once.
const NESTING_LIMIT: u32 = 128;

impl<'a, S> Builder<'a, S> {
    fn new(bump: &'a Bump, strings: S, stop: Option<split::Stop<'a>>) -> Self {
        Builder {
            bump,
            values: Vec::new(),
            entries: Vec::new(),
            repeated: Vec::new(),
            duplicates: Vec::new(),
            strings,
            depth: 0,
            deepest: 0,
            stop,
            stopped: None,
            layouts: Layouts::default(),
        }
    }

    fn open(&mut self) {
        self.depth += 1;
        self.deepest = self.deepest.max(self.depth);
    }

    /// The second thread's value for `key` when it is the root key the
    /// split was made at (waiting for that thread to finish); `None` to
    /// read the value here.
    fn side_value(&mut self, key: &str) -> Option<split::Side<'a>> {
        if self.depth != 1 || !self.stop.as_ref()?.is_split(key) {
            return None;
        }
        self.stop.take()?.take()
    }

    /// Builds the array whose elements start at `start` and closes it.
    fn close_array(&mut self, start: usize) -> &'a [Value<'a>] {
        let slice = self
            .bump
            .alloc_slice_copy(self.values.get(start..).unwrap_or_default());
        self.values.truncate(start);
        self.depth = self.depth.saturating_sub(1);
        slice
    }

    /// When `key` is the root key the split was made at: the root, closed
    /// with the second thread's value as its last entry (and kept as
    /// `stopped`); its entries start at `start`.
    fn stop_at(&mut self, key: &'a str, start: usize) -> Option<&'a Map<'a>> {
        let side = self.side_value(key)?;
        // The second thread's objects were finished after this thread's
        // so far.
        self.duplicates.extend(side.duplicates);
        self.entries.push((key, side.value));
        let root = self.close_map(start);
        self.stopped = Some(root);
        Some(root)
    }

    /// Builds the object whose entries start at `start`, notes its repeated
    /// keys and closes it.
    fn close_map(&mut self, start: usize) -> &'a Map<'a> {
        let built = build_map(
            self.bump,
            self.entries.get(start..).unwrap_or_default(),
            Some(&mut self.repeated),
            Some(&mut self.layouts),
        );
        self.entries.truncate(start);
        for key in self.repeated.drain(..) {
            self.duplicates.push(DuplicateKey { object: built, key });
        }
        self.depth = self.depth.saturating_sub(1);
        built
    }
}

/// Parses `text`, all of it one JSON value, borrowing from it: the value,
/// the keys its objects repeat, and the most arrays and objects open at
/// once. `None` if it is not one value.
fn parse_part<'a>(
    text: &'a str,
    arena: &'a Arena,
) -> Option<(Value<'a>, Vec<DuplicateKey<'a>>, u32)> {
    let mut builder = Builder::new(&arena.bump, Borrow, None);
    let value = match fast::read(text, &mut builder) {
        Ok(value) => value,
        Err(fast::GiveUp) => {
            builder = Builder::new(&arena.bump, Borrow, None);
            let mut de = serde_json::Deserializer::from_str(text);
            let value = ValueSeed(&mut builder).deserialize(&mut de).ok()?;
            de.end().ok()?;
            value
        }
    };
    Some((value, builder.duplicates, builder.deepest))
}

/// Builds a map, keeping a repeated key's first position and last value;
/// each repeated key is pushed once to `repeated` when given. With
/// `layouts`, a map that writes the keys of one seen lately shares its
/// layout.
fn build_map<'a>(
    bump: &'a Bump,
    entries: &[(&'a str, Value<'a>)],
    repeated: Option<&mut Vec<&'a str>>,
    layouts: Option<&mut Layouts<'a>>,
) -> &'a Map<'a> {
    let values = || bump.alloc_slice_fill_iter(entries.iter().map(|&(_, v)| v));
    // A layout seen before has no repeated key: its map was built from
    // entries without one.
    let (slot, layouts) = match layouts {
        Some(layouts) => {
            let slot = Layouts::slot(entries);
            if let Some(layout) = layouts.find(slot, entries) {
                return bump.alloc(Map {
                    layout,
                    values: values(),
                });
            }
            (slot, Some(layouts))
        }
        None => (0, None),
    };
    let n = entries.len();
    let mut sorted: Vec<u32> = Vec::new();
    let mut duplicate = false;
    if n > INDEXED_FROM && u32::try_from(n).is_ok() {
        sorted = (0..n as u32).collect();
        sorted.sort_by(|&a, &b| key_at(entries, a).cmp(key_at(entries, b)).then(a.cmp(&b)));
        duplicate = sorted
            .windows(2)
            .any(|w| matches!(w, [a, b] if key_at(entries, *a) == key_at(entries, *b)));
    } else if n > 1 {
        duplicate = entries.iter().enumerate().any(|(i, (k, _))| {
            entries
                .get(..i)
                .is_some_and(|e| e.iter().any(|(p, _)| p == k))
        });
    }
    if duplicate {
        // First position, last value.
        let mut kept: Vec<(&'a str, Value<'a>)> = Vec::with_capacity(n);
        let mut last: std::collections::HashMap<&'a str, (usize, bool)> = Default::default();
        let mut repeated = repeated;
        for &(k, v) in entries {
            match last.get_mut(k) {
                Some((i, noted)) => {
                    if let Some(slot) = kept.get_mut(*i) {
                        slot.1 = v;
                    }
                    if !*noted && let Some(repeated) = repeated.as_deref_mut() {
                        repeated.push(k);
                    }
                    *noted = true;
                }
                None => {
                    last.insert(k, (kept.len(), false));
                    kept.push((k, v));
                }
            }
        }
        return build_map(bump, &kept, None, None);
    }
    let layout: &'a Layout<'a> = bump.alloc(Layout {
        keys: bump.alloc_slice_fill_iter(entries.iter().map(|&(k, _)| k)),
        sorted: bump.alloc_slice_copy(&sorted),
        duplicates: None,
        filter: entries
            .iter()
            .fold(0, |filter, &(k, _)| filter | key_bit(k)),
    });
    if let Some(layouts) = layouts {
        layouts.keep(slot, layout);
    }
    bump.alloc(Map {
        layout,
        values: values(),
    })
}

fn key_at<'a>(entries: &[(&'a str, Value<'a>)], i: u32) -> &'a str {
    entries.get(i as usize).map_or("", |(k, _)| *k)
}

/// The layouts a parse met lately, in a small table indexed by a cheap
/// digest of the keys (their lengths and first and last bytes); a slot
/// and its pair keep the last two layouts that fell in them. Objects of
/// one kind (the actions of a stack, their `ai` blocks) share a handful of
/// layouts; a document whose objects all differ allocates one layout per
/// object, as many keys as it had before layouts were shared.
#[derive(Default)]
struct Layouts<'a> {
    /// Empty until the first layout is kept: a document without objects
    /// (or a parse that fails first) pays nothing.
    slots: Vec<Option<&'a Layout<'a>>>,
}

/// Slots of [`Layouts`] (a power of two).
const LAYOUT_SLOTS: usize = 1024;

impl<'a> Layouts<'a> {
    /// The slot for objects with these keys.
    fn slot(entries: &[(&str, Value<'_>)]) -> usize {
        let mut digest = entries.len() as u64;
        for (k, _) in entries {
            digest = (digest.rotate_left(7) ^ key_signature(k)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
        (digest >> 54) as usize % LAYOUT_SLOTS
    }

    /// The layout in `slot`, or in its pair `slot ^ 1`, when its keys are
    /// these, in this order.
    fn find(&self, slot: usize, entries: &[(&str, Value<'_>)]) -> Option<&'a Layout<'a>> {
        let same = |layout: &&'a Layout<'a>| {
            layout.keys.len() == entries.len()
                && layout
                    .keys
                    .iter()
                    .zip(entries)
                    .all(|(k, (e, _))| same_key(k, e))
        };
        [slot, slot ^ 1]
            .into_iter()
            .find_map(|s| self.slots.get(s).copied().flatten().filter(same))
    }

    /// Keeps `layout` in `slot`; the one there moves to the pair slot
    /// (`slot ^ 1`), in place of the one there. Two kinds of object whose
    /// keys fall in one slot and that alternate (objects and their
    /// actions) so keep sharing their layouts.
    fn keep(&mut self, slot: usize, layout: &'a Layout<'a>) {
        if self.slots.is_empty() {
            self.slots = vec![None; LAYOUT_SLOTS];
        }
        let before = self.slots.get_mut(slot).and_then(|s| s.replace(layout));
        if let Some(pair) = self.slots.get_mut(slot ^ 1) {
            *pair = before.or(*pair);
        }
    }
}

struct ValueSeed<'b, 'a, S>(&'b mut Builder<'a, S>);

impl<'de, 'a, S: Strings<'de, 'a>> DeserializeSeed<'de> for ValueSeed<'_, 'a, S> {
    type Value = Value<'a>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value<'a>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, 'a, S: Strings<'de, 'a>> Visitor<'de> for ValueSeed<'_, 'a, S> {
    type Value = Value<'a>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<Value<'a>, E> {
        Ok(Value::Null)
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value<'a>, E> {
        Ok(Value::Bool(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value<'a>, E> {
        Ok(Value::Number(Number::PosInt(v)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value<'a>, E> {
        Ok(Value::Number(match u64::try_from(v) {
            Ok(u) => Number::PosInt(u),
            Err(_) => Number::NegInt(v),
        }))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value<'a>, E> {
        Ok(Value::Number(Number::Float(v)))
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Value<'a>, E> {
        let b = self.0;
        Ok(Value::String(b.strings.borrowed(b.bump, v, false)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value<'a>, E> {
        let b = self.0;
        Ok(Value::String(b.strings.transient(b.bump, v, false)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value<'a>, A::Error> {
        let b = self.0;
        b.open();
        let start = b.values.len();
        while let Some(v) = seq.next_element_seed(ValueSeed(&mut *b))? {
            b.values.push(v);
        }
        Ok(Value::Array(b.close_array(start)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value<'a>, A::Error> {
        let b = self.0;
        b.open();
        let start = b.entries.len();
        while let Some(key) = map.next_key_seed(KeySeed(&mut *b))? {
            if let Some(root) = b.stop_at(key, start) {
                return Ok(Value::Object(root));
            }
            let value = map.next_value_seed(ValueSeed(&mut *b))?;
            b.entries.push((key, value));
        }
        Ok(Value::Object(b.close_map(start)))
    }
}

struct KeySeed<'b, 'a, S>(&'b mut Builder<'a, S>);

impl<'de, 'a, S: Strings<'de, 'a>> DeserializeSeed<'de> for KeySeed<'_, 'a, S> {
    type Value = &'a str;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<&'a str, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de, 'a, S: Strings<'de, 'a>> Visitor<'de> for KeySeed<'_, 'a, S> {
    type Value = &'a str;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<&'a str, E> {
        let b = self.0;
        Ok(b.strings.borrowed(b.bump, v, true))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<&'a str, E> {
        let b = self.0;
        Ok(b.strings.transient(b.bump, v, true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(text: &str) {
        let arena = Arena::new();
        let ours = parse(text, &arena).unwrap().to_serde();
        let theirs: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(ours, theirs, "{text}");
        assert_eq!(ours.to_string(), theirs.to_string(), "{text}");
    }

    #[test]
    fn a_reserved_arena_holds_a_tree_and_one_too_large_to_reserve_is_empty() {
        let text = r#"{"a": [1, "two", {"b": null}], "c": "\u00e9"}"#;
        let reserved = Arena::with_capacity(1 << 16);
        let before = reserved.allocated_bytes();
        assert!(before >= 1 << 16, "{before}");
        let tree = parse(text, &reserved).unwrap().to_serde();
        assert_eq!(
            tree,
            serde_json::from_str::<serde_json::Value>(text).unwrap()
        );
        // Built in the room reserved: no chunk was added.
        assert_eq!(reserved.allocated_bytes(), before);
        let unreservable = Arena::with_capacity(usize::MAX);
        assert_eq!(unreservable.allocated_bytes(), 0);
        assert_eq!(parse(text, &unreservable).unwrap().to_serde(), tree);
    }

    #[test]
    fn reads_what_serde_json_reads() {
        for text in [
            "null",
            "true",
            "[1, -2, 3.5, 1e400000, 18446744073709551615, -9223372036854775808]",
            r#"{"a": {"b": [null, {"c": "d"}]}, "e": ""}"#,
            r#"{"esc\"aped": "line\nbreak \u00e9 \ud83d\ude00"}"#,
            "[]",
            "{}",
        ] {
            if text.contains("1e400000") {
                // serde_json rejects out-of-range floats; so do we.
                let arena = Arena::new();
                assert!(parse(text, &arena).is_err());
                continue;
            }
            round_trip(text);
        }
    }

    #[test]
    fn position_is_the_entry_order_for_small_and_indexed_objects() {
        let arena = Arena::new();
        let small = parse(r#"{"b": 1, "a": 2, "b": 3}"#, &arena).unwrap();
        let small = small.as_object().unwrap();
        assert_eq!(small.position("b"), Some(0));
        assert_eq!(small.position("a"), Some(1));
        assert_eq!(small.position("c"), None);
        let mut text = String::from("{");
        for i in (0..40).rev() {
            text.push_str(&format!("\"k{i}\": {i}, "));
        }
        text.push_str("\"k39\": 0}");
        let large = parse(&text, &arena).unwrap();
        let large = large.as_object().unwrap();
        for (at, key) in large.keys().enumerate() {
            assert_eq!(large.position(key), Some(at), "{key}");
        }
        assert_eq!(large.position("k39"), Some(0));
        assert_eq!(large.position("k40"), None);
    }

    proptest::proptest! {
        /// A lookup answers as a scan of the keys does, for objects small
        /// and large (indexed), with keys written twice, and for keys that
        /// are absent (the layout's filter must never hide a key).
        #[test]
        fn position_is_the_first_matching_key(
            keys in proptest::collection::vec("[a-dA-D_]{0,4}", 0..40),
            asked in proptest::collection::vec("[a-dA-D_]{0,4}", 0..20),
        ) {
            let mut text = String::from("{");
            for (i, key) in keys.iter().enumerate() {
                if i > 0 {
                    text.push(',');
                }
                text.push_str(&format!("{key:?}: {i}"));
            }
            text.push('}');
            let arena = Arena::new();
            let parsed = parse(&text, &arena).unwrap();
            let map = parsed.as_object().unwrap();
            let mut firsts: Vec<&str> = Vec::new();
            for key in &keys {
                if !firsts.contains(&key.as_str()) {
                    firsts.push(key);
                }
            }
            for key in keys.iter().chain(&asked) {
                let expected = firsts.iter().position(|k| k == key);
                proptest::prop_assert_eq!(map.position(key), expected, "{}", key);
            }
        }
    }

    #[test]
    fn alternating_objects_whose_keys_share_a_slot_share_their_layouts() {
        // `axb` and `ayb` have the same length and first and last bytes, so
        // the same slot; objects of the two kinds, one after the other,
        // still share a layout per kind.
        let arena = Arena::new();
        let text = r#"[{"axb": 1}, {"ayb": 2}, {"axb": 3}, {"ayb": 4}, {"axb": 5}]"#;
        let parsed = parse(text, &arena).unwrap();
        let ids: Vec<LayoutId> = parsed
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_object().unwrap().layout_id())
            .collect();
        assert_eq!(ids[0], ids[2]);
        assert_eq!(ids[0], ids[4]);
        assert_eq!(ids[1], ids[3]);
        assert_ne!(ids[0], ids[1]);
    }

    #[test]
    fn a_key_written_twice_keeps_first_position_and_last_value() {
        let arena = Arena::new();
        let v = parse(r#"{"a": 1, "b": 2, "a": 3}"#, &arena).unwrap();
        let m = v.as_object().unwrap();
        assert_eq!(m.keys().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(m.get("a").and_then(Value::as_u64), Some(3));
        // The same for an indexed (large) object.
        let mut text = String::from("{\"dup\": 0");
        for i in 0..40 {
            text.push_str(&format!(", \"k{i}\": {i}"));
        }
        text.push_str(", \"dup\": 99}");
        let v = parse(&text, &arena).unwrap();
        let m = v.as_object().unwrap();
        assert_eq!(m.len(), 41);
        assert_eq!(m.keys().next(), Some("dup"));
        assert_eq!(m.get("dup").and_then(Value::as_u64), Some(99));
        assert_eq!(m.get("k39").and_then(Value::as_u64), Some(39));
        assert_eq!(m.get("k40"), None);
    }

    #[test]
    fn the_root_notes_every_key_written_twice() {
        let arena = Arena::new();
        let text =
            r#"{"a": {"x": 1, "y": 2, "x": 3, "x": 4}, "b": [{"z": 0, "z": 1}], "a": {"x": 5}}"#;
        let root = parse_object(text, &arena).unwrap();
        let dups = root.duplicates().unwrap();
        assert_eq!(dups.text, text);
        let noted: Vec<(&str, usize)> = dups.keys.iter().map(|d| (d.key, d.object.len())).collect();
        // Inner objects first, each key once; the root's own last.
        assert_eq!(noted, [("x", 2), ("z", 1), ("a", 2)]);
        assert!(dups.keys[2].object.same_object(root));
        assert!(!dups.keys[0].object.same_object(root));
        // The first `a` was overwritten, so its object is not in the tree.
        let kept = root.get("a").and_then(Value::as_object).unwrap();
        assert!(!dups.keys[0].object.same_object(kept));
        assert_eq!(kept.get("x").and_then(Value::as_u64), Some(5));
        // An indexed root keeps its index.
        let mut big = String::from("{\"k\": 0, \"k\": 1");
        for i in 0..40 {
            big.push_str(&format!(", \"n{i}\": {i}"));
        }
        big.push('}');
        let root = parse_object(&big, &arena).unwrap();
        assert_eq!(root.duplicates().map(|d| d.keys.len()), Some(1));
        assert_eq!(root.get("n39").and_then(Value::as_u64), Some(39));
        assert_eq!(root.get("k").and_then(Value::as_u64), Some(1));
    }

    #[test]
    fn objects_with_the_same_keys_share_them_and_keep_their_own_values() {
        let arena = Arena::new();
        let text = r#"[{"a": 1, "b": 2}, {"a": 3, "b": 4}, {"b": 5, "a": 6},
                       {"a": 7, "a": 8, "b": 9}, {"a": 10, "b": 11}, {"a": 12}]"#;
        let v = parse(text, &arena).unwrap();
        let maps: Vec<&Map<'_>> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_object().unwrap())
            .collect();
        let pairs = |m: &Map<'_>| -> Vec<(String, u64)> {
            m.iter()
                .map(|(k, v)| (k.to_owned(), v.as_u64().unwrap()))
                .collect()
        };
        let p = |list: &[(&str, u64)]| -> Vec<(String, u64)> {
            list.iter().map(|&(k, v)| (k.to_owned(), v)).collect()
        };
        assert_eq!(pairs(maps[0]), p(&[("a", 1), ("b", 2)]));
        assert_eq!(pairs(maps[1]), p(&[("a", 3), ("b", 4)]));
        assert_eq!(pairs(maps[2]), p(&[("b", 5), ("a", 6)]));
        assert_eq!(pairs(maps[3]), p(&[("a", 8), ("b", 9)]));
        assert_eq!(pairs(maps[4]), p(&[("a", 10), ("b", 11)]));
        assert_eq!(pairs(maps[5]), p(&[("a", 12)]));
        assert_eq!(maps[2].get("a").and_then(Value::as_u64), Some(6));
        assert_eq!(maps[2].position("a"), Some(1));
        // The second object (and the fifth) use the first one's keys; the
        // keys written in another order are their own.
        let first_key = |m: &Map<'_>| m.keys().next().unwrap().as_ptr();
        assert_eq!(first_key(maps[1]), first_key(maps[0]));
        assert_eq!(first_key(maps[4]), first_key(maps[0]));
        assert_ne!(first_key(maps[2]), first_key(maps[0]));
        // Each keeps its own values: they are different objects.
        assert!(!maps[0].same_object(maps[1]));
        assert!(maps[1].same_object(maps[1]));
    }

    #[test]
    fn nothing_is_noted_without_a_key_written_twice() {
        let arena = Arena::new();
        let root = parse_object(r#"{"a": {"b": [1, {"c": 2}]}}"#, &arena).unwrap();
        assert!(root.duplicates().is_none());
        // Maps built or borrowed rather than parsed note nothing.
        let built = Map::from_entries(&arena, &[("k", Value::Null), ("k", Value::Bool(true))]);
        assert_eq!(built.len(), 1);
        assert!(built.duplicates().is_none());
        // Nor does a document whose top level is not an object.
        let v = parse(r#"[{"a": 1, "a": 2}]"#, &arena).unwrap();
        let inner = v.as_array().and_then(|a| a[0].as_object()).unwrap();
        assert!(inner.duplicates().is_none());
    }

    #[test]
    fn large_objects_are_looked_up_by_index() {
        let arena = Arena::new();
        let text = format!(
            "{{{}}}",
            (0..1000)
                .rev()
                .map(|i| format!("\"n{i}\": {i}"))
                .collect::<Vec<_>>()
                .join(",")
        );
        let v = parse(&text, &arena).unwrap();
        let m = v.as_object().unwrap();
        assert_eq!(m.keys().next(), Some("n999"));
        for i in 0..1000u64 {
            assert_eq!(m.get(&format!("n{i}")).and_then(Value::as_u64), Some(i));
        }
        assert!(!m.contains_key("n1000"));
    }

    #[test]
    fn strings_borrow_unless_escaped() {
        let arena = Arena::new();
        let text = r#"["plain", "tab\t"]"#;
        let v = parse(text, &arena).unwrap();
        let a = v.as_array().unwrap();
        let plain = a[0].as_str().unwrap();
        let range = text.as_bytes().as_ptr_range();
        assert!(range.contains(&plain.as_ptr()));
        assert_eq!(a[1].as_str(), Some("tab\t"));
    }

    #[test]
    fn a_detached_tree_is_the_borrowed_tree_and_outlives_its_text() {
        let long = "a string longer than the thirty-two bytes that are shared";
        let texts = [
            r#"{"a": {"b": [null, {"c": "d"}]}, "e": "", "n": [1, -2, 3.5]}"#.to_owned(),
            r#"{"esc\"aped": "line\nbreak \u00e9", "k\u0041": "\ud83d\ude00"}"#.to_owned(),
            r#"{"x": "x\ud83dy", "k\ud800": 1}"#.to_owned(),
            format!(
                r#"{{"type": "text", "t": [{{"type": "text"}}], "long": "{long}", "again": "{long}"}}"#
            ),
            r#"{"a": 1, "b": {"a": 2, "a": 3}, "a": 4}"#.to_owned(),
        ];
        for text in &texts {
            let arena = Arena::new();
            let borrowed = parse(text, &arena).unwrap();
            let detached = {
                // The text is gone before the tree is read.
                let copy = text.clone();
                parse_detached(&copy, &arena).unwrap()
            };
            assert_eq!(detached, borrowed, "{text}");
            assert_eq!(
                detached.to_serde().to_string(),
                borrowed.to_serde().to_string()
            );
            let root = |v: Value<'_>| {
                v.as_object()
                    .and_then(|m| m.duplicates().map(|d| d.keys.len()))
            };
            assert_eq!(root(detached), root(borrowed), "{text}");
        }
        // The notes on repeated keys keep a copy of the text, to locate
        // them.
        let arena = Arena::new();
        let text = texts[4].clone();
        let root = parse_document_detached(text.as_bytes(), &arena).unwrap();
        assert_eq!(root.duplicates().map(|d| d.text), Some(text.as_str()));
        // Keys and short strings seen recently are shared; long ones are
        // copied each time.
        let doc = parse_document_detached(texts[3].as_bytes(), &arena).unwrap();
        let inner = doc
            .get("t")
            .and_then(|t| t.as_array())
            .and_then(|t| t.first());
        let inner = inner.and_then(Value::as_object).unwrap();
        let (outer_key, outer_value) = doc.iter().next().unwrap();
        let (inner_key, inner_value) = inner.iter().next().unwrap();
        assert!(std::ptr::eq(outer_key, inner_key));
        assert!(std::ptr::eq(
            outer_value.as_str().unwrap(),
            inner_value.as_str().unwrap()
        ));
        let long_at = |k: &str| doc.get(k).and_then(Value::as_str).unwrap().as_ptr();
        assert_ne!(long_at("long"), long_at("again"));
        // Errors are the borrowed parser's.
        for bad in [
            "",
            "[1]",
            "{\"a\": tru}",
            "{\"a\": \"\\ud800\",\n \"b\": tru}",
        ] {
            let arena = Arena::new();
            assert_eq!(
                parse_document_detached(bad.as_bytes(), &arena)
                    .map(|_| ())
                    .unwrap_err()
                    .to_string(),
                parse_document(bad.as_bytes(), &arena)
                    .map(|_| ())
                    .unwrap_err()
                    .to_string(),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_lone_surrogate_escape_is_read_as_the_replacement_character() {
        let arena = Arena::new();
        let text = r#"{"a": "x\ud83dy", "b": "\udc00", "ok": "\ud83d\ude00", "lit": "\\ud800", "k\ud800": 1}"#;
        let root = parse_object(text, &arena).unwrap();
        let s = |k: &str| root.get(k).and_then(Value::as_str).unwrap();
        assert_eq!(s("a"), "x\u{fffd}y");
        assert_eq!(s("b"), "\u{fffd}");
        assert_eq!(s("ok"), "\u{1f600}");
        assert_eq!(s("lit"), "\\ud800");
        assert!(root.contains_key("k\u{fffd}"));
        // The owned reading agrees.
        let owned = crate::parse::parse_value(text).unwrap();
        assert_eq!(root.to_serde(), *owned.as_object().unwrap());
        // Another fault after one is still reported where it would be
        // with a valid escape in its place.
        let faulty = "{\"a\": \"\\ud800\",\n \"b\": tru}";
        let valid = faulty.replace("ud800", "u0041");
        let expected = parse(&valid, &arena).unwrap_err().line_column();
        assert_eq!(expected, (2, 10));
        assert_eq!(parse(faulty, &arena).unwrap_err().line_column(), expected);
        assert_eq!(
            crate::parse::parse_value(faulty).unwrap_err().line_column(),
            expected
        );
    }

    #[test]
    fn errors_are_located_and_depth_is_limited() {
        let arena = Arena::new();
        let err = parse("{\n  \"a\": [1,\n}", &arena).unwrap_err();
        assert_eq!(err.line_column(), (3, 1));
        let deep = "[".repeat(200) + &"]".repeat(200);
        let err = parse(&deep, &arena).unwrap_err();
        assert!(err.to_string().contains("128"), "{err}");
        assert!(parse("{} x", &arena).is_err());
        let err = parse_document(b"[1]", &arena).unwrap_err();
        assert!(err.to_string().contains("an array"), "{err}");
        assert!(parse_document(b"\xEF\xBB\xBF{}", &arena).is_ok());
        assert!(matches!(
            parse_document(b"{\"a\": \"\xff\"}", &arena),
            Err(ParseError::NotUtf8 { offset: 7, .. })
        ));
    }

    #[test]
    fn truthiness_and_kinds_match_javascript_in_both_trees() {
        use serde_json::json;
        let arena = Arena::new();
        for (v, truthy_, kind_) in [
            (json!(null), false, "null"),
            (json!(""), false, "a string"),
            (json!(0), false, "a number"),
            (json!(0.0), false, "a number"),
            (json!(false), false, "a boolean"),
            (json!("x"), true, "a string"),
            (json!([]), true, "an array"),
            (json!({}), true, "an object"),
            (json!(-1), true, "a number"),
        ] {
            let b = Value::from_serde(&v, &arena);
            assert_eq!(truthy(Some(&v)), truthy_, "{v}");
            assert_eq!(truthy(Some(&b)), truthy_, "{v}");
            assert_eq!(kind(&v), kind_);
            assert_eq!(kind(&b), kind_);
        }
        assert!(!truthy(None::<&Value<'_>>));
    }

    #[test]
    fn from_serde_round_trips() {
        let v: serde_json::Value =
            serde_json::from_str(r#"{"x": [1, -1, 0.5, "s", null, true, {"y": {}}]}"#).unwrap();
        let arena = Arena::new();
        let b = Value::from_serde(&v, &arena);
        assert_eq!(b.to_serde(), v);
        assert!(b == v);
    }
}
