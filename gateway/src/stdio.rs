//! The stdio transport with JSON-RPC's answers to the lines rmcp would
//! drop.
//!
//! rmcp reads stdio as one JSON-RPC message per line and silently skips a
//! line it cannot read: text that is not JSON, or an unfinished object,
//! gets no answer, and a client waiting for one waits forever. JSON-RPC 2.0
//! says a parse error is answered (-32700, id `null`). So the gateway reads
//! stdin itself, line by line, and screens each line as the HTTP endpoint
//! screens a body ([`crate::jsonrpc::verdict`]):
//!
//! - text that is not JSON, or not UTF-8: -32700;
//! - a batch: -32600 (no revision this server speaks has batches);
//! - JSON that is not a JSON-RPC 2.0 message: -32600, with the request's
//!   id when it has a usable one;
//! - a `tools/call` whose params are no tool call, or any request whose
//!   params rmcp cannot read as its method's: -32602;
//! - a notification rmcp cannot read: nothing (JSON-RPC answers no
//!   notification), and rmcp does not see it;
//! - a line longer than [`crate::Config::max_body_bytes`] (or than rmcp's
//!   own limit of 16 MiB, which it drops without a word): -32600, and the
//!   line is skipped to its end without being held;
//! - anything else goes to rmcp, with each lone surrogate escape (`\ud800`
//!   without its pair) written as U+FFFD, as the stack reader reads them:
//!   serde_json refuses such a string, and rmcp dropped the line unanswered.
//!
//! rmcp writes into a pipe whose lines are copied to stdout, and the
//! answers above go out between two of its lines, never inside one. Both
//! pipes are bounded: a client that stops reading stdout stops the reading
//! of stdin, as rmcp alone did, so garbage written without end is not
//! answered into memory without end.

use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use crate::jsonrpc::Verdict;
use crate::listing::Splicer;

/// Room in each pipe between the screen and rmcp.
const PIPE_BYTES: usize = 64 << 10;

/// Answers waiting for stdout before stdin is read further.
const PENDING_ANSWERS: usize = 64;

/// The longest line rmcp reads (its codec's default, the newline
/// included); longer ones it drops unanswered.
const RMCP_MAX_LINE: usize = 16 << 20;

/// The writer's line buffer is given back once a line this long is out.
const KEPT_LINE_BYTES: usize = 64 << 10;

/// The ends rmcp serves on, and the task that copies its answers out.
pub(crate) struct Screened {
    /// What rmcp reads: the lines that are messages.
    pub(crate) input: tokio::io::DuplexStream,
    /// What rmcp writes to.
    pub(crate) output: tokio::io::DuplexStream,
    /// Copies rmcp's lines and the screen's answers to stdout; ends once
    /// rmcp's end is closed and every line is written.
    pub(crate) writer: tokio::task::JoinHandle<()>,
}

/// Screens `stdin` for rmcp and writes to `stdout` (see the module
/// documentation). `limit` is the longest line read (at most rmcp's).
pub(crate) fn screen<R, W>(stdin: R, stdout: W, limit: usize, splicer: Option<Splicer>) -> Screened
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    // The screen measures a line without its newline.
    let limit = limit.min(RMCP_MAX_LINE - 1);
    let (input, to_rmcp) = tokio::io::duplex(PIPE_BYTES);
    let (output, from_rmcp) = tokio::io::duplex(PIPE_BYTES);
    let (answers, answered) = mpsc::channel(PENDING_ANSWERS);
    tokio::spawn(read(BufReader::new(stdin), to_rmcp, answers, limit));
    let writer = tokio::spawn(write(BufReader::new(from_rmcp), answered, stdout, splicer));
    Screened {
        input,
        output,
        writer,
    }
}

/// A line as read: whole, or longer than the limit (and skipped).
enum Line {
    Whole,
    TooLong,
    End,
}

/// Reads one line into `line` (without its newline), holding at most
/// `limit` bytes of it.
async fn next_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
    limit: usize,
) -> std::io::Result<Line> {
    line.clear();
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(match (too_long, line.is_empty()) {
                (true, _) => Line::TooLong,
                (false, true) => Line::End,
                (false, false) => Line::Whole,
            });
        }
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (available.get(..at).unwrap_or_default(), Some(at + 1)),
            None => (available, None),
        };
        if !too_long {
            if line.len() + chunk.len() > limit {
                too_long = true;
                line.clear();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = done.unwrap_or(available.len());
        reader.consume(used);
        if done.is_some() {
            return Ok(if too_long { Line::TooLong } else { Line::Whole });
        }
    }
}

