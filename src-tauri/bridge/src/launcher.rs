//! Windows' launchers: `npx`, `uvx` and other commands that are `.cmd`/`.bat` files, found as
//! the shell finds them (each `PATH` folder, each `PATHEXT` extension), since std's spawn only
//! looks for `NAME.exe`. std then runs a batch file through `cmd.exe` with its arguments
//! quoted by the BatBadBut rules (Rust 1.77.2+), and refuses what cannot be quoted safely
//! (a line break); [`batch_refusal`] says so first, in words a user can act on.
//!
//! Pure functions over strings, so that their tests run on every platform; the Windows side
//! of `child.rs` calls them with the environment.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// `PATHEXT` when the environment has none (Windows' own default).
pub const DEFAULT_PATHEXT: &str = ".COM;.EXE;.BAT;.CMD";

/// The file `program` runs as, searched as `cmd.exe` does, but never in the current folder:
/// a bare name (no folder, no extension) is tried with each `pathext` extension in each
/// `path` folder (`;`-separated, quotes removed), in order; a name with a folder or an
/// extension is left to std. `is_file` says whether a candidate exists.
pub fn resolve(
    program: &OsStr,
    path: Option<&OsStr>,
    pathext: Option<&OsStr>,
    is_file: impl Fn(&Path) -> bool,
) -> Option<PathBuf> {
    let name = program.to_str()?;
    if name.is_empty() || name.contains(['/', '\\', ':']) || Path::new(name).extension().is_some() {
        return None;
    }
    let exts = pathext
        .and_then(OsStr::to_str)
        .filter(|s| !s.trim().is_empty())
        .unwrap_or(DEFAULT_PATHEXT);
    let path = path?.to_str()?;
    for dir in path.split(';').map(|d| d.trim().trim_matches('"')) {
        if dir.is_empty() {
            continue;
        }
        for ext in exts
            .split(';')
            .map(str::trim)
            .filter(|e| e.starts_with('.'))
        {
            let candidate = Path::new(dir).join(format!("{name}{}", ext.to_ascii_lowercase()));
            if is_file(&candidate) {
                return Some(candidate);
            }
        }
    }
    None
}

/// Whether `program` is run through `cmd.exe` (a `.bat` or `.cmd` file).
pub fn is_batch(program: &Path) -> bool {
    program
        .extension()
        .and_then(OsStr::to_str)
        .is_some_and(|e| e.eq_ignore_ascii_case("bat") || e.eq_ignore_ascii_case("cmd"))
}

/// Why `args` cannot be given to a batch file safely, if they cannot: `cmd.exe` ends a
/// command at a line break, whatever the quotes, so the rest would run as a command of its
/// own (std refuses it too, with a terser error).
pub fn batch_refusal(program: &Path, args: &[OsString]) -> Option<String> {
    let bad = args.iter().position(|a| {
        a.as_encoded_bytes()
            .iter()
            .any(|b| matches!(b, b'\r' | b'\n'))
    })?;
    Some(format!(
        "argument {} holds a line break, which cannot be passed safely to {} through cmd.exe \
         (a .cmd/.bat launcher); pass the value another way (an environment variable, a file), \
         or start the program the launcher runs directly",
        bad + 1,
        program.display()
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn found(program: &str, path: &str, pathext: Option<&str>, files: &[&str]) -> Option<String> {
        resolve(
            OsStr::new(program),
            Some(OsStr::new(path)),
            pathext.map(OsStr::new),
            // Paths compared with `/` (the join is `\\` on Windows).
            |p| files.contains(&p.to_string_lossy().replace('\\', "/").as_str()),
        )
        .map(|p| p.to_string_lossy().replace('\\', "/"))
    }

    #[test]
    fn a_bare_name_is_found_with_pathext_in_path_order() {
        let files = [
            "/node/npx.cmd",
            "/node/npx",
            "/py/uvx.exe",
            "/later/npx.exe",
        ];
        // PATHEXT's order within a folder, folders in PATH's order.
        assert_eq!(
            found("npx", "/node;/later", None, &files).as_deref(),
            Some("/node/npx.cmd")
        );
        assert_eq!(
            found("uvx", "\"/py\"; ;/node", Some(".EXE;.CMD"), &files).as_deref(),
            Some("/py/uvx.exe")
        );
        // An empty PATHEXT is Windows' default.
        assert_eq!(
            found("npx", "/later", Some(""), &files).as_deref(),
            Some("/later/npx.exe")
        );
        assert_eq!(found("npx", "/nowhere", None, &files), None);
    }

    #[test]
    fn names_with_a_folder_or_an_extension_are_left_to_std() {
        let files = ["/node/npx.cmd", "/node/npx.cmd.cmd"];
        assert_eq!(found("npx.cmd", "/node", None, &files), None);
        assert_eq!(found("/node/npx", "/node", None, &files), None);
        assert_eq!(found("C:npx", "/node", None, &files), None);
        assert_eq!(found("", "/node", None, &files), None);
    }

    #[test]
    fn batch_files_refuse_line_breaks_and_take_the_rest() {
        let cmd = Path::new(r"C:\node\npx.cmd");
        assert!(is_batch(cmd) && is_batch(Path::new("x.BAT")) && !is_batch(Path::new("x.exe")));
        let ok: Vec<OsString> = ["-y", "a b", "100%", "\"q\"", "&|<>^"]
            .iter()
            .map(OsString::from)
            .collect();
        assert_eq!(batch_refusal(cmd, &ok), None);
        let bad = vec![OsString::from("-y"), OsString::from("x\r\ncalc")];
        let why = batch_refusal(cmd, &bad).unwrap();
        assert!(why.starts_with("argument 2 holds a line break"), "{why}");
    }
}
