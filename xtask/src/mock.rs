//! Starting the local mock provider (crates/mock-llm) for the browser tests.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use anyhow::{bail, Context, Result};

use crate::{project_root, run};

/// The debug build of mock-llm, built on demand.
pub fn binary() -> Result<PathBuf> {
    run(
        Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())).args([
            "build",
            "-q",
            "-p",
            "aula-mock-llm",
        ]),
    )?;
    let path = project_root().join("target").join("debug").join("mock-llm");
    if !path.exists() {
        bail!("mock-llm was built but {} is missing", path.display());
    }
    Ok(path)
}

/// A running mock-llm; stopped when dropped.
pub struct MockLlm {
    child: Child,
    pub url: String,
}

/// The port from mock-llm's first line, `listening on 127.0.0.1:PORT`.
pub fn parse_listening_line(line: &str) -> Option<String> {
    let address = line.trim().strip_prefix("listening on ")?;
    let (host, port) = address.rsplit_once(':')?;
    port.parse::<u16>().ok()?;
    Some(format!("http://{host}:{port}"))
}

impl MockLlm {
    /// Replaces mock-llm's script (`POST /__script`), over a plain HTTP/1.1 connection.
    pub fn set_script(&self, script: &str) -> Result<()> {
        let address = self.url.trim_start_matches("http://");
        let mut stream = std::net::TcpStream::connect(address).context("connecting to mock-llm")?;
        write!(
            stream,
            "POST /__script HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{script}",
            script.len()
        )?;
        let mut answer = String::new();
        stream.read_to_string(&mut answer)?;
        let status = answer.split_whitespace().nth(1).unwrap_or_default();
        if !status.starts_with('2') {
            bail!(
                "mock-llm refused the script: {}",
                answer.lines().next().unwrap_or_default()
            );
        }
        Ok(())
    }

    pub fn start() -> Result<MockLlm> {
        let mut child = Command::new(binary()?)
            .args(["--port", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("starting mock-llm")?;
        let stdout = child.stdout.take().context("mock-llm has no stdout")?;
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .context("reading mock-llm's address")?;
        match parse_listening_line(&line) {
            Some(url) => Ok(MockLlm { child, url }),
            None => {
                let _ = child.kill();
                bail!("mock-llm did not say where it listens (it printed {line:?})")
            }
        }
    }
}

impl Drop for MockLlm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listening_line_gives_the_url() {
        assert_eq!(
            parse_listening_line("listening on 127.0.0.1:43117\n").as_deref(),
            Some("http://127.0.0.1:43117")
        );
        assert_eq!(parse_listening_line("starting up"), None);
        assert_eq!(
            parse_listening_line("listening on 127.0.0.1:notaport"),
            None
        );
    }
}
