//! Just enough HTTP/1.1 for a test server: read one request (head plus a `Content-Length`
//! body), write one response (whole, or streamed with chunked transfer encoding as the real
//! vendors do), close. Every response carries the CORS headers a page on another origin needs.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;

const MAX_HEAD_BYTES: usize = 64 * 1024;
const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

/// The headers a browser needs to call the mock from another origin.
pub const CORS_HEADERS: &[(&str, &str)] = &[
    ("Access-Control-Allow-Origin", "*"),
    (
        "Access-Control-Allow-Headers",
        "authorization, content-type, accept, x-api-key, anthropic-version, \
         anthropic-dangerous-direct-browser-access, x-goog-api-key, x-stainless-arch, \
         x-stainless-lang, x-stainless-os, x-stainless-package-version, x-stainless-retry-count, \
         x-stainless-runtime, x-stainless-runtime-version, x-stainless-timeout, \
         x-stainless-helper-method, openai-organization, openai-project, anthropic-beta",
    ),
    ("Access-Control-Allow-Methods", "GET, POST, OPTIONS"),
    (
        "Access-Control-Expose-Headers",
        "retry-after, retry-after-ms, request-id, x-request-id",
    ),
];

#[derive(Debug)]
pub struct Request {
    pub method: String,
    /// Without the query string.
    pub path: String,
    /// After the `?`, undecoded; empty when there is none.
    pub query: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// A query parameter, percent-decoded.
    pub fn query_param(&self, name: &str) -> Option<String> {
        self.query
            .split('&')
            .filter_map(|pair| pair.split_once('=').or(Some((pair, ""))))
            .find(|(k, _)| *k == name)
            .map(|(_, v)| percent_decode(v))
    }
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn bad(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.to_string())
}

/// Reads one request; `None` when the client closed or went quiet before sending a byte (a
/// browser's speculative connection), which gets no answer. Errors mean the client sent
/// something this server will not handle.
pub fn read_request(stream: impl Read) -> io::Result<Option<Request>> {
    let mut reader = BufReader::new(stream.take((MAX_HEAD_BYTES + MAX_BODY_BYTES) as u64));
    let mut line = String::new();
    let mut head_bytes = match reader.read_line(&mut line) {
        Ok(0) => return Ok(None),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ) =>
        {
            return Ok(None)
        }
        Err(e) => return Err(e),
        Ok(n) if n > MAX_HEAD_BYTES => return Err(bad("the request line is too long")),
        Ok(n) => n,
    };
    let mut read_line = |reader: &mut BufReader<_>, line: &mut String| -> io::Result<()> {
        line.clear();
        let n = reader.read_line(line)?;
        head_bytes += n;
        if n == 0 {
            return Err(bad("the connection closed inside the request head"));
        }
        if head_bytes > MAX_HEAD_BYTES {
            return Err(bad("the request head is too large"));
        }
        Ok(())
    };

    let mut parts = line.split_whitespace();
    let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
        return Err(bad("the request line is malformed"));
    };
    let method = method.to_string();
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let (path, query) = (path.to_string(), query.to_string());

    let mut headers = Vec::new();
    loop {
        read_line(&mut reader, &mut line)?;
        let trimmed = line.trim_end_matches(['\r', '\n']);
        if trimmed.is_empty() {
            break;
        }
        let Some((name, value)) = trimmed.split_once(':') else {
            return Err(bad("a header line has no colon"));
        };
        headers.push((name.trim().to_string(), value.trim().to_string()));
    }
    let request = Request {
        method,
        path,
        query,
        headers,
        body: Vec::new(),
    };
    if request
        .header("transfer-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
    {
        return Err(bad("chunked request bodies are not supported"));
    }
    let length = match request.header("content-length") {
        Some(v) => v
            .parse::<usize>()
            .map_err(|_| bad("Content-Length is not a number"))?,
        None => 0,
    };
    if length > MAX_BODY_BYTES {
        return Err(bad("the request body is too large"));
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    Ok(Some(Request { body, ..request }))
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    }
}

/// Writes the status line and headers (with CORS), then the blank line.
/// Whether the client closed its side (or the connection broke), seen without blocking; a
/// client still waiting for its answer has sent nothing more, so a read would block.
pub fn hung_up(stream: &TcpStream) -> bool {
    if stream.set_nonblocking(true).is_err() {
        return true;
    }
    let mut byte = [0u8; 1];
    let gone = match stream.peek(&mut byte) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !matches!(
            e.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
        ),
    };
    // A socket left non-blocking would cut later writes short.
    stream.set_nonblocking(false).is_err() || gone
}