/// Reads stdin's lines: messages go on to rmcp, the others are answered.
/// At the end of stdin (or when rmcp is gone), rmcp's input is closed.
async fn read<R: AsyncBufRead + Unpin>(
    mut stdin: R,
    mut to_rmcp: tokio::io::DuplexStream,
    answers: mpsc::Sender<Vec<u8>>,
    limit: usize,
) {
    let mut line = Vec::new();
    loop {
        let answer = match next_line(&mut stdin, &mut line, limit).await {
            Ok(Line::End) | Err(_) => break,
            Ok(Line::TooLong) => error(
                &Value::Null,
                -32600,
                &format!("Invalid Request: the message is more than {limit} bytes"),
            ),
            Ok(Line::Whole) => {
                let text = line.strip_suffix(b"\r").unwrap_or(&line);
                if text.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match crate::jsonrpc::verdict(text, "line") {
                    Verdict::Answer { id, code, message } => error(&id, code, &message),
                    Verdict::Drop(why) => {
                        tracing::debug!("not answered, as JSON-RPC says: the {why}");
                        continue;
                    }
                    Verdict::Pass(text) => {
                        let sent = async {
                            to_rmcp.write_all(&text).await?;
                            to_rmcp.write_all(b"\n").await?;
                            to_rmcp.flush().await
                        };
                        if sent.await.is_err() {
                            // rmcp is gone: nothing reads the rest.
                            break;
                        }
                        continue;
                    }
                }
            }
        };
        if answers.send(answer).await.is_err() {
            break;
        }
    }
    // rmcp sees the end of its input and stops, as at the end of stdin.
    let _ = to_rmcp.shutdown().await;
}

/// A JSON-RPC error response, as one line.
fn error(id: &Value, code: i64, message: &str) -> Vec<u8> {
    let mut line = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        .to_string()
        .into_bytes();
    line.push(b'\n');
    line
}

/// Copies rmcp's lines and the screen's answers to `stdout`, a line at a
/// time, until rmcp's end is closed; then the answers already waiting go
/// out too (the screen answers every line it read before it closes rmcp's
/// input, so at the end of stdin they are all waiting). A `tools/list`
/// placeholder in rmcp's line is replaced by the catalog's tools (see
/// `listing`).
async fn write<R: AsyncBufRead + Unpin, W: AsyncWrite + Unpin>(
    mut from_rmcp: R,
    mut answered: mpsc::Receiver<Vec<u8>>,
    mut stdout: W,
    splicer: Option<Splicer>,
) {
    let mut line = Vec::new();
    let mut screening = true;
    loop {
        tokio::select! {
            read = from_rmcp.read_until(b'\n', &mut line) => {
                match read {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if put_spliced(&mut stdout, &line, splicer.as_ref()).await.is_err() {
                            return;
                        }
                        line.clear();
                        if line.capacity() > KEPT_LINE_BYTES {
                            line = Vec::new();
                        }
                    }
                }
            }
            answer = answered.recv(), if screening => {
                match answer {
                    Some(answer) => {
                        if put(&mut stdout, &answer).await.is_err() {
                            return;
                        }
                    }
                    None => screening = false,
                }
            }
        }
    }
    // An unfinished last line, as rmcp left it, then what is waiting.
    if !line.is_empty() && put(&mut stdout, &line).await.is_err() {
        return;
    }
    answered.close();
    while let Some(answer) = answered.recv().await {
        if put(&mut stdout, &answer).await.is_err() {
            return;
        }
    }
}

/// [`put`], with a `tools/list` placeholder in `line` replaced by the
/// tools, written a chunk at a time.
async fn put_spliced<W: AsyncWrite + Unpin>(
    stdout: &mut W,
    line: &[u8],
    splicer: Option<&Splicer>,
) -> std::io::Result<()> {
    let Some((splicer, found)) = splicer.and_then(|s| Some((s, s.find(line)?))) else {
        return put(stdout, line).await;
    };
    let (head, rest) = (
        line.get(..found.start).unwrap_or_default(),
        line.get(found.end..).unwrap_or_default(),
    );
    stdout.write_all(head).await?;
    let mut tools = splicer.tools(found);
    let mut chunk =
        Vec::with_capacity(crate::listing::CHUNK_BYTES + (crate::listing::CHUNK_BYTES >> 2));
    while tools.fill(&mut chunk) {
        stdout.write_all(&chunk).await?;
        chunk.clear();
    }
    put(stdout, rest).await
}

