//! `tools/list` answers written from the catalog as they are sent.
//!
//! rmcp answers a request with the whole result in memory three times
//! over: the handler's `Vec<Tool>` (every name and description copied),
//! its JSON text in a `String` grown by doubling, and, over Streamable
//! HTTP, an SSE event that `sse_stream` builds from that text a byte at a
//! time into a `Vec` grown by doubling. For a stack of 10,000 tools that is
//! about 13 MB for a moment, four times the stack file, on top of what the
//! gateway holds.
//!
//! So the handler answers rmcp with one placeholder tool whose name is a
//! marker no client can know (random per process), and the transports
//! write each message on its way out with the placeholder's JSON replaced
//! by the catalog's tools, serialised a chunk at a time: the HTTP body as
//! it is polled ([`Spliced`]), the stdio writer line by line. rmcp still
//! does everything else (sessions, headers, ids, versions), and the answer
//! is byte for byte what rmcp would have sent. What rmcp does to a tool
//! for a peer before 2026-07-28 (it drops an `outputSchema` that is not an
//! object) is done here too; the marker says which peer it is.

use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;

use rmcp::model::{ListToolsResult, Tool};
use serde_json::Value;

use crate::catalog::Catalog;

/// About how much JSON is written at a time.
pub(crate) const CHUNK_BYTES: usize = 64 << 10;

/// The placeholders of this process and how to find them.
#[derive(Debug)]
pub(crate) struct Listing {
    /// The placeholder tool's JSON, for a peer on 2026-07-28 or later
    /// (`[0]`) and for one before (`[1]`).
    markers: [Box<[u8]>; 2],
    names: [String; 2],
}

impl Default for Listing {
    fn default() -> Self {
        Self::new()
    }
}

impl Listing {
    /// Placeholders named by 128 random bits (the keys `RandomState` seeds
    /// from the operating system), so that no text a client or a server
    /// sends can be mistaken for one.
    pub(crate) fn new() -> Self {
        let mut nonce = String::with_capacity(32);
        for word in 0..2u8 {
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_u8(word);
            nonce.push_str(&format!("{:016x}", hasher.finish()));
        }
        let names = [
            format!("objectstack-gateway/listing/{nonce}/current"),
            format!("objectstack-gateway/listing/{nonce}/legacy"),
        ];
        let markers = names.clone().map(|name| {
            serde_json::to_vec(&placeholder_tool(name))
                .unwrap_or_default()
                .into_boxed_slice()
        });
        Listing { markers, names }
    }

    /// What the handler answers `tools/list` with, for a peer that
    /// negotiated 2026-07-28 or later (`legacy` false) or an earlier
    /// revision.
    pub(crate) fn placeholder(&self, legacy: bool) -> ListToolsResult {
        let name = &self.names[usize::from(legacy)];
        ListToolsResult::with_all_items(vec![placeholder_tool(name.clone())])
    }

    /// Where a placeholder is in `message`, and for which peer: only as
    /// the one item of a `"tools"` array, where rmcp writes it.
    pub(crate) fn find(&self, message: &[u8]) -> Option<Found> {
        const BEFORE: &[u8] = br#""tools":["#;
        for (at, marker) in self.markers.iter().enumerate() {
            if marker.is_empty() {
                continue;
            }
            let mut from = 0;
            while let Some(start) = message
                .get(from..)
                .and_then(|rest| memchr::memmem::find(rest, marker))
                .map(|i| i + from)
            {
                let end = start + marker.len();
                let placed = message
                    .get(..start)
                    .is_some_and(|head| head.ends_with(BEFORE))
                    && message.get(end) == Some(&b']');
                if placed {
                    return Some(Found {
                        start,
                        end,
                        legacy: at == 1,
                    });
                }
                from = end;
            }
        }
        None
    }
}

/// A placeholder in a message: `message[start..end]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Found {
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// For a peer before 2026-07-28.
    pub(crate) legacy: bool,
}

fn placeholder_tool(name: String) -> Tool {
    Tool::new(name, "", Arc::new(serde_json::Map::new()))
}

/// The catalog's tools as the JSON that replaces a placeholder: each
/// tool's object, comma-separated, a chunk at a time.
pub(crate) struct Tools {
    catalog: Arc<Catalog>,
    next: usize,
    legacy: bool,
}

impl Tools {
    pub(crate) fn new(catalog: Arc<Catalog>, legacy: bool) -> Self {
        Tools {
            catalog,
            next: 0,
            legacy,
        }
    }

