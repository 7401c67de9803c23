//! Within each crate, the files of the folders below use only files listed before them, so no
//! two import each other (between crates, Cargo's dependency graph is the rule, and it has no
//! cycles). A new file goes into its list here. A crate's `lib.rs` and a `mod.rs` declare and
//! re-export; a name that is not a file of the folder (an item of the crate's root) is not
//! checked. The orders are docs/ARCHITECTURE.md's code map.

use std::path::Path;

/// Each crate (its folder in src-tauri/), a folder of its `src`, and that folder's files in
/// order (a subdirectory counts as one file).
const DIRS: &[(&str, &str, &str)] = &[
    ("wire", "", "codes redact text events protocol"),
    (
        "config",
        "",
        "fsutil fswatch keychain network paths selectors edit keys pins policy testing watch",
    ),
    ("control", "", "protocol pipe socket"),
    (
        "bridge",
        "",
        "fallback guard launcher reaper sandbox signals spin tether tunnel router sink proxy \
         child stdio splice links control pumps reload generation session",
    ),
    (
        "bridge",
        "router",
        "start tools watchdog lifecycle fallback ids learn adapt ask mrtr",
    ),
    (
        "bridge",
        "sandbox",
        "bwrap netns seatbelt seccomp stderr landlock",
    ),
    (
        "supervisor",
        "",
        "api metrics health history import probe flows orphans settings clients_api connection switches \
         service sessions status known commands checks clients_host clients_probe dispatch serve run \
         layers paths_pinned",
    ),
    ("supervisor", "flows", "add policy"),
    ("supervisor", "api", "error reports status clients app op"),
    (
        "clients",
        "",
        "doc risk remote jsonc yaml dialect literal secrets model lock backup detect notices edit ledger \
         write ops manage watch",
    ),
    ("clients", "edit", "classify splice driver wrap unwrap"),
    (
        "clients",
        "manage",
        "types lines json render region text files remove sets",
    ),
    (
        "registry",
        "",
        "document error version plan args planner parse view",
    ),
];

/// The code of a file: no comments, no inline modules (`tests`, per-OS ones).
fn code(text: &str) -> String {
    let mut inline = false;
    let mut out = String::new();
    for line in text.lines() {
        inline = (inline || line.starts_with("mod ") && line.ends_with('{')) && line != "}";
        if !inline && !line.trim_start().starts_with("//") {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The names after each `prefix` in `code` (a `{...}` group: each of its names).
fn names<'a>(code: &'a str, prefix: &str) -> Vec<&'a str> {
    let word = |s: &'a str| {
        s.trim()
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .next()
    };
    let mut out = Vec::new();
    for (i, _) in code.match_indices(prefix) {
        let rest = &code[i + prefix.len()..];
        match rest.strip_prefix('{') {
            Some(g) => out.extend(g[..g.find('}').unwrap_or(0)].split(',').filter_map(word)),
            None => out.extend(word(rest)),
        }
    }
    out
}

#[test]
fn files_use_only_files_listed_before_them() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut bad = Vec::new();
    for (krate, dir, order) in DIRS {
        let src = crates.join(krate).join("src");
        let order: Vec<&str> = order.split_whitespace().collect();
        let read_dir = |p: &Path| std::fs::read_dir(p).into_iter().flatten().flatten();
        let folder = src.join(dir);
        assert!(folder.is_dir(), "{} is gone: update DIRS", folder.display());
        for entry in read_dir(&folder) {
            let path = entry.path();
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("")
                .to_owned();
            if stem == "mod" || stem == "lib" || stem.starts_with("tests") {
                continue;
            }
            let Some(at) = order.iter().position(|o| *o == stem) else {
                bad.push(format!("{krate}/{dir}/{stem} is not listed"));
                continue;
            };
            // A subdirectory's files: its `mod.rs`'s `super::` and the others' `super::super::`
            // are this directory.
            let files: Vec<_> = if path.is_dir() {
                read_dir(&path).map(|e| e.path()).collect()
            } else {
                vec![path.clone()]
            };
            for file in files {
                let code = code(&std::fs::read_to_string(&file).unwrap_or_default());
                let code = if path.is_dir() && !file.ends_with("mod.rs") {
                    code.replace("super::super::", "HERE::")
                        .replace("super::", "INNER::")
                } else {
                    code.replace("super::super::", "UP::")
                        .replace("super::", "HERE::")
                };
                let crate_path = if dir.is_empty() {
                    "crate::".to_owned()
                } else {
                    format!("crate::{}::", dir.replace('/', "::"))
                };
                for name in names(&code, "HERE::")
                    .into_iter()
                    .chain(names(&code, &crate_path))
                {
                    if order.contains(&name) && !order[..=at].contains(&name) {
                        let file = file.strip_prefix(&crates).unwrap_or(&file).display();
                        bad.push(format!("{file} uses {krate}/{dir}/{name}"));
                    }
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "out of order (docs/ARCHITECTURE.md):\n{}",
        bad.join("\n")
    );
}
