//! Where a file's bytes are kept once read, and its text once checked.
//!
//! A large stack is read into an anonymous mapping that the kernel is asked
//! to back with transparent huge pages (`MADV_HUGEPAGE`, Linux only; the
//! advice is a hint, and where the system does not take it the mapping
//! works as ordinary memory). A 60 MB stack then takes about thirty 2 MiB
//! page faults instead of about fifteen thousand 4 KiB ones, which is a
//! twentieth of the lint's time on that stack (docs/performance.md, "Stop 40").
//! Everything else is kept on the heap, as before.

use std::fmt;
use std::ops::{Deref, DerefMut};

/// A file's bytes: on the heap, or in a mapping of their own.
pub(crate) enum Bytes {
    /// Read into a vector (small files, pipes, and where no mapping is made).
    Heap(Vec<u8>),
    /// Read into an anonymous mapping advised for huge pages.
    #[cfg(target_os = "linux")]
    Mapped(memmap2::MmapMut),
}

impl Bytes {
    /// `len` zero bytes to read a large file into: on Linux a mapping
    /// advised for huge pages (backed by them where the kernel has them),
    /// elsewhere, or if no mapping can be made, a vector.
    // Only the parallel read (Unix) asks for one outside the tests.
    #[cfg_attr(not(unix), allow(dead_code))]
    pub(crate) fn zeroed(len: usize) -> Bytes {
        #[cfg(target_os = "linux")]
        if len > 0
            && let Ok(map) = memmap2::MmapMut::map_anon(len)
        {
            // Only a hint: a kernel without transparent huge pages refuses
            // it, and the mapping is then ordinary memory.
            let _ = map.advise(memmap2::Advice::HugePage);
            return Bytes::Mapped(map);
        }
        Bytes::Heap(vec![0; len])
    }

    /// The bytes as a vector (copied only when they were mapped).
    pub(crate) fn into_vec(self) -> Vec<u8> {
        match self {
            Bytes::Heap(bytes) => bytes,
            #[cfg(target_os = "linux")]
            Bytes::Mapped(map) => map.to_vec(),
        }
    }
}

impl Deref for Bytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Heap(bytes) => bytes,
            #[cfg(target_os = "linux")]
            Bytes::Mapped(map) => map,
        }
    }
}

impl DerefMut for Bytes {
    fn deref_mut(&mut self) -> &mut [u8] {
        match self {
            Bytes::Heap(bytes) => bytes,
            #[cfg(target_os = "linux")]
            Bytes::Mapped(map) => map,
        }
    }
}

impl fmt::Debug for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self {
            Bytes::Heap(_) => "Heap",
            #[cfg(target_os = "linux")]
            Bytes::Mapped(_) => "Mapped",
        };
        write!(f, "Bytes::{kind}({} bytes)", self.len())
    }
}

/// `&str` under a name `self_cell` can take a lifetime of.
type Str<'a> = &'a str;

self_cell::self_cell!(
    /// Bytes checked once to be UTF-8, kept with the text they hold: the
    /// check costs a pass over the file, and the text is read several
    /// times (parsed, then located in).
    pub(crate) struct Utf8 {
        owner: Bytes,
        #[covariant]
        dependent: Str,
    }

    impl {Debug}
);

impl Utf8 {
    /// Checks `bytes`; when they are not UTF-8, gives them back with the
    /// error (to say where the first bad byte is).
    pub(crate) fn check(bytes: Bytes) -> Result<Utf8, (Bytes, std::str::Utf8Error)> {
        Utf8::try_new_or_recover(bytes, |bytes| std::str::from_utf8(bytes))
    }

    /// All the bytes, a byte-order mark included.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.borrow_owner()
    }

    /// The text, without a leading byte-order mark.
    pub(crate) fn text(&self) -> &str {
        let text = *self.borrow_dependent();
        text.strip_prefix('\u{feff}').unwrap_or(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_bytes_are_zero_and_writable() {
        for len in [0, 1, 4096, (2 << 20) + 3] {
            let mut bytes = Bytes::zeroed(len);
            assert_eq!(bytes.len(), len);
            assert!(bytes.iter().all(|&b| b == 0));
            if let Some(last) = bytes.last_mut() {
                *last = 7;
            }
            let vec = bytes.into_vec();
            assert_eq!(vec.len(), len);
            assert_eq!(vec.last().copied(), (len > 0).then_some(7));
        }
    }

    #[test]
    fn text_is_checked_once_and_loses_only_a_byte_order_mark() {
        let mut bytes = Bytes::zeroed(10);
        bytes.copy_from_slice(b"\xEF\xBB\xBF{\"a\":1}");
        let utf8 = Utf8::check(bytes).unwrap_or_else(|(_, e)| panic!("{e}"));
        assert_eq!(utf8.text(), "{\"a\":1}");
        assert_eq!(utf8.bytes().len(), 10);
        // A mark later in the text is text.
        let utf8 = Utf8::check(Bytes::Heap("a\u{feff}".as_bytes().to_vec()))
            .unwrap_or_else(|(_, e)| panic!("{e}"));
        assert_eq!(utf8.text(), "a\u{feff}");
    }

    #[test]
    fn bytes_that_are_not_utf8_come_back_with_where() {
        let Err((bytes, err)) = Utf8::check(Bytes::Heap(b"{\"a\":\"\xff\"}".to_vec())) else {
            panic!("accepted bytes that are not UTF-8");
        };
        assert_eq!(&*bytes, b"{\"a\":\"\xff\"}");
        assert_eq!(err.valid_up_to(), 6);
    }
}
