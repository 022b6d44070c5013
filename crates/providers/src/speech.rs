//! The speech port's HTTP side: text-to-speech on an OpenAI-compatible `/audio/speech`, and
//! transcription on `/audio/transcriptions` (OpenAI, Groq Whisper, …) as `multipart/form-data`.
//! The browser's own speech APIs live in `app`; these are for providers with a key.

use serde_json::json;

use crate::auth_headers;
use crate::error::ProviderError;
use crate::request::Endpoint;
use crate::transport::{HttpRequest, Method};

/// The audio container asked of a TTS endpoint. Opus is the smallest for speech.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AudioFormat {
    #[default]
    Opus,
    Mp3,
    Wav,
}

impl AudioFormat {
    /// The `response_format` value.
    pub fn as_str(self) -> &'static str {
        match self {
            AudioFormat::Opus => "opus",
            AudioFormat::Mp3 => "mp3",
            AudioFormat::Wav => "wav",
        }
    }

    /// The MIME type of the bytes that come back.
    pub fn mime(self) -> &'static str {
        match self {
            AudioFormat::Opus => "audio/ogg; codecs=opus",
            AudioFormat::Mp3 => "audio/mpeg",
            AudioFormat::Wav => "audio/wav",
        }
    }
}

/// `POST {base}/audio/speech`: `text` spoken by `voice` with `endpoint.model` (e.g.
/// `gpt-4o-mini-tts`); the answer's body is the audio.
pub fn tts_request(
    endpoint: &Endpoint,
    text: &str,
    voice: &str,
    format: AudioFormat,
) -> HttpRequest {
    let body = json!({
        "model": endpoint.model.trim(),
        "input": text,
        "voice": voice,
        "response_format": format.as_str(),
    });
    HttpRequest::json(
        Method::Post,
        format!("{}/audio/speech", endpoint.base()),
        auth_headers(endpoint),
        &body,
    )
}

fn file_name(mime: &str) -> &'static str {
    let essence = mime.split(';').next().unwrap_or_default().trim();
    match essence {
        "audio/webm" | "video/webm" => "speech.webm",
        "audio/ogg" => "speech.ogg",
        "audio/mp4" | "audio/m4a" | "audio/x-m4a" => "speech.m4a",
        "audio/mpeg" | "audio/mp3" => "speech.mp3",
        "audio/wav" | "audio/x-wav" | "audio/wave" => "speech.wav",
        "audio/flac" => "speech.flac",
        _ => "speech.webm", // MediaRecorder's usual output
    }
}

/// A multipart boundary that does not occur in `audio`.
fn boundary_for(audio: &[u8]) -> String {
    (0u32..)
        .map(|n| format!("aula-audio-boundary-{n:08x}"))
        .find(|b| !audio.windows(b.len()).any(|w| w == b.as_bytes()))
        .unwrap_or_default()
}

/// `POST {base}/audio/transcriptions` with the recording as a file part; `language` is an
/// ISO-639-1 hint such as `en` or `zh`. Read the answer with [`parse_transcription`].
pub fn transcription_request(
    endpoint: &Endpoint,
    audio: &[u8],
    mime: &str,
    language: Option<&str>,
) -> HttpRequest {
    let boundary = boundary_for(audio);
    let mut body = Vec::with_capacity(audio.len() + 512);
    let mut field = |name: &str, value: &str| {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            )
            .as_bytes(),
        );
    };
    field("model", endpoint.model.trim());
    field("response_format", "json");
    if let Some(lang) = language.map(str::trim).filter(|l| !l.is_empty()) {
        field("language", lang);
    }
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{}\"\r\nContent-Type: {}\r\n\r\n",
            file_name(mime),
            mime.trim()
        )
        .as_bytes(),
    );
    body.extend_from_slice(audio);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    let mut headers = vec![(
        "content-type".to_string(),
        format!("multipart/form-data; boundary={boundary}"),
    )];
    headers.extend(auth_headers(endpoint));
    HttpRequest {
        method: Method::Post,
        url: format!("{}/audio/transcriptions", endpoint.base()),
        headers,
        body,
    }
}

/// The text of a transcription answer (`{"text": "…"}`).
pub fn parse_transcription(body: &str) -> Result<String, ProviderError> {
    let json: serde_json::Value =
        serde_json::from_str(body).map_err(|e| ProviderError::MalformedReply {
            provider: "the transcription service".into(),
            detail: format!("the answer is not JSON: {e}"),
        })?;
    json["text"]
        .as_str()
        .map(|t| t.trim().to_string())
        .ok_or_else(|| ProviderError::MalformedReply {
            provider: "the transcription service".into(),
            detail: "the answer has no text".into(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::preset;

    fn endpoint(model: &str) -> Endpoint {
        Endpoint::from_preset(preset("openai").unwrap(), model, Some("sk-speech".into()))
    }

    #[test]
    fn speech_is_asked_of_audio_speech_in_opus_by_default() {
        let r = tts_request(
            &endpoint("gpt-4o-mini-tts"),
            "Hello class.",
            "coral",
            AudioFormat::default(),
        );
        assert_eq!(r.url, "https://api.openai.com/v1/audio/speech");
        assert_eq!(r.method, Method::Post);
        assert_eq!(
            r.headers,
            [
                ("content-type".to_string(), "application/json".to_string()),
                ("authorization".to_string(), "Bearer sk-speech".to_string())
            ]
        );
        let body = r.json_body();
        assert_eq!(body["model"], "gpt-4o-mini-tts");
        assert_eq!(body["input"], "Hello class.");
        assert_eq!(body["voice"], "coral");
        assert_eq!(body["response_format"], "opus");
    }

    #[test]
    fn a_recording_is_sent_as_a_multipart_file_with_model_and_language() {
        let audio = b"\x1aE\xdf\xa3 fake webm bytes \x00\xff";
        let r = transcription_request(
            &endpoint("whisper-1"),
            audio,
            "audio/webm;codecs=opus",
            Some("zh"),
        );
        assert_eq!(r.url, "https://api.openai.com/v1/audio/transcriptions");
        let content_type = r.header("content-type").unwrap();
        let boundary = content_type
            .strip_prefix("multipart/form-data; boundary=")
            .unwrap();
        let body = &r.body;
        let text = String::from_utf8_lossy(body);
        assert!(text.starts_with(&format!("--{boundary}\r\n")));
        assert!(text.contains("name=\"model\"\r\n\r\nwhisper-1\r\n"));
        assert!(text.contains("name=\"language\"\r\n\r\nzh\r\n"));
        assert!(text.contains("name=\"file\"; filename=\"speech.webm\"\r\nContent-Type: audio/webm;codecs=opus\r\n\r\n"));
        assert!(body.windows(audio.len()).any(|w| w == audio));
        assert!(text.ends_with(&format!("\r\n--{boundary}--\r\n")));
    }

    #[test]
    fn the_boundary_never_occurs_in_the_audio() {
        let audio = b"xx--aula-audio-boundary-00000000yy".to_vec();
        let b = boundary_for(&audio);
        assert_eq!(b, "aula-audio-boundary-00000001");
    }

    #[test]
    fn transcription_text_is_read_from_the_json_answer() {
        assert_eq!(
            parse_transcription(r#"{"text":" 光合作用是什么？ "}"#).unwrap(),
            "光合作用是什么？"
        );
        assert!(parse_transcription("{}").is_err());
        assert!(parse_transcription("oops").is_err());
    }
}
