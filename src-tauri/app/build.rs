//! Runs from the package root (the repository root): tauri-build reads tauri.conf.json there
//! and writes gen/schemas there; the capabilities stay beside the app's sources.
fn main() {
    println!("cargo:rerun-if-changed=src-tauri/app/capabilities");
    let attributes =
        tauri_build::Attributes::new().capabilities_path_pattern("src-tauri/app/capabilities/**/*");
    if let Err(e) = tauri_build::try_build(attributes) {
        panic!("tauri-build: {e:#}");
    }
}
