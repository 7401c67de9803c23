//! Lays out the functions a bridge session runs together at the start of `warden`'s code
//! (`warden.order`, written by `scripts/order-symbols.sh`): a bridge touches about 1 MB of
//! its 8.7 MB of code, and the kernel maps in the pages around each page touched, so
//! scattered they cost an idle bridge 3-4 MB more RSS and more page faults at start-up.
//!
//! Only where rust-lld links by default (x86_64 Linux with glibc, Rust 1.90 and later) and no
//! other linker was asked for: other linkers may not know the option. `WARDEN_NO_SYMBOL_ORDER`
//! turns it off. Names in the file that no longer exist are ignored.
//!
//! The names are those of a whole-program LTO build in one codegen unit, as
//! `scripts/package.sh`, `scripts/bench.sh` and `scripts/order-symbols.sh` build: there no
//! function carries ThinLTO's `.llvm.<hash>` suffix, which changes with any edit of its module.
//! A ThinLTO build (plain `cargo build --release`) still finds most names, not those.

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=warden.order");
    println!("cargo:rerun-if-env-changed=WARDEN_NO_SYMBOL_ORDER");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let lld_by_default = var("TARGET") == "x86_64-unknown-linux-gnu" && rustc_minor() >= 90;
    let own_linker = var("CARGO_ENCODED_RUSTFLAGS").contains("link")
        || std::env::var_os("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER").is_some();
    if !lld_by_default || own_linker || std::env::var_os("WARDEN_NO_SYMBOL_ORDER").is_some() {
        return;
    }
    let order = Path::new(&var("CARGO_MANIFEST_DIR")).join("warden.order");
    if !order.exists() {
        return;
    }
    println!(
        "cargo:rustc-link-arg-bin=warden=-Wl,--symbol-ordering-file={}",
        order.display()
    );
    println!("cargo:rustc-link-arg-bin=warden=-Wl,--no-warn-symbol-ordering");
}

/// The minor version of the compiler (`rustc 1.95.0 ...` → 95); 0 if unknown.
fn rustc_minor() -> u32 {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| {
            let text = String::from_utf8_lossy(&o.stdout).into_owned();
            text.split_whitespace()
                .nth(1)?
                .split('.')
                .nth(1)?
                .parse()
                .ok()
        })
        .unwrap_or(0)
}
