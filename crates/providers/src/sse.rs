//! An incremental Server-Sent Events decoder: push bytes as they arrive, get each complete frame
//! once. Follows the WHATWG event-stream rules: `event:`/`data:`/`id:`/`retry:` fields,
//! multi-line `data`, `:` comments, CRLF, LF or CR line ends, and one leading byte-order mark.
//! Chunk boundaries may fall anywhere, even inside a UTF-8 character or a CRLF pair.

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseFrame {
    /// The `event:` name; `None` for the default `message` event.
    pub event: Option<String>,
    /// The `data:` lines joined by `\n`.
    pub data: String,
    /// The last `id:` seen on the stream so far.
    pub id: Option<String>,
    /// A `retry:` hint in milliseconds, if this frame carried one.
    pub retry_ms: Option<u64>,
}

impl SseFrame {
    /// OpenAI-style end of stream: `data: [DONE]`.
    pub fn is_done_marker(&self) -> bool {
        self.data == "[DONE]"
    }
}

#[derive(Debug, Default)]
pub struct SseDecoder {
    /// Bytes of the line being received.
    line: Vec<u8>,
    /// Whether the stream start has been checked for a byte-order mark.
    past_bom: bool,
    /// The previous chunk ended in CR, so a leading LF in the next one belongs to it.
    after_cr: bool,
    event: String,
    data: String,
    last_id: Option<String>,
    retry_ms: Option<u64>,
}

impl SseDecoder {
    pub fn new() -> SseDecoder {
        SseDecoder::default()
    }

    /// Feeds the next bytes of the stream; returns the frames they complete.
    pub fn push(&mut self, mut bytes: &[u8]) -> Vec<SseFrame> {
        let mut frames = Vec::new();
        if bytes.is_empty() {
            return frames;
        }
        if self.after_cr {
            self.after_cr = false;
            if bytes[0] == b'\n' {
                bytes = &bytes[1..];
            }
        }
        if !self.past_bom {
            // The mark may itself arrive split: hold the first bytes until they decide it.
            self.line.extend_from_slice(bytes);
            if self.line.len() < BOM.len() && BOM.starts_with(&self.line) {
                return frames;
            }
            self.past_bom = true;
            let held = std::mem::take(&mut self.line);
            let rest = held.strip_prefix(BOM).unwrap_or(&held);
            self.feed(rest, &mut frames);
            return frames;
        }
        self.feed(bytes, &mut frames);
        frames
    }

