#![allow(clippy::unwrap_used)]
use super::*;

fn places(dir: &Path) -> Places {
    Places {
        homes: vec![dir.join("home")],
        warden: vec![dir.join("state"), dir.join("gone")],
        cwd: Some(dir.to_owned()),
        own: Some(dir.join("state/sandbox/s")),
        pass_env: Vec::new(),
        helper: None,
    }
}

fn text(a: &[OsString]) -> String {
    a.iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A folder outside /tmp (the tests' /tmp may be anything), resolved.
fn world() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().canonicalize().unwrap();
    (dir, d)
}

#[test]
fn grants_hidden_paths_and_the_own_folder_are_mounted_in_order() {
    let (_keep, d) = world();
    std::fs::create_dir_all(d.join("home/.ssh")).unwrap();
    std::fs::write(d.join("home/.netrc"), "machine x").unwrap();
    std::fs::create_dir_all(d.join("state")).unwrap();
    std::fs::create_dir_all(d.join("notes")).unwrap();
    let limits = Limits {
        sandbox: true,
        sandbox_write: vec![d.join("notes"), d.join("nowhere")],
        ..Limits::default()
    };
    let a = text(&argv(
        Path::new("/usr/bin/bwrap"),
        &["npx".into(), "-y".into(), "x@1".into()],
        &limits,
        &places(&d),
    ));
    let d = d.display();
    assert!(
        a.starts_with(
            "/usr/bin/bwrap --new-session --die-with-parent --unshare-user --unshare-pid"
        ),
        "{a}"
    );
    assert!(a.contains(" --unshare-net "), "{a}");
    assert!(a.contains(&format!("--bind {d}/notes {d}/notes")), "{a}");
    assert!(!a.contains("nowhere") && !a.contains("gone"), "{a}");
    // The user's npm cache is not writable: the server has its own.
    assert!(!a.contains(".npm"), "{a}");
    assert!(a.contains("--tmpfs /run "), "{a}");
    // The home is made afresh without its keys; Warden's state (a folder) is covered.
    assert!(a.contains(&format!("--tmpfs {d}/home ")), "{a}");
    assert!(!a.contains(".ssh") && !a.contains(".netrc"), "{a}");
    assert!(a.contains(&format!("--tmpfs {d}/state ")), "{a}");
    // The grants on the rebuilt home, the own folder (in the hidden state) after them, the
    // command last.
    let at = |s: &str| a.find(s).unwrap();
    assert!(
        at("--tmpfs /tmp") < at(&format!("--tmpfs {d}/home ")),
        "{a}"
    );
    assert!(
        at(&format!("--tmpfs {d}/home ")) < at(&format!("--bind {d}/notes")),
        "{a}"
    );
    assert!(
        at(&format!("--tmpfs {d}/state ")) < at(&format!("--bind {d}/state/sandbox/s")),
        "{a}"
    );
    assert!(a.ends_with(&format!("--chdir {d} -- npx -y x@1")), "{a}");
}

#[test]
fn a_rebuilt_folder_binds_back_its_other_entries_and_symlinks_as_symlinks() {
    let (_keep, d) = world();
    std::fs::create_dir_all(d.join("home/.ssh")).unwrap();
    std::fs::create_dir_all(d.join("home/src")).unwrap();
    std::os::unix::fs::symlink(d.join("home/.ssh"), d.join("home/keys")).unwrap();
    let a = text(&argv(
        Path::new("bwrap"),
        &["s".into()],
        &Limits::default(),
        &places(&d),
    ));
    let d = d.display();
    assert!(
        a.contains(&format!("--ro-bind-try {d}/home/src {d}/home/src")),
        "{a}"
    );
    // Bound, the link would show the keys; as a link it points into the hidden folder.
    assert!(
        a.contains(&format!("--symlink {d}/home/.ssh {d}/home/keys")),
        "{a}"
    );
    assert!(!a.contains(&format!("{d}/home/.ssh {d}/home/.ssh")), "{a}");
}

#[test]
fn a_hidden_path_made_after_the_start_is_hidden_too() {
    let (_keep, d) = world();
    std::fs::create_dir_all(d.join("home/src")).unwrap();
    // No ~/.aws yet: the home is made afresh all the same, in both modes.
    let p = places(&d);
    let a = text(&argv(
        Path::new("bwrap"),
        &["s".into()],
        &Limits::default(),
        &p,
    ));
    assert!(
        a.contains(&format!("--tmpfs {} ", d.join("home").display())),
        "{a}"
    );
    let roots = landlock::split(&[PathBuf::from("/")], &p.hidden(&Limits::default()));
    assert!(
        !roots.iter().any(|r| d.join("home/.aws").starts_with(r)),
        "{roots:?}"
    );
    assert!(
        roots.iter().any(|r| d.join("home/src/x").starts_with(r)),
        "{roots:?}"
    );
}

#[test]
fn what_runs_outside_later_stays_read_only_in_a_grant() {
    let (_keep, d) = world();
    let app = d.join("app");
    for p in [".git/hooks", ".git/objects", ".vscode", "src"] {
        std::fs::create_dir_all(app.join(p)).unwrap();
    }
    for f in [".git/config", ".mcp.json"] {
        std::fs::write(app.join(f), "").unwrap();
    }
    let limits = Limits {
        sandbox: true,
        sandbox_write: vec![app.clone()],
        ..Limits::default()
    };
    let p = places(&d);
    let a = text(&argv(Path::new("bwrap"), &["s".into()], &limits, &p));
    let ro = |rel: &str| format!("--ro-bind {0} {0}", app.join(rel).display());
    let at = |s: &str| a.find(s).unwrap_or(usize::MAX);
    let grant = at(&format!("--bind {0} {0}", app.display()));
    for rel in [".git/config", ".git/hooks", ".vscode", ".mcp.json"] {
        assert!(
            grant < at(&ro(rel)) && at(&ro(rel)) < usize::MAX,
            "{rel}: {a}"
        );
    }
    assert!(!a.contains(&ro(".git/objects")), "{a}");
    // Landlock: left out of the grant, the rest of it writable.
    let roots = landlock::split(std::slice::from_ref(&app), &p.read_only(&limits));
    let writable = |rel: &str| roots.iter().any(|r| app.join(rel).starts_with(r));
    assert!(
        writable("src/main.rs") && writable(".git/objects/ab"),
        "{roots:?}"
    );
    assert!(
        !writable(".git/config") && !writable(".git/hooks/pre-commit"),
        "{roots:?}"
    );
    assert!(
        !writable(".vscode/tasks.json") && !writable(".mcp.json"),
        "{roots:?}"
    );
}

#[test]
fn a_grant_of_the_home_a_program_folder_or_a_read_only_name_is_refused() {
    let (_keep, d) = world();
    for p in ["home/.local/bin", "home/.vscode/x", "home/projects/app"] {
        std::fs::create_dir_all(d.join(p)).unwrap();
    }
    let p = places(&d);
    let check = |grant: &str| {
        let limits = Limits {
            sandbox: true,
            sandbox_write: vec![d.join(grant)],
            ..Limits::default()
        };
        check_grants(&limits, &p).err().map(|r| r.code)
    };
    for refused in [
        "home",
        "",
        "home/.local",
        "home/.local/bin",
        "home/.vscode/x",
    ] {
        assert_eq!(check(refused), Some(Code::SandboxGrant), "{refused}");
    }
    assert_eq!(check("home/projects/app"), None);
}

#[test]
fn the_host_network_keeps_the_network() {
    let (_keep, d) = world();
    let limits = Limits {
        sandbox_network: warden_config::network::Network::Host,
        ..Limits::default()
    };
    let a = text(&argv(
        Path::new("bwrap"),
        &["s".into()],
        &limits,
        &places(&d),
    ));
    assert!(!a.contains("--unshare-net"), "{a}");
}

#[test]
fn a_home_under_tmp_stays_readable_with_its_keys_hidden() {
    let dir = tempfile::tempdir_in("/tmp").unwrap();
    let d = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(d.join("home/.ssh")).unwrap();
    let a = text(&argv(
        Path::new("bwrap"),
        &["s".into()],
        &Limits::default(),
        &places(&d),
    ));
    let d = d.display();
    let at = |s: &str| a.find(s).unwrap();
    assert!(
        at("--tmpfs /tmp") < at(&format!("--ro-bind {d}/home {d}/home")),
        "{a}"
    );
    assert!(
        at(&format!("--ro-bind {d}/home {d}/home")) < at(&format!("--tmpfs {d}/home ")),
        "{a}"
    );
    assert!(!a.contains(".ssh"), "{a}");
}

#[test]
fn a_container_runner_is_refused() {
    let limits = Limits {
        sandbox: true,
        ..Limits::default()
    };
    for runner in ["docker", "/usr/bin/podman", "nerdctl"] {
        let r = launch(
            &[runner.into(), "run".into(), "x".into()],
            &limits,
            &Places::default(),
        );
        assert_eq!(
            r.err().map(|r| r.code),
            Some(Code::SandboxContainer),
            "{runner}"
        );
    }
}

fn words(line: &[&str]) -> Vec<OsString> {
    line.iter().map(OsString::from).collect()
}

/// A runner started through `env`, a shell's command text or a wrapper is found, by name.
#[test]
fn a_container_runner_is_found_through_env_shells_and_wrappers() {
    let lines: &[&[&str]] = &[
        &["env", "docker", "run", "x"],
        &["env", "-i", "A=1", "-u", "B", "podman", "run", "x"],
        &["/usr/bin/env", "-S", "docker run -i x"],
        &["env", "-Sdocker run -i x"],
        &["env", "--split-string=docker run"],
        &["sh", "-c", "docker run --rm -i x"],
        &["bash", "-lc", "cd /srv && exec /usr/bin/docker run -i x"],
        &["sh", "-c", "exec \"$0\" \"$@\"", "docker", "run"],
        &["nice", "-n", "5", "docker", "run"],
        &["timeout", "5", "docker", "run"],
        &[
            "nohup", "stdbuf", "-oL", "setsid", "ionice", "-c3", "nerdctl", "run",
        ],
        &["chrt", "-f", "10", "taskset", "-c", "0", "finch", "run"],
        &["sudo", "-u", "me", "docker", "run"],
        &["podman-remote", "run", "x"],
        &["docker-compose", "run", "x"],
        &["limactl", "shell", "default", "nerdctl", "run"],
        &["nerdctl.lima", "run", "x"],
        &["colima", "ssh"],
        &["Docker.EXE", "run"],
        &["/opt/bin/DOCKER", "run"],
    ];
    let missed: Vec<String> = lines
        .iter()
        .filter(|l| container_runner(&words(l)).is_none())
        .map(|l| l.join(" "))
        .collect();
    assert_eq!(missed, Vec::<String>::new());
}

/// A server's own program is not a runner because an argument mentions one.
#[test]
fn a_program_that_is_no_runner_or_wrapper_is_not_refused() {
    let lines: &[&[&str]] = &[
        &["node", "server.js", "--image", "docker"],
        &["uvx", "mcp-server-docker"],
        &["npx", "-y", "@x/docker-mcp"],
        &["dockerfile-lint", "run"],
        &["env", "A=1", "node", "server.js"],
        &["sh", "-c", "exec node server.js"],
    ];
    let refused: Vec<String> = lines
        .iter()
        .filter(|l| container_runner(&words(l)).is_some())
        .map(|l| l.join(" "))
        .collect();
    assert_eq!(refused, Vec::<String>::new());
}

/// A link to a runner under another name is the runner.
#[test]
fn a_symlink_to_a_runner_is_the_runner() {
    let (_keep, d) = world();
    std::fs::write(d.join("docker"), "#!/bin/sh\n").unwrap();
    std::os::unix::fs::symlink(d.join("docker"), d.join("dk")).unwrap();
    let dk = d.join("dk").to_string_lossy().into_owned();
    assert_eq!(
        container_runner(&words(&[&dk, "run"])).as_deref(),
        Some("docker")
    );
}

/// `expanded` reads the homes' `.npmrc`, never the working folder's.
#[test]
fn presets_take_no_mirror_from_the_working_folder() {
    let (_keep, d) = world();
    std::fs::create_dir_all(d.join("home")).unwrap();
    std::fs::write(
        d.join("home/.npmrc"),
        "registry=https://npm.corp.example/\n",
    )
    .unwrap();
    std::fs::write(d.join(".npmrc"), "@x:registry=https://npm.evil.example/\n").unwrap();
    let l = expanded(&[network::entry("@npm").unwrap()], &places(&d));
    let names: Vec<bool> = ["npm.corp.example", "npm.evil.example"]
        .iter()
        .map(|h| network::check(&l, h, 443) != network::Verdict::Unlisted)
        .collect();
    assert_eq!(names, [true, false]);
}

#[test]
fn the_environment_is_cleared_but_for_the_short_list_and_pass_env() {
    // This test binary's environment: PATH is there, and a variable no list names.
    let p = Places {
        pass_env: vec!["CARGO_PKG_NAME".into()],
        ..Places::default()
    };
    // SAFETY-free: read only.
    let env = cleared_env(&p, Some(Path::new("/own")), false, None);
    let names: Vec<String> = env
        .iter()
        .map(|(k, _)| k.to_string_lossy().into_owned())
        .collect();
    assert!(names.contains(&"PATH".to_owned()), "{names:?}");
    assert!(
        !names.iter().any(|n| n == "CARGO_MANIFEST_DIR"),
        "{names:?}"
    );
    let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    assert_eq!(get("npm_config_cache"), Some("/own/npm".into()));
    assert_eq!(get("TMPDIR"), Some("/own/tmp".into()));
}

#[test]
fn landlock_roots_leave_out_every_hidden_path_nested_or_not() {
    let (_keep, d) = world();
    for p in [
        "a/b/c",
        "a/b/d",
        "a/e",
        "home/.ssh",
        "home/.config/gh",
        "home/.config/app",
        "home/src",
    ] {
        std::fs::create_dir_all(d.join(p)).unwrap();
    }
    // A nested hidden path listed after the one that holds it, and before.
    let hidden = [
        d.join("a/b/c"),
        d.join("a/b"),
        d.join("home/.ssh"),
        d.join("home/.config/gh"),
    ];
    let roots = landlock::split(&[PathBuf::from("/")], &hidden);
    let readable = |p: &Path| roots.iter().any(|r| p.starts_with(r));
    assert!(readable(&d.join("home/src/main.rs")));
    assert!(readable(&d.join("home/.config/app/x")));
    assert!(readable(&d.join("a/e")));
    assert!(readable(Path::new("/usr/bin/env")));
    assert!(!readable(&d.join("a/b/d/x")));
    assert!(!readable(&d.join("a/b/c")));
    assert!(!readable(&d.join("home/.ssh/id_rsa")));
    assert!(!readable(&d.join("home/.config/gh/hosts.yml")));
}

#[test]
fn a_write_grant_that_holds_a_hidden_path_leaves_it_hidden() {
    let (_keep, d) = world();
    for p in ["home/.ssh", "home/work"] {
        std::fs::create_dir_all(d.join(p)).unwrap();
    }
    let roots = landlock::split(&[d.join("home")], &[d.join("home/.ssh")]);
    let writable = |p: &Path| roots.iter().any(|r| p.starts_with(r));
    assert!(writable(&d.join("home/work/x")));
    assert!(!writable(&d.join("home/.ssh/authorized_keys")));
}

#[test]
fn a_symlink_is_never_a_root() {
    let (_keep, d) = world();
    std::fs::create_dir_all(d.join("real/home/.ssh")).unwrap();
    std::os::unix::fs::symlink(d.join("real/home"), d.join("home")).unwrap();
    let hidden = resolved(vec![d.join("home/.ssh")]);
    assert_eq!(hidden, [d.join("real/home/.ssh")]);
    let roots = landlock::split(&[PathBuf::from("/")], &hidden);
    assert!(!roots.contains(&d.join("home")), "{roots:?}");
    assert!(
        !roots
            .iter()
            .any(|r| d.join("real/home/.ssh").starts_with(r)),
        "{roots:?}"
    );
}

#[test]
fn a_refusal_in_stderr_names_the_path_or_the_network() {
    let limits = Limits {
        sandbox: true,
        sandbox_write: vec![PathBuf::from("/home/me/notes")],
        ..Limits::default()
    };
    let d = |line: &str| denied(line, &limits);
    assert_eq!(
        d("Error: EROFS: read-only file system, open '/home/me/out.txt'"),
        Some(Denied::Path("/home/me/out.txt".into()))
    );
    assert_eq!(
        d("PermissionError: [Errno 13] Permission denied: '/home/me/.ssh/id_rsa'"),
        Some(Denied::Path("/home/me/.ssh/id_rsa".into()))
    );
    assert_eq!(
        d("cannot write /home/me/x: Read-only file system (os error 30)"),
        Some(Denied::Path("/home/me/x".into()))
    );
    assert_eq!(
        d("getaddrinfo EAI_AGAIN registry.npmjs.org"),
        Some(Denied::Network)
    );
    // Inside a grant, or in its own /tmp: not the sandbox.
    assert_eq!(
        d("EACCES: permission denied, open '/home/me/notes/a'"),
        None
    );
    assert_eq!(d("EACCES: permission denied, open '/tmp/a'"), None);
    // Below /tmp: a folder kept readable under the sandbox's /tmp (a clone or home there).
    assert_eq!(
        d("cannot write /tmp/clone/home/x: Read-only file system (os error 30)"),
        Some(Denied::Path("/tmp/clone/home/x".into()))
    );
    assert_eq!(d("listening on stdio"), None);
    let host = Limits {
        sandbox_network: warden_config::network::Network::Host,
        ..limits.clone()
    };
    assert_eq!(denied("connect ENETUNREACH 1.2.3.4:443", &host), None);
}

#[test]
fn bubblewrap_refused_namespaces_is_recognised() {
    assert!(userns_denied(
        "bwrap: setting up uid map: Permission denied\n"
    ));
    assert!(userns_denied(
        "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces"
    ));
    assert!(!userns_denied("node: cannot open /x: Permission denied"));
}

/// The own folder with a link the server planted where its uv caches go (`uv` pointing at a
/// folder of the user's).
fn planted(d: &Path) -> PathBuf {
    let own = d.join("state/sandbox/s");
    own_dirs(&own).unwrap();
    std::fs::remove_dir_all(own.join("uv")).unwrap();
    std::fs::create_dir_all(d.join("victim")).unwrap();
    std::os::unix::fs::symlink(d.join("victim"), own.join("uv")).unwrap();
    own
}

/// Warden makes nothing through a link planted in the own folder.
#[test]
fn the_own_folder_is_made_through_no_planted_link() {
    let (_keep, d) = world();
    let own = planted(&d);
    let _ = own_dirs(&own);
    assert_eq!(std::fs::read_dir(d.join("victim")).unwrap().count(), 0);
}

/// A server whose own folder holds a planted link is not started, with the code that says so.
#[test]
fn a_planted_link_in_the_own_folder_refuses_the_start() {
    let (_keep, d) = world();
    planted(&d);
    let limits = Limits {
        sandbox: true,
        ..Limits::default()
    };
    let r = launch(&["node".into(), "x.js".into()], &limits, &places(&d));
    assert_eq!(r.err().map(|r| r.code), Some(Code::SandboxOwnFolder));
}

#[test]
fn the_hidden_npmrc_gives_npm_its_registries_but_no_token() {
    let (_keep, d) = world();
    std::fs::create_dir_all(d.join("home")).unwrap();
    std::fs::write(
        d.join("home/.npmrc"),
        "registry=https://npm.corp.example/\n@acme:registry=https://npm.acme.example/\n//npm.corp.example/:_authToken=TOKEN-9f\n@x:registry=https://me:PASSWORD@npm.x.example/\n",
    )
    .unwrap();
    let env = cleared_env(&places(&d), None, true, None);
    let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    assert_eq!(
        (get("npm_config_registry"), get("npm_config_@acme:registry")),
        (
            Some("https://npm.corp.example/".into()),
            Some("https://npm.acme.example/".into())
        )
    );
    let all = format!("{env:?}");
    assert!(!all.contains("TOKEN") && !all.contains("PASSWORD"), "{all}");
}

#[test]
fn a_keys_folder_not_made_yet_is_made_empty_and_private_then_covered() {
    use std::os::unix::fs::PermissionsExt as _;
    let (_keep, d) = world();
    std::fs::create_dir_all(d.join("home/.config/app")).unwrap();
    let a = text(&argv(
        Path::new("bwrap"),
        &["s".into()],
        &Limits::default(),
        &places(&d),
    ));
    let gh = d.join("home/.config/gh");
    let mode = std::fs::metadata(&gh).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    assert!(a.contains(&format!("--tmpfs {} ", gh.display())), "{a}");
}

#[test]
fn a_grant_of_what_the_homes_programs_run_from_or_through_a_link_is_refused() {
    let (_keep, d) = world();
    for p in [
        "home/.config/systemd/user",
        "home/projects/app",
        "home/.config/app",
    ] {
        std::fs::create_dir_all(d.join(p)).unwrap();
    }
    std::os::unix::fs::symlink(d.join("home/.config"), d.join("home/projects/app/out")).unwrap();
    let p = places(&d);
    let check = |grant: &str| {
        let limits = Limits {
            sandbox: true,
            sandbox_write: vec![d.join(grant)],
            ..Limits::default()
        };
        check_grants(&limits, &p).err().map(|r| r.code)
    };
    let refused: Vec<&str> = [
        "home/.config",
        "home/.config/systemd/user",
        "home/projects/app/out",
        "home/projects/app/out/app",
    ]
    .into_iter()
    .filter(|g| check(g) == Some(Code::SandboxGrant))
    .collect();
    assert_eq!(refused.len(), 4, "refused only {refused:?}");
}

#[test]
fn a_hidden_path_that_is_the_root_refuses_the_start() {
    let limits = Limits {
        sandbox: true,
        sandbox_deny: vec![PathBuf::from("/")],
        ..Limits::default()
    };
    let r = launch(&["s".into()], &limits, &Places::default());
    assert_eq!(r.err().map(|r| r.code), Some(Code::SandboxUnavailable));
}

#[test]
fn a_missing_file_in_a_clients_folder_is_hidden_through_its_folder() {
    let (_keep, d) = world();
    // ~/.claude exists, its credentials not yet; ~/.config exists, Claude Desktop's not.
    std::fs::create_dir_all(d.join("home/.claude/projects")).unwrap();
    std::fs::create_dir_all(d.join("home/.config/app")).unwrap();
    let a = text(&argv(
        Path::new("bwrap"),
        &["s".into()],
        &Limits::default(),
        &places(&d),
    ));
    let home = d.join("home");
    assert!(
        a.contains(&format!("--tmpfs {} ", home.join(".claude").display())),
        "{a}"
    );
    assert!(
        !a.contains(&format!("--tmpfs {} ", home.join(".config").display())),
        "{a}"
    );
}

#[test]
fn a_read_only_name_linked_out_of_the_grant_is_not_mounted() {
    let (_keep, d) = world();
    std::fs::create_dir_all(d.join("home/.ssh")).unwrap();
    std::fs::create_dir_all(d.join("app/.git")).unwrap();
    std::os::unix::fs::symlink(d.join("home/.ssh"), d.join("app/.idea")).unwrap();
    assert_eq!(read_only_in(&d.join("app")), Vec::<PathBuf>::new());
    let limits = Limits {
        sandbox: true,
        sandbox_write: vec![d.join("app")],
        ..Limits::default()
    };
    let a = text(&argv(
        Path::new("bwrap"),
        &["s".into()],
        &limits,
        &places(&d),
    ));
    let git = d.join("app/.git");
    assert!(a.contains(&format!("--bind {0} {0}", git.display())), "{a}");
    assert!(
        !a.contains(&format!("{0} {0}", d.join("home/.ssh").display())),
        "{a}"
    );
}
