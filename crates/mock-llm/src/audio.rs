//! Speech: small, valid, silent audio bodies for `POST /v1/audio/speech` in the format asked
//! (mp3, opus in Ogg, wav, flac, pcm), and the reply to `POST /v1/audio/transcriptions`.

/// The content type OpenAI sends for a `response_format`, and the body; `None` for a format
/// the mock does not synthesise.
pub fn speech(format: &str) -> Option<(&'static str, Vec<u8>)> {
    Some(match format {
        "mp3" => ("audio/mpeg", mp3_silence(10)),
        "opus" => ("audio/opus", ogg_opus_silence(25)),
        "wav" => ("audio/wav", wav_silence(6_000)),
        "flac" => ("audio/flac", flac_empty()),
        "pcm" => ("audio/pcm", vec![0; 12_000]),
        _ => return None,
    })
}

/// MPEG-1 Layer III frames, 128 kbit/s, 44.1 kHz, mono, all side information zero (silence).
fn mp3_silence(frames: usize) -> Vec<u8> {
    let mut frame = vec![0u8; 417];
    frame[..4].copy_from_slice(&[0xFF, 0xFB, 0x90, 0xC0]);
    frame.repeat(frames)
}

/// 16-bit mono PCM at 24 kHz (OpenAI's rate) in a RIFF/WAVE container.
fn wav_silence(samples: u32) -> Vec<u8> {
    let data_len = samples * 2;
    let mut out = Vec::with_capacity(44 + data_len as usize);
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + data_len).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes()); // PCM
    out.extend_from_slice(&1u16.to_le_bytes()); // mono
    out.extend_from_slice(&24_000u32.to_le_bytes());
    out.extend_from_slice(&48_000u32.to_le_bytes()); // byte rate
    out.extend_from_slice(&2u16.to_le_bytes()); // block align
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data_len.to_le_bytes());
    out.resize(44 + data_len as usize, 0);
    out
}

/// A FLAC stream with only its STREAMINFO block: 24 kHz, mono, 16-bit, zero samples.
fn flac_empty() -> Vec<u8> {
    let mut out = b"fLaC".to_vec();
    out.extend_from_slice(&[0x80, 0, 0, 34]); // last block, STREAMINFO, 34 bytes
    out.extend_from_slice(&4096u16.to_be_bytes());
    out.extend_from_slice(&4096u16.to_be_bytes());
    out.extend_from_slice(&[0; 6]); // frame sizes unknown
    let packed: u64 = (24_000u64 << 44) | (15u64 << 36);
    out.extend_from_slice(&packed.to_be_bytes());
    out.extend_from_slice(&[0; 16]); // MD5 unknown
    out
}

fn ogg_crc(bytes: &[u8]) -> u32 {
    let mut crc = 0u32;
    for &b in bytes {
        crc ^= (b as u32) << 24;
        for _ in 0..8 {
            crc = if crc & 0x8000_0000 != 0 {
                (crc << 1) ^ 0x04C1_1DB7
            } else {
                crc << 1
            };
        }
    }
    crc
}

fn ogg_page(kind: u8, granule: u64, sequence: u32, packets: &[&[u8]]) -> Vec<u8> {
    let mut page = b"OggS".to_vec();
    page.push(0);
    page.push(kind);
    page.extend_from_slice(&granule.to_le_bytes());
    page.extend_from_slice(&0x4155_4C41u32.to_le_bytes()); // stream serial "AULA"
    page.extend_from_slice(&sequence.to_le_bytes());
    page.extend_from_slice(&[0; 4]); // CRC, filled below
    let mut lacing = Vec::new();
    for packet in packets {
        lacing.extend(std::iter::repeat_n(255u8, packet.len() / 255));
        lacing.push((packet.len() % 255) as u8);
    }
    page.push(lacing.len() as u8);
    page.extend_from_slice(&lacing);
    for packet in packets {
        page.extend_from_slice(packet);
    }
    let crc = ogg_crc(&page);
    page[22..26].copy_from_slice(&crc.to_le_bytes());
    page
}

/// Ogg Opus, mono: the two header packets, then `packets` silent 20 ms CELT frames.
fn ogg_opus_silence(packets: usize) -> Vec<u8> {
    const PRE_SKIP: u16 = 312;
    let mut head = b"OpusHead".to_vec();
    head.push(1);
    head.push(1);
    head.extend_from_slice(&PRE_SKIP.to_le_bytes());
    head.extend_from_slice(&48_000u32.to_le_bytes());
    head.extend_from_slice(&0i16.to_le_bytes());
    head.push(0);
    let mut tags = b"OpusTags".to_vec();
    tags.extend_from_slice(&8u32.to_le_bytes());
    tags.extend_from_slice(b"mock-llm");
    tags.extend_from_slice(&0u32.to_le_bytes());
    let silence: &[u8] = &[0xF8, 0xFF, 0xFE];
    let frames = vec![silence; packets];
    let granule = PRE_SKIP as u64 + 960 * packets as u64;
    let mut out = ogg_page(0x02, 0, 0, &[&head]);
    out.extend(ogg_page(0x00, 0, 1, &[&tags]));
    out.extend(ogg_page(0x04, granule, 2, &frames));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_format_has_its_container_signature() {
        let magic = |f: &str| speech(f).map(|(kind, body)| (kind, body[..4].to_vec()));
        assert_eq!(
            magic("mp3"),
            Some(("audio/mpeg", vec![0xFF, 0xFB, 0x90, 0xC0]))
        );
        assert_eq!(magic("opus"), Some(("audio/opus", b"OggS".to_vec())));
        assert_eq!(magic("wav"), Some(("audio/wav", b"RIFF".to_vec())));
        assert_eq!(magic("flac"), Some(("audio/flac", b"fLaC".to_vec())));
        assert!(speech("aac").is_none());
    }

    #[test]
    fn ogg_pages_carry_a_valid_checksum() {
        // The CRC of the page with its CRC field zeroed is what the field holds.
        let body = ogg_opus_silence(3);
        let first_len = 27 + 1 + 19;
        let mut page = body[..first_len].to_vec();
        let stored = u32::from_le_bytes([page[22], page[23], page[24], page[25]]);
        page[22..26].fill(0);
        assert_eq!(ogg_crc(&page), stored);
        assert_eq!(&body[28..36], b"OpusHead");
    }

    #[test]
    fn wav_header_sizes_agree_with_the_body() {
        let body = wav_silence(100);
        assert_eq!(body.len(), 244);
        assert_eq!(
            u32::from_le_bytes([body[4], body[5], body[6], body[7]]),
            236
        );
    }
}
