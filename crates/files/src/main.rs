fn main() {
    #[cfg(target_arch = "wasm32")]
    aula_files::start();
}
