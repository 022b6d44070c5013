//! The worker's entry point; on the host this binary does nothing (the worker is wasm-only).

fn main() {
    #[cfg(target_arch = "wasm32")]
    aula_worker::start();
}