/// Writes `bytes` to `stdout` and flushes.
async fn put<W: AsyncWrite + Unpin>(stdout: &mut W, bytes: &[u8]) -> std::io::Result<()> {
    stdout.write_all(bytes).await?;
    stdout.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `input` through the screen with an echoing "rmcp" that
    /// answers each message line with `ok <line>`, and returns stdout.
    async fn run(input: &[u8], limit: usize) -> String {
        run_with(input.to_vec(), limit, true).await
    }

    /// [`run`], with an "rmcp" that echoes or (`echo` false) answers
    /// nothing and closes its output at the end of its input.
    async fn run_with(input: Vec<u8>, limit: usize, echo: bool) -> String {
        let (stdout, mut seen) = tokio::io::duplex(1 << 20);
        let Screened {
            input: rmcp_in,
            output: mut rmcp_out,
            writer,
        } = screen(std::io::Cursor::new(input), stdout, limit, None);
        let mut lines = BufReader::new(rmcp_in).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if echo {
                rmcp_out
                    .write_all(format!("ok {line}\n").as_bytes())
                    .await
                    .unwrap();
            }
        }
        drop(rmcp_out);
        writer.await.unwrap();
        let mut out = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut seen, &mut out)
            .await
            .unwrap();
        out
    }

    fn answers(out: &str) -> Vec<Value> {
        out.lines()
            .filter(|l| !l.starts_with("ok "))
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[tokio::test]
    async fn messages_pass_and_the_rest_are_answered_in_order() {
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n\
            this is not json\n\
            \n   \r\n\
            {\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": \"tools/list\"\n\
            [1, 2]\n\
            {\"jsonrpc\":\"1.0\",\"id\":7,\"method\":\"ping\"}\n\
            {\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{}}\n\
            {\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\r\n\
            \xff\xfe\n\
            {\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}";
        let out = run(input, 1 << 20).await;
        let passed: Vec<&str> = out.lines().filter(|l| l.starts_with("ok ")).collect();
        assert_eq!(
            passed,
            [
                "ok {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
                "ok {\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
                "ok {\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}",
            ]
        );
        let answers = answers(&out);
        let codes: Vec<(Value, i64)> = answers
            .iter()
            .map(|a| (a["id"].clone(), a["error"]["code"].as_i64().unwrap()))
            .collect();
        assert_eq!(
            codes,
            [
                (Value::Null, -32700),
                (Value::Null, -32700),
                (Value::Null, -32600),
                (json!(7), -32600),
                (json!(8), -32602),
                (Value::Null, -32700),
            ],
            "{out}"
        );
        for a in &answers {
            assert_eq!(a["jsonrpc"], "2.0");
            assert!(
                a["error"]["message"]
                    .as_str()
                    .is_some_and(|m| !m.is_empty())
            );
        }
    }

    #[tokio::test]
    async fn a_line_over_the_limit_is_refused_without_being_held() {
        let mut input =
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"pad\":\"".to_vec();
        input.extend(std::iter::repeat_n(b'a', 10_000));
        input.extend_from_slice(b"\"}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n");
        let out = run(&input, 1_000).await;
        let answers = answers(&out);
        assert_eq!(answers.len(), 1, "{out}");
        assert_eq!(answers[0]["error"]["code"], json!(-32600));
        assert!(
            answers[0]["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("more than 1000 bytes")),
            "{out}"
        );
        assert!(out.contains("ok {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}"));
        // A line exactly at the limit passes.
        let exact = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"{}\"}}",
            "m".repeat(10)
        );
        let out = run(format!("{exact}\n").as_bytes(), exact.len()).await;
        assert_eq!(out, format!("ok {exact}\n"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_answer_goes_out_when_stdin_ends_and_rmcp_with_it() {
        for _ in 0..20 {
            let input = b"garbage\n".repeat(1_000);
            let out = run_with(input, 1 << 20, false).await;
            assert_eq!(out.lines().count(), 1_000);
            assert!(out.lines().all(|l| l.contains("-32700")));
        }
    }

    #[tokio::test]
    async fn a_lone_surrogate_escape_reaches_rmcp_as_the_replacement_character() {
        let line = br#"{"jsonrpc":"2.0","id":5,"method":"ping","params":{"_meta":{"a":"x\ud800y","b":"\ud83d\ude00"}}}"#;
        let out = run(&[&line[..], b"\n"].concat(), 1 << 20).await;
        assert_eq!(
            out,
            "ok {\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\",\"params\":{\"_meta\":{\"a\":\"x\\uFFFDy\",\"b\":\"\\ud83d\\ude00\"}}}\n"
        );
    }

    /// Endless lines of garbage, counting the bytes read.
    struct Endless(std::sync::Arc<std::sync::atomic::AtomicUsize>);

    impl AsyncRead for Endless {
        fn poll_read(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            let chunk = b"garbage\n".repeat(buf.remaining() / 8);
            buf.put_slice(&chunk);
            self.0
                .fetch_add(chunk.len(), std::sync::atomic::Ordering::Relaxed);
            std::task::Poll::Ready(Ok(()))
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_client_that_does_not_read_stdout_stops_the_reading_of_stdin() {
        let read = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        // stdout with room for about 30 answers, never read.
        let (stdout, _unread) = tokio::io::duplex(4 << 10);
        let screened = screen(Endless(read.clone()), stdout, 1 << 20, None);
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let first = read.load(std::sync::atomic::Ordering::Relaxed);
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let then = read.load(std::sync::atomic::Ordering::Relaxed);
        assert_eq!(first, then, "stdin is still read");
        // What was read before it stopped: the answers that fit stdout and
        // the queue, and a reader's buffer.
        assert!(first < 1 << 20, "{first} bytes read");
        drop(screened);
    }

    #[tokio::test]
    async fn the_end_of_stdin_ends_rmcps_input_and_the_writer() {
        let out = run(b"", 100).await;
        assert_eq!(out, "");
    }
}