    /// The stream has ended. A last frame that was not closed by a blank line is still
    /// delivered: servers that close right after their final `data:` line lose nothing.
    pub fn finish(&mut self) -> Option<SseFrame> {
        if !self.past_bom {
            self.past_bom = true;
            let held = std::mem::take(&mut self.line);
            if !BOM.starts_with(&held) {
                self.line = held;
            }
        }
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.take_line(&line);
        }
        self.dispatch()
    }

    fn feed(&mut self, bytes: &[u8], frames: &mut Vec<SseFrame>) {
        let mut rest = bytes;
        while let Some(pos) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            let ending = rest[pos];
            if self.line.is_empty() {
                self.take_line_into(&rest[..pos], frames);
            } else {
                self.line.extend_from_slice(&rest[..pos]);
                let line = std::mem::take(&mut self.line);
                self.take_line_into(&line, frames);
            }
            rest = &rest[pos + 1..];
            if ending == b'\r' {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
        }
        self.line.extend_from_slice(rest);
    }

    fn take_line_into(&mut self, line: &[u8], frames: &mut Vec<SseFrame>) {
        if line.is_empty() {
            frames.extend(self.dispatch());
        } else {
            self.take_line(line);
        }
    }

    fn take_line(&mut self, line: &[u8]) {
        if line.first() == Some(&b':') {
            return; // a comment, e.g. a heartbeat or OpenRouter's "PROCESSING"
        }
        let line = String::from_utf8_lossy(line);
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_ref(), ""),
        };
        match field {
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
            }
            "event" => self.event = value.to_string(),
            "id" if !value.contains('\0') => self.last_id = Some(value.to_string()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                self.retry_ms = value.parse().ok();
            }
            _ => {}
        }
    }

    fn dispatch(&mut self) -> Option<SseFrame> {
        let event = std::mem::take(&mut self.event);
        let retry_ms = self.retry_ms.take();
        if self.data.is_empty() {
            return None;
        }
        let mut data = std::mem::take(&mut self.data);
        data.pop(); // the newline after the last data line
        Some(SseFrame {
            event: (!event.is_empty()).then_some(event),
            data,
            id: self.last_id.clone(),
            retry_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::OPENAI_TRANSCRIPT;
    use proptest::prelude::*;

    /// Anthropic-style named events with CRLF line ends, a ping and a two-line data field.
    const NAMED_EVENTS_CRLF: &str = concat!(
        "event: message_start\r\n",
        "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01\",\"role\":\"assistant\"}}\r\n\r\n",
        "event: ping\r\n",
        "data: {\"type\":\"ping\"}\r\n\r\n",
        "id: 7\r\n",
        "retry: 1500\r\n",
        "event: content_block_delta\r\n",
        "data: {\"type\":\"content_block_delta\",\r\n",
        "data:\"delta\":{\"type\":\"text_delta\",\"text\":\"Héllo\"}}\r\n\r\n",
        "event: message_stop\r\n",
        "data: {\"type\":\"message_stop\"}\r\n\r\n",
    );

    fn whole(input: &[u8]) -> Vec<SseFrame> {
        let mut decoder = SseDecoder::new();
        let mut frames = decoder.push(input);
        frames.extend(decoder.finish());
        frames
    }

    fn in_chunks(input: &[u8], cuts: &[usize]) -> Vec<SseFrame> {
        let mut decoder = SseDecoder::new();
        let mut frames = Vec::new();
        let mut from = 0;
        for &cut in cuts {
            frames.extend(decoder.push(&input[from..cut]));
            from = cut;
        }
        frames.extend(decoder.push(&input[from..]));
        frames.extend(decoder.finish());
        frames
    }

    fn assert_same_at_every_boundary(input: &[u8]) {
        let expected = whole(input);
        for cut in 0..=input.len() {
            assert_eq!(in_chunks(input, &[cut]), expected, "split at byte {cut}");
        }
        let cuts: Vec<usize> = (1..input.len()).collect();
        assert_eq!(in_chunks(input, &cuts), expected, "one byte at a time");
    }

    #[test]
    fn openai_transcript_decodes_to_its_data_frames() {
        let frames = whole(OPENAI_TRANSCRIPT.as_bytes());
        assert_eq!(frames.len(), 6, "the comment is not a frame");
        assert!(frames[2].data.contains("光合作用 🌱"));
        assert!(frames[5].is_done_marker());
        assert!(frames.iter().all(|f| f.event.is_none()));
    }

    #[test]
    fn openai_transcript_is_the_same_split_at_every_byte() {
        assert_same_at_every_boundary(OPENAI_TRANSCRIPT.as_bytes());
    }

    #[test]
    fn named_crlf_events_keep_their_names_ids_retry_and_joined_data() {
        let frames = whole(NAMED_EVENTS_CRLF.as_bytes());
        let names: Vec<_> = frames.iter().map(|f| f.event.as_deref()).collect();
        assert_eq!(
            names,
            [
                Some("message_start"),
                Some("ping"),
                Some("content_block_delta"),
                Some("message_stop")
            ]
        );
        assert_eq!(
            frames[2].data,
            "{\"type\":\"content_block_delta\",\n\"delta\":{\"type\":\"text_delta\",\"text\":\"Héllo\"}}"
        );
        assert_eq!(frames[2].id.as_deref(), Some("7"));
        assert_eq!(frames[2].retry_ms, Some(1500));
        assert_eq!(frames[3].id.as_deref(), Some("7"), "the id persists");
        assert_eq!(frames[3].retry_ms, None);
    }

    #[test]
    fn named_crlf_events_are_the_same_split_at_every_byte() {
        assert_same_at_every_boundary(NAMED_EVENTS_CRLF.as_bytes());
    }

    #[test]
    fn a_leading_byte_order_mark_is_dropped_even_when_split() {
        let with_bom = format!("\u{FEFF}{OPENAI_TRANSCRIPT}");
        assert_eq!(
            whole(with_bom.as_bytes()),
            whole(OPENAI_TRANSCRIPT.as_bytes())
        );
        assert_same_at_every_boundary(with_bom.as_bytes());
    }

    #[test]
    fn only_the_first_byte_order_mark_is_dropped() {
        let frames = whole("\u{FEFF}data: a\n\n\u{FEFF}data: b\n\n".as_bytes());
        assert_eq!(frames[0].data, "a");
        assert_eq!(frames.len(), 1, "a BOM mid-stream makes an unknown field");
    }

    #[test]
    fn lone_cr_ends_lines_too() {
        let input = b"data: one\rdata: two\r\rdata: three\r\r";
        let frames = whole(input);
        let data: Vec<_> = frames.iter().map(|f| f.data.as_str()).collect();
        assert_eq!(data, ["one\ntwo", "three"]);
        assert_same_at_every_boundary(input);
    }

    #[test]
    fn comments_and_unknown_fields_are_ignored() {
        let frames = whole(b":heartbeat\n\nfoo: bar\ndata: x\n: note\n\n");
        assert_eq!(
            frames,
            [SseFrame {
                data: "x".into(),
                ..SseFrame::default()
            }]
        );
    }

    #[test]
    fn a_frame_without_data_is_not_dispatched() {
        assert_eq!(whole(b"event: ping\n\ndata: x\n\n").len(), 1);
        assert_eq!(whole(b"event: ping\n\ndata: x\n\n")[0].event, None);
    }

    #[test]
    fn only_one_space_after_the_colon_is_stripped() {
        assert_eq!(whole(b"data:  two spaces\n\n")[0].data, " two spaces");
        assert_eq!(whole(b"data:none\n\n")[0].data, "none");
        assert_eq!(whole(b"data\n\n")[0].data, "");
    }

    #[test]
    fn a_last_frame_without_its_blank_line_is_still_delivered() {
        let frames = whole(b"data: first\n\ndata: [DONE]");
        assert_eq!(frames.len(), 2);
        assert!(frames[1].is_done_marker());
    }

    proptest! {
        #[test]
        fn any_chunking_decodes_like_the_whole_stream(
            cuts in prop::collection::btree_set(0usize..OPENAI_TRANSCRIPT.len(), 0..30)
        ) {
            let cuts: Vec<usize> = cuts.into_iter().collect();
            let input = NAMED_EVENTS_CRLF.to_string() + OPENAI_TRANSCRIPT;
            let cuts: Vec<usize> = cuts.into_iter().filter(|&c| c <= input.len()).collect();
            prop_assert_eq!(in_chunks(input.as_bytes(), &cuts), whole(input.as_bytes()));
        }
    }
}
