//! What the fuzz targets share: ways to cut one input into chunks, so a streaming reader can be
//! held to its rule that the chunking never changes the result (CONVENTIONS.md), and the input
//! conventions of the targets that take archives.
//!
//! The cuts come from a hash of the input rather than from bytes of it, so a seed is exactly the
//! file it was made from (a transcript, a reply, an archive) and stays readable.

/// Inputs that start like a zip archive are read as one; the archive targets build an archive
/// from any other input (see each target).
pub fn is_zip(data: &[u8]) -> bool {
    data.starts_with(b"PK")
}

/// FNV-1a: a fixed, dependency-free hash, so a crash reproduces with the same cuts.
fn fnv1a(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Up to 16 cut offsets in `0..=len`, sorted, derived from `data`.
pub fn cuts(data: &[u8], len: usize) -> Vec<usize> {
    let mut state = fnv1a(data) | 1;
    let count = (state % 17) as usize;
    let mut out: Vec<usize> = (0..count)
        .map(|_| {
            // xorshift64
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % (len as u64 + 1)) as usize
        })
        .collect();
    out.sort_unstable();
    out
}

/// `data` cut at `cuts` (sorted offsets within it).
pub fn split_bytes<'a>(data: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut chunks = Vec::with_capacity(cuts.len() + 1);
    let mut start = 0;
    for &cut in cuts {
        chunks.push(&data[start..cut]);
        start = cut;
    }
    chunks.push(&data[start..]);
    chunks
}

/// The three chunkings a byte stream is read in: whole, one byte at a time, and cut where the
/// hash says.
pub fn byte_chunkings(data: &[u8]) -> [Vec<&[u8]>; 3] {
    [
        vec![data],
        data.chunks(1).collect(),
        split_bytes(data, &cuts(data, data.len())),
    ]
}

/// The same for text, every cut moved back to a character boundary.
pub fn text_chunkings(text: &str) -> [Vec<&str>; 3] {
    let boundaries: Vec<usize> = cuts(text.as_bytes(), text.len())
        .into_iter()
        .map(|mut cut| {
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            cut
        })
        .collect();
    let mut hashed = Vec::with_capacity(boundaries.len() + 1);
    let mut start = 0;
    for cut in boundaries {
        hashed.push(&text[start..cut]);
        start = cut;
    }
    hashed.push(&text[start..]);
    let by_char = text
        .char_indices()
        .map(|(i, c)| &text[i..i + c.len_utf8()])
        .collect();
    [vec![text], by_char, hashed]
}

/// Splits `data` at each zero byte: how the archive targets read a list of file names and
/// contents from an input that is not an archive.
pub fn fields(data: &[u8]) -> Vec<&[u8]> {
    data.split(|&b| b == 0).collect()
}

/// Events with their consecutive pieces of text joined: how a reader's output is compared across
/// chunkings, since a chunk boundary may split one delta into two. `join` returns the joined
/// event when `a` and `b` are pieces of the same thing, `None` when they are not.
pub fn joined<E>(events: Vec<E>, join: impl Fn(&E, &E) -> Option<E>) -> Vec<E> {
    let mut out: Vec<E> = Vec::with_capacity(events.len());
    for event in events {
        match out.last().and_then(|last| join(last, &event)) {
            Some(both) => *out.last_mut().expect("there is a last") = both,
            None => out.push(event),
        }
    }
    out
}

/// How far apart, in units in the last place, two floats may be and still count as the same
/// number after a save and a load. serde_json's default number parser may land one or two ulps
/// from the nearest float (about 9% of 16- and 17-digit numbers do); its exact parser
/// (`float_roundtrip`) costs about 11 KB gzip of page, measured with a wasm build of both. A
/// number that moves settles within 2 ulps after repeated saves (measured over a million values
/// and 20 saves each), far below a pixel or a score's last digit.
pub const FLOAT_ULPS: u64 = 4;

/// Whether two JSON documents are the same, numbers compared as floats within `FLOAT_ULPS`.
pub fn same_json(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => {
                x == y
                    || (x.is_sign_negative() == y.is_sign_negative()
                        && x.to_bits().abs_diff(y.to_bits()) <= FLOAT_ULPS)
            }
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, x)| y.get(key).is_some_and(|y| same_json(x, y)))
        }
        _ => a == b,
    }
}
