//! The browser entry point; on the host this binary does nothing (the app is wasm-only).

fn main() {
    #[cfg(target_arch = "wasm32")]
    aula_app::start();
}