pub fn write_head(out: &mut impl Write, status: u16, headers: &[(&str, String)]) -> io::Result<()> {
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (name, value) in CORS_HEADERS {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("Connection: close\r\n\r\n");
    out.write_all(head.as_bytes())
}

/// A whole response with a body of known length.
pub fn write_response(
    out: &mut impl Write,
    status: u16,
    content_type: &str,
    body: &[u8],
    extra: &[(&str, String)],
) -> io::Result<()> {
    let mut headers = vec![
        ("Content-Type", content_type.to_string()),
        ("Content-Length", body.len().to_string()),
    ];
    headers.extend(extra.iter().cloned());
    write_head(out, status, &headers)?;
    out.write_all(body)?;
    out.flush()
}

/// A streamed body in chunked transfer encoding. Dropping it without [`ChunkedBody::finish`]
/// leaves the body unterminated, which a client sees as a connection cut mid-response.
pub struct ChunkedBody<'a, W: Write> {
    out: &'a mut W,
}

impl<'a, W: Write> ChunkedBody<'a, W> {
    pub fn new(out: &'a mut W) -> ChunkedBody<'a, W> {
        ChunkedBody { out }
    }

    pub fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        if bytes.is_empty() {
            return Ok(()); // an empty chunk would end the body
        }
        write!(self.out, "{:x}\r\n", bytes.len())?;
        self.out.write_all(bytes)?;
        self.out.write_all(b"\r\n")?;
        self.out.flush()
    }

    pub fn finish(self) -> io::Result<()> {
        self.out.write_all(b"0\r\n\r\n")?;
        self.out.flush()
    }
}

/// The text fields of a `multipart/form-data` body, and the byte size of each file part.
pub fn multipart_fields(content_type: &str, body: &[u8]) -> Vec<(String, MultipartValue)> {
    let Some(boundary) = content_type
        .split(';')
        .filter_map(|p| p.trim().strip_prefix("boundary="))
        .next()
    else {
        return Vec::new();
    };
    let delimiter = format!("--{}", boundary.trim_matches('"'));
    let mut fields = Vec::new();
    for part in split_bytes(body, delimiter.as_bytes()).into_iter().skip(1) {
        let Some(split) = part.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&part[..split]);
        let mut content = &part[split + 4..];
        if content.ends_with(b"\r\n") {
            content = &content[..content.len() - 2];
        }
        let disposition = head
            .lines()
            .find(|l| l.to_ascii_lowercase().starts_with("content-disposition"))
            .unwrap_or("");
        let attr = |name: &str| {
            disposition
                .split(';')
                .filter_map(|p| p.trim().strip_prefix(name))
                .map(|v| v.trim_matches('"').to_string())
                .next()
        };
        let Some(name) = attr("name=") else { continue };
        let value = match attr("filename=") {
            Some(filename) => MultipartValue::File {
                filename,
                bytes: content.len(),
            },
            None => MultipartValue::Text(String::from_utf8_lossy(content).into_owned()),
        };
        fields.push((name, value));
    }
    fields
}

#[derive(Debug, Clone, PartialEq)]
pub enum MultipartValue {
    Text(String),
    File { filename: String, bytes: usize },
}

fn split_bytes<'a>(haystack: &'a [u8], needle: &[u8]) -> Vec<&'a [u8]> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i + needle.len() <= haystack.len() {
        if &haystack[i..i + needle.len()] == needle {
            parts.push(&haystack[start..i]);
            i += needle.len();
            start = i;
        } else {
            i += 1;
        }
    }
    parts.push(&haystack[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_parameters_are_found_and_decoded() {
        let request = Request {
            method: "POST".into(),
            path: "/x".into(),
            query: "alt=sse&key=a%2Bb+c&flag".into(),
            headers: Vec::new(),
            body: Vec::new(),
        };
        assert_eq!(request.query_param("alt").as_deref(), Some("sse"));
        assert_eq!(request.query_param("key").as_deref(), Some("a+b c"));
        assert_eq!(request.query_param("flag").as_deref(), Some(""));
        assert_eq!(request.query_param("nope"), None);
    }

    #[test]
    fn multipart_text_fields_and_file_sizes_are_read() {
        let body = b"--XyZ\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n\
--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.webm\"\r\n\
Content-Type: audio/webm\r\n\r\n\x1aE\xdf\xa3\r\n--XyZ--\r\n";
        let fields = multipart_fields("multipart/form-data; boundary=XyZ", body);
        assert_eq!(
            fields,
            [
                (
                    "model".to_string(),
                    MultipartValue::Text("whisper-1".into())
                ),
                (
                    "file".to_string(),
                    MultipartValue::File {
                        filename: "a.webm".into(),
                        bytes: 4
                    }
                ),
            ]
        );
    }
}
