//! Just enough HTTP/1.1 for a test server: read one request (head plus a `Content-Length`
//! body), write one response, close. Every response carries the CORS headers a page on another
//! origin needs.

use std::io::{self, BufRead, BufReader, Read, Write};

const MAX_HEAD_BYTES: usize = 64 * 1024;
const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

/// The headers a browser needs to call the mock from another origin.
pub const CORS_HEADERS: &[(&str, &str)] = &[
    ("Access-Control-Allow-Origin", "*"),
    (
        "Access-Control-Allow-Headers",
        "authorization, content-type, accept, x-api-key, anthropic-version, \
         anthropic-dangerous-direct-browser-access, x-goog-api-key",
    ),
    ("Access-Control-Allow-Methods", "GET, POST, OPTIONS"),
    ("Access-Control-Expose-Headers", "retry-after"),
];

#[derive(Debug)]
pub struct Request {
    pub method: String,
    /// Without the query string.
    pub path: String,
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
    let path = target.split('?').next().unwrap_or(target).to_string();

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
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

/// Writes the status line and headers (with CORS), then the blank line.
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
