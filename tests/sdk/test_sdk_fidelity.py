"""mock-llm spoken to by the official OpenAI and Anthropic SDKs.

Starts the built binary (MOCK_LLM_BIN, default target/debug/mock-llm) on port 0 once, and
swaps the script per test through POST /__script.
"""

import json
import os
import subprocess
import urllib.request
from pathlib import Path

import anthropic
import openai
import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("MOCK_LLM_BIN", ROOT / "target" / "debug" / "mock-llm"))

LESSON = "Plants turn light into sugar, and oxygen is what is left over."


@pytest.fixture(scope="session")
def mock_url():
    if not BIN.exists():
        pytest.fail(f"{BIN} is missing: run `cargo build -p aula-mock-llm` or set MOCK_LLM_BIN")
    process = subprocess.Popen(
        [str(BIN), "--port", "0"], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True
    )
    try:
        line = process.stdout.readline().strip()
        assert line.startswith("listening on 127.0.0.1:"), line
        yield "http://" + line.removeprefix("listening on ")
    finally:
        process.terminate()
        process.wait(timeout=5)


def control(url, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url + path, data=data, method="GET" if body is None else "POST")
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())


@pytest.fixture
def script(mock_url):
    """Installs a script and clears the request log."""

    def install(body):
        control(mock_url, "/__script", body)
        control(mock_url, "/__reset", {})

    return install


def openai_client(url, key="sk-test", retries=0):
    return openai.OpenAI(base_url=url + "/v1", api_key=key, max_retries=retries, timeout=10)


def anthropic_client(url, key="sk-ant-test", retries=0):
    return anthropic.Anthropic(base_url=url, api_key=key, max_retries=retries, timeout=10)


def test_openai_stream_gives_the_scripted_text_and_usage(mock_url, script):
    script({"default": {"text": LESSON}, "chunk_words": 2})
    stream = openai_client(mock_url).chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "system", "content": "Teach."}, {"role": "user", "content": "What is light?"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == LESSON
    assert len([c for c in chunks if c.choices and c.choices[0].delta.content]) > 3
    finish = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finish == ["stop"]
    usage = chunks[-1].usage
    assert chunks[-1].choices == []
    assert (usage.prompt_tokens, usage.completion_tokens) == (6, (len(LESSON) + 3) // 4)
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    logged = control(mock_url, "/__requests")
    assert logged[0]["dialect"] == "openai" and logged[0]["model"] == "gpt-4o-mini"
    assert logged[0]["output_tokens"] == usage.completion_tokens
    headers = {k.lower(): v for k, v in logged[0]["headers"]}
    assert headers["authorization"] == "[redacted]"


def test_openai_reasoning_arrives_as_reasoning_content(mock_url, script):
    script({"default": {"thinking": "Chlorophyll reflects green light.", "text": "Green."}})
    stream = openai_client(mock_url).chat.completions.create(
        model="deepseek-reasoner", messages=[{"role": "user", "content": "Colour?"}], stream=True
    )
    reasoning, text = "", ""
    for chunk in stream:
        delta = chunk.choices[0].delta
        reasoning += (delta.model_extra or {}).get("reasoning_content") or ""
        text += delta.content or ""
    assert reasoning == "Chlorophyll reflects green light."
    assert text == "Green."


def test_openai_non_streamed_json_reply(mock_url, script):
    script({"rules": [{"match": {"last_message_contains": "outline"}, "reply": {"json": {"scenes": ["Light"]}}}]})
    completion = openai_client(mock_url).chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "Give the outline"}]
    )
    assert json.loads(completion.choices[0].message.content) == {"scenes": ["Light"]}
    assert completion.usage.prompt_tokens == 4