    /// Appends the next tools to `out` until it holds about
    /// [`CHUNK_BYTES`]; false once every tool has been written.
    pub(crate) fn fill(&mut self, out: &mut Vec<u8>) -> bool {
        let count = self.catalog.tool_count();
        if self.next >= count {
            return false;
        }
        while self.next < count && out.len() < CHUNK_BYTES {
            let at = self.next;
            self.next += 1;
            let Some(mut tool) = self.catalog.tool(at) else {
                continue;
            };
            if self.legacy {
                // As rmcp does for a peer before 2026-07-28 (SEP-2106).
                tool.output_schema
                    .take_if(|schema| schema.get("type").and_then(Value::as_str) != Some("object"));
            }
            if at > 0 {
                out.push(b',');
            }
            if serde_json::to_writer(&mut *out, &tool).is_err() {
                // A `Tool` is plain data; serde_json cannot fail on it.
                out.extend_from_slice(b"{}");
            }
        }
        true
    }
}

/// What a transport needs to replace placeholders: this process's
/// markers, and the catalog current when an answer is written.
#[derive(Clone)]
pub(crate) struct Splicer {
    listing: Arc<Listing>,
    catalogs: Arc<dyn Fn() -> Arc<Catalog> + Send + Sync>,
}

impl Splicer {
    pub(crate) fn new(
        listing: Arc<Listing>,
        catalogs: Arc<dyn Fn() -> Arc<Catalog> + Send + Sync>,
    ) -> Self {
        Splicer { listing, catalogs }
    }

    /// Where a placeholder is in `message`.
    pub(crate) fn find(&self, message: &[u8]) -> Option<Found> {
        self.listing.find(message)
    }

    /// The tools that replace a placeholder found in a message.
    pub(crate) fn tools(&self, found: Found) -> Tools {
        Tools::new((self.catalogs)(), found.legacy)
    }
}

/// An HTTP answer's body with each placeholder replaced as it is sent.
pub(crate) struct Spliced {
    body: axum::body::Body,
    splicer: Splicer,
    /// The message being written around its tools: what follows them,
    /// and the tools still to write.
    splicing: Option<(axum::body::Bytes, Tools)>,
}

impl Spliced {
    pub(crate) fn new(body: axum::body::Body, splicer: Splicer) -> Self {
        Spliced {
            body,
            splicer,
            splicing: None,
        }
    }
}

