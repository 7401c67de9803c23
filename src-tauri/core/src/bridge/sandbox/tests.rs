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
    assert!(a.contains(&format!("--tmpfs {d}/home/.ssh")), "{a}");
    assert!(
        a.contains(&format!("--ro-bind /dev/null {d}/home/.netrc")),
        "{a}"
    );
    assert!(a.contains(&format!("--tmpfs {d}/state")), "{a}");
    // Hidden paths after the grants (the later mount wins), the own folder after the hidden
    // state that holds it, the command last.
    let at = |s: &str| a.find(s).unwrap();
    assert!(at("--tmpfs /tmp") < at("--bind"), "{a}");
    assert!(
        at(&format!("--bind {d}/notes")) < at(&format!("--tmpfs {d}/home/.ssh")),
        "{a}"
    );
    assert!(
        at(&format!("--tmpfs {d}/state")) < at(&format!("--bind {d}/state/sandbox/s")),
        "{a}"
    );
    assert!(a.ends_with(&format!("--chdir {d} -- npx -y x@1")), "{a}");
}

#[test]
fn the_host_network_keeps_the_network() {
    let (_keep, d) = world();
    let limits = Limits {
        sandbox_network: crate::config::network::Network::Host,
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
        at(&format!("--ro-bind {d}/home {d}/home")) < at(&format!("--tmpfs {d}/home/.ssh")),
        "{a}"
    );
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
        sandbox_network: crate::config::network::Network::Host,
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
