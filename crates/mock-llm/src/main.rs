//! `mock-llm [--port N] [--script FILE] [--chunk-delay-ms N]`: serves on 127.0.0.1 and prints
//! `listening on 127.0.0.1:PORT` as its first line, so a test harness can find the port.

use std::io::Write;
use std::process::ExitCode;

use aula_mock_llm::{start, Script};

const USAGE: &str = "usage: mock-llm [--port N] [--script FILE.json] [--chunk-delay-ms N]\n\
                     Serves scripted OpenAI, Anthropic, Gemini and Ollama APIs on 127.0.0.1\n\
                     (port 0 picks one); the script format is in the aula-mock-llm crate docs.";

struct Options {
    port: u16,
    script: Option<String>,
    chunk_delay_ms: Option<u64>,
}

fn parse(args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options {
        port: 0,
        script: None,
        chunk_delay_ms: None,
    };
    let mut args = args;
    while let Some(flag) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .ok_or_else(|| format!("{name} needs a value\n{USAGE}"))
        };
        match flag.as_str() {
            "--port" => {
                let v = value("--port")?;
                options.port = v
                    .parse()
                    .map_err(|_| format!("--port {v} is not a port number"))?;
            }
            "--script" => options.script = Some(value("--script")?),
            "--chunk-delay-ms" => {
                let v = value("--chunk-delay-ms")?;
                options.chunk_delay_ms = Some(
                    v.parse()
                        .map_err(|_| format!("--chunk-delay-ms {v} is not a number"))?,
                );
            }
            "--help" | "-h" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    let options = match parse(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let mut script = match &options.script {
        Some(path) => match Script::load(path) {
            Ok(script) => script,
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        },
        None => Script::default(),
    };
    if let Some(ms) = options.chunk_delay_ms {
        script.chunk_delay_ms = ms;
    }
    let server = match start(options.port, script) {
        Ok(server) => server,
        Err(e) => {
            eprintln!("mock-llm could not listen on port {}: {e}", options.port);
            return ExitCode::FAILURE;
        }
    };
    let mut stdout = std::io::stdout();
    let _ = writeln!(stdout, "listening on {}", server.addr());
    let _ = stdout.flush();
    server.wait();
    ExitCode::SUCCESS
}