def test_anthropic_stream_gives_text_thinking_usage_and_stop_reason(mock_url, script):
    script({
        "rules": [{"match": {"dialect": "anthropic", "system_contains": "teacher"},
                   "reply": {"thinking": "The learner asks about light.", "text": LESSON}}],
        "chunk_words": 2,
    })
    client = anthropic_client(mock_url)
    with client.messages.stream(
        model="claude-sonnet-4-5",
        max_tokens=512,
        system="You are a teacher.",
        messages=[{"role": "user", "content": "What is light?"}],
    ) as stream:
        events = list(stream)
        final = stream.get_final_message()
    thinking = "".join(e.thinking for e in events if e.type == "thinking")
    text = "".join(e.text for e in events if e.type == "text")
    assert thinking == "The learner asks about light."
    assert text == LESSON
    assert any(e.type == "signature" for e in events)
    assert final.stop_reason == "end_turn"
    assert [b.type for b in final.content] == ["thinking", "text"]
    assert final.content[1].text == LESSON
    assert final.usage.input_tokens == 5 + 4
    assert final.usage.output_tokens == (len("The learner asks about light.") + 3) // 4 + (len(LESSON) + 3) // 4

    with client.messages.stream(
        model="claude-sonnet-4-5", max_tokens=64, system="You are a teacher.",
        messages=[{"role": "user", "content": "Again"}],
    ) as stream:
        assert "".join(stream.text_stream) == LESSON


def test_anthropic_non_streamed_message(mock_url, script):
    script({"default": {"text": "Short.", "stop_reason": "max_tokens"}})
    message = anthropic_client(mock_url).messages.create(
        model="claude-haiku-4-5", max_tokens=8, messages=[{"role": "user", "content": "Hi"}]
    )
    assert message.content[0].text == "Short."
    assert message.stop_reason == "max_tokens"


def test_both_sdks_raise_authentication_error_on_a_bad_key(mock_url, script):
    script({})
    with pytest.raises(openai.AuthenticationError) as caught:
        openai_client(mock_url, key="bad-key").chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "Hi"}]
        )
    assert caught.value.status_code == 401
    assert caught.value.code == "invalid_api_key"
    with pytest.raises(anthropic.AuthenticationError) as caught:
        anthropic_client(mock_url, key="bad-key").messages.create(
            model="claude-haiku-4-5", max_tokens=8, messages=[{"role": "user", "content": "Hi"}]
        )
    assert caught.value.body["error"]["type"] == "authentication_error"


def test_both_sdks_raise_rate_limit_error_on_a_429(mock_url, script):
    script({"faults": [{"http_error": {"status": 429, "retry_after_s": 1}}]})
    with pytest.raises(openai.RateLimitError):
        openai_client(mock_url).chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "Hi"}], stream=True
        )
    with pytest.raises(anthropic.RateLimitError) as caught:
        with anthropic_client(mock_url).messages.stream(
            model="claude-haiku-4-5", max_tokens=8, messages=[{"role": "user", "content": "Hi"}]
        ) as stream:
            stream.get_final_message()
    assert caught.value.response.headers["retry-after"] == "1"
    assert caught.value.body["error"]["type"] == "rate_limit_error"


def test_openai_sdk_retry_recovers_from_one_429(mock_url, script):
    script({"default": {"text": "Recovered."},
            "faults": [{"times": 1, "http_error": {"status": 429, "retry_after_ms": 50}}]})
    stream = openai_client(mock_url, retries=2).chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "Hi"}], stream=True
    )
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == "Recovered."
    statuses = [r["status"] for r in control(mock_url, "/__requests")]
    assert statuses == [429, 200]


def test_anthropic_stream_error_event_raises(mock_url, script):
    script({"default": {"text": LESSON},
            "faults": [{"stream_error": {"message": "Overloaded", "after_chunks": 2}}]})
    with pytest.raises(anthropic.APIStatusError) as caught:
        with anthropic_client(mock_url).messages.stream(
            model="claude-haiku-4-5", max_tokens=8, messages=[{"role": "user", "content": "Hi"}]
        ) as stream:
            list(stream.text_stream)
    assert "Overloaded" in str(caught.value)


def test_model_lists_in_both_shapes(mock_url, script):
    script({"models": ["mock-a", "mock-b"]})
    assert [m.id for m in openai_client(mock_url).models.list()] == ["mock-a", "mock-b"]
    assert [m.id for m in anthropic_client(mock_url).models.list()] == ["mock-a", "mock-b"]


def test_openai_speech_and_transcription(mock_url, script):
    script({"transcript": "What is photosynthesis?"})
    client = openai_client(mock_url)
    audio = client.audio.speech.create(model="gpt-4o-mini-tts", voice="alloy", input="Hello", response_format="wav")
    assert audio.content[:4] == b"RIFF" and audio.response.headers["content-type"] == "audio/wav"
    result = client.audio.transcriptions.create(model="whisper-1", file=("q.wav", audio.content, "audio/wav"))
    assert result.text == "What is photosynthesis?"