impl http_body::Body for Spliced {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        use std::task::Poll;
        let this = &mut *self;
        if let Some((rest, tools)) = &mut this.splicing {
            let mut chunk = Vec::with_capacity(CHUNK_BYTES + (CHUNK_BYTES >> 2));
            if tools.fill(&mut chunk) {
                return Poll::Ready(Some(Ok(http_body::Frame::data(chunk.into()))));
            }
            let rest = std::mem::take(rest);
            this.splicing = None;
            if !rest.is_empty() {
                return Poll::Ready(Some(Ok(http_body::Frame::data(rest))));
            }
        }
        let frame = match std::pin::Pin::new(&mut this.body).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => frame,
            other => return other,
        };
        let data = match frame.into_data() {
            Ok(data) => data,
            Err(frame) => return Poll::Ready(Some(Ok(frame))),
        };
        let Some(found) = this.splicer.find(&data) else {
            return Poll::Ready(Some(Ok(http_body::Frame::data(data))));
        };
        let head = data.slice(..found.start);
        let rest = data.slice(found.end..);
        this.splicing = Some((rest, this.splicer.tools(found)));
        Poll::Ready(Some(Ok(http_body::Frame::data(head))))
    }

    fn is_end_stream(&self) -> bool {
        self.splicing.is_none() && self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        // The length changes wherever a placeholder is replaced.
        http_body::SizeHint::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A stack of `n` actions (enough for several chunks), one with an
    /// output schema, one that needs confirmation (so the lookup tool is listed
    /// last), with text that JSON escapes.
    fn catalog(n: usize) -> Arc<Catalog> {
        let mut actions: Vec<Value> = (0..n)
            .map(|i| {
                json!({
                    "name": format!("do_thing_{i}"), "label": format!("Do \"thing\" {i}"),
                    "type": "script", "target": "do_thing", "params": [{"name": "note", "type": "text"}],
                    "ai": {"exposed": true, "description": format!("Does thing {i} \u{e9}\n to a ticket, when the user asks for it.")}
                })
            })
            .collect();
        actions.push(json!({
            "name": "list_all", "label": "List all", "type": "script", "target": "list_all",
            "ai": {"exposed": true, "description": "Lists every ticket name, when the user asks for them.",
                   "outputSchema": {"type": "object", "properties": {"names": {"type": "array"}}}}
        }));
        actions.push(json!({
            "name": "purge", "label": "Purge", "type": "script", "target": "purge", "variant": "danger",
            "ai": {"exposed": true, "description": "Purges the ticket for good, when the user asks for it."}
        }));
        let stack = json!({"objects": [{"name": "ticket", "fields": {}, "actions": actions}]});
        Arc::new(crate::catalog::tests::catalog_of(&stack))
    }

    /// The message rmcp would send with the whole list, as it would send
    /// it (a non-object `outputSchema` dropped for a legacy peer).
    fn whole(catalog: &Catalog, placeholder: &ListToolsResult, legacy: bool) -> Vec<u8> {
        let mut result = placeholder.clone();
        result.tools = catalog.tools();
        if legacy {
            for tool in &mut result.tools {
                tool.output_schema
                    .take_if(|schema| schema.get("type").and_then(Value::as_str) != Some("object"));
            }
        }
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 3, "result": result})).unwrap()
    }

    fn splicer(catalog: &Arc<Catalog>) -> (Arc<Listing>, Splicer) {
        let listing = Arc::new(Listing::new());
        let current = catalog.clone();
        let splicer = Splicer::new(listing.clone(), Arc::new(move || current.clone()));
        (listing, splicer)
    }

    #[tokio::test]
    async fn an_http_answer_is_written_byte_for_byte_as_rmcp_would_write_the_whole_list() {
        let catalog = catalog(2_000);
        assert!(
            catalog.tool_count() > 2_000,
            "{} {:?}",
            catalog.tool_count(),
            catalog.notes
        );
        let (listing, splicer) = splicer(&catalog);
        for legacy in [false, true] {
            let placeholder = listing.placeholder(legacy);
            let message =
                serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 3, "result": placeholder}))
                    .unwrap();
            // An SSE stream: a priming event, the answer, a later event.
            let events = [
                b"id: 0\ndata:\n\n".to_vec(),
                [b"data: ".as_slice(), &message, b"\nid: 1\n\n"].concat(),
                b"data: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n\n".to_vec(),
            ];
            let stream = frames_body(events.to_vec());
            let body = axum::body::Body::new(Spliced::new(stream, splicer.clone()));
            let sent = axum::body::to_bytes(body, usize::MAX).await.unwrap();
            let expected = [
                events[0].clone(),
                [
                    b"data: ".as_slice(),
                    &whole(&catalog, &placeholder, legacy),
                    b"\nid: 1\n\n",
                ]
                .concat(),
                events[2].clone(),
            ]
            .concat();
            assert!(
                sent.len() > 4 * CHUNK_BYTES,
                "several chunks: {}",
                sent.len()
            );
            assert!(sent == expected, "legacy {legacy}: the answers differ");
        }
    }

    /// A body of these frames, one per poll.
    fn frames_body(frames: Vec<Vec<u8>>) -> axum::body::Body {
        struct Frames(std::collections::VecDeque<Vec<u8>>);
        impl http_body::Body for Frames {
            type Data = axum::body::Bytes;
            type Error = std::convert::Infallible;
            fn poll_frame(
                mut self: std::pin::Pin<&mut Self>,
                _: &mut std::task::Context<'_>,
            ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>>
            {
                std::task::Poll::Ready(
                    self.0
                        .pop_front()
                        .map(|f| Ok(http_body::Frame::data(f.into()))),
                )
            }
        }
        axum::body::Body::new(Frames(frames.into()))
    }

    #[test]
    fn each_process_has_its_own_markers_and_finds_them_in_a_message() {
        let a = Listing::new();
        let b = Listing::new();
        assert_ne!(a.names, b.names);
        for legacy in [false, true] {
            let message = serde_json::to_vec(&serde_json::json!({
                "jsonrpc": "2.0", "id": 7, "result": a.placeholder(legacy)
            }))
            .unwrap();
            let found = a.find(&message).expect("the placeholder is found");
            assert_eq!(found.legacy, legacy);
            assert!(message[..found.start].ends_with(br#""tools":["#));
            assert!(message[found.end..].starts_with(b"]"));
            assert_eq!(b.find(&message), None, "another process's marker");
            // The same text anywhere but as the one tool of a list (a
            // record that quotes it, say) is left alone.
            let quoted = serde_json::to_vec(&json!({"result": {"structuredContent": {
                "x": a.placeholder(legacy).tools, "y": a.placeholder(legacy).tools[0]
            }}}))
            .unwrap();
            assert_eq!(a.find(&quoted), None);
        }
        assert_eq!(
            a.find(br#"{"tools":[{"name":"objectstack-gateway/listing/"}]}"#),
            None
        );
    }
}
