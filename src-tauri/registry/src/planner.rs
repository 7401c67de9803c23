//! From a server document to the exact command line Warden would write (or a refusal).
//!
//! The command is the runner and the pinned package, as docs/registry.md says: npm `npx -y ID@VERSION`,
//! pypi `uvx ID==VERSION`, oci `docker run -i --rm IMAGE:TAG`, nuget `dnx ID@VERSION --yes`.
//! Runtime arguments go to the runner (before the package), package arguments to the server
//! (after it). Odd documents are normalized with a warning, or refused with a message.

use std::collections::BTreeSet;

use super::args::{Resolved, Resolver};
use super::document::{KeyValueInput, Package, RegistryType, ServerJson};
use super::error::{PackageId, RegistryError, RemoteSummary};
use super::plan::{
    InstallPlan, PlanOptions, PlannedEnv, PlannedPackage, RemotePlan, ValueSource, Warning,
    WarningKind,
};
use super::version::{fill_version, not_exact, split_image, template_name};
use warden_clients::{self as clients, Risk};

/// The IDE entry's name: `as_name` (`--as`), else the part of the registry name after its
/// last `/` (`io.github.microsoft/playwright-mcp` → `playwright-mcp`).
pub fn entry_name(registry_name: &str, as_name: Option<&str>) -> String {
    match as_name.map(str::trim).filter(|n| !n.is_empty()) {
        Some(name) => name.to_owned(),
        None => registry_name
            .rsplit_once('/')
            .map_or(registry_name, |(_, last)| last)
            .to_owned(),
    }
}

/// Whether `version`, as a person asked for it (`NAME@VERSION`), names one exact version:
/// `latest`, a range or a template is refused before the registry is asked, so that what is
/// installed is never "whatever is newest" under another name.
pub fn requested_version(server: &str, version: &str) -> Result<(), RegistryError> {
    match not_exact(&RegistryType::Other(String::new()), version) {
        None => Ok(()),
        Some(why) => Err(RegistryError::RequestedVersionNotExact {
            server: server.to_owned(),
            version: version.to_owned(),
            why,
        }),
    }
}

/// The plan for `doc`, or why there is none.
pub fn plan(doc: &ServerJson, opts: &PlanOptions) -> Result<InstallPlan, RegistryError> {
    let server = doc.name.as_str();
    check_name(server)?;
    if doc.packages.is_empty() {
        return Err(if doc.remotes.is_empty() {
            RegistryError::NoPackage {
                server: server.to_owned(),
            }
        } else {
            RegistryError::RemoteOnly {
                server: server.to_owned(),
                remotes: remote_summaries(doc),
            }
        });
    }
    let index = match opts.package {
        Some(i) if i < doc.packages.len() => i,
        Some(index) => {
            return Err(RegistryError::NoSuchPackage {
                server: server.to_owned(),
                index,
                count: doc.packages.len(),
            });
        }
        None => choose(doc)?,
    };
    let pkg = &doc.packages[index];
    let Some(runner) = pkg.registry_type.runner() else {
        return Err(unsupported(doc, index));
    };
    let mut warnings = Vec::new();
    match &pkg.transport {
        None => warnings.push(Warning {
            kind: WarningKind::NoTransport,
            message: format!(
                "the {} package names no transport (an older schema); Warden assumes stdio",
                pkg.registry_type
            ),
        }),
        Some(t) if t.kind == "stdio" => {}
        Some(t) => {
            return Err(RegistryError::NotStdio {
                package: package_id(server, pkg),
                transport: t.kind.clone(),
            });
        }
    }

    let template_version = opts
        .version
        .clone()
        .or_else(|| doc.version.clone().filter(|v| template_name(v).is_none()));
    let mut fill = |text: &str| -> Result<String, RegistryError> {
        match (template_name(text), &template_version) {
            (None, _) => Ok(text.to_owned()),
            (Some("VERSION"), Some(v)) => {
                if !warnings
                    .iter()
                    .any(|w| w.kind == WarningKind::TemplateFilled)
                {
                    warnings.push(Warning {
                        kind: WarningKind::TemplateFilled,
                        message: format!(
                            "the document is a template (a repository's CI copy, `{text}`); `${{VERSION}}` is filled with {v}"
                        ),
                    });
                }
                Ok(fill_version(text, v))
            }
            (Some(name), _) => Err(RegistryError::Template {
                server: server.to_owned(),
                text: text.to_owned(),
                name: name.to_owned(),
            }),
        }
    };
    let identifier = fill(&pkg.identifier)?;
    let version = pkg.version.as_deref().map(&mut fill).transpose()?;
    let server_version = doc.version.as_deref().map(&mut fill).transpose()?;
    let package = pin(server, index, pkg, identifier, version, &mut warnings)?;
    check_hint(server, pkg, runner, &mut warnings)?;

    let mut r = Resolver::new(server, &opts.inputs, template_version.as_deref());
    let mut runtime = Vec::new();
    for arg in &pkg.runtime_arguments {
        runtime.extend(r.argument(arg)?);
    }
    let (mut runtime, moved) = normalize(runner, runtime, &mut warnings);
    let mut env = Vec::new();
    for ev in &pkg.environment_variables {
        env.push(r.env(ev)?);
    }
    let mut passed_by_runtime = BTreeSet::new();
    if pkg.registry_type == RegistryType::Oci {
        secrets_to_env(
            &mut runtime,
            &mut env,
            &mut passed_by_runtime,
            &mut warnings,
        );
    }
    let mut after = moved;
    for arg in &pkg.package_arguments {
        after.extend(r.argument(arg)?);
    }
    warnings.append(&mut r.warnings);
    if !r.missing.is_empty() {
        return Err(RegistryError::MissingInputs {
            server: server.to_owned(),
            inputs: r.missing,
        });
    }
    for (name, value) in r.unused() {
        warnings.push(Warning {
            kind: WarningKind::UndeclaredInput,
            message: format!(
                "{name} is not a variable or input of this server; it is set as an environment variable anyway"
            ),
        });
        env.push(PlannedEnv {
            name,
            required: false,
            secret: false,
            default: None,
            description: None,
            value: Some(value),
            source: ValueSource::User,
            declared: false,
        });
    }
    let secrets: Vec<&str> = runtime
        .iter()
        .chain(&after)
        .filter(|a| a.secret)
        .flat_map(|a| a.tokens.iter().map(String::as_str))
        .collect();
    if !secrets.is_empty() {
        warnings.push(Warning {
            kind: WarningKind::SecretInArguments,
            message: format!(
                "a secret is part of the command line (`{}`), so the IDE's config file will hold it in plain text",
                secrets.join(" ")
            ),
        });
    }

    let mut args: Vec<String> = match pkg.registry_type {
        RegistryType::Npm => vec!["-y".into()],
        RegistryType::Oci => vec!["run".into(), "-i".into(), "--rm".into()],
        _ => Vec::new(),
    };
    args.extend(runtime.into_iter().flat_map(|a| a.tokens));
    if pkg.registry_type == RegistryType::Oci {
        for e in env.iter().filter(|e| !passed_by_runtime.contains(&e.name)) {
            args.extend(["-e".to_owned(), e.name.clone()]);
        }
    }
    args.push(package.reference.clone());
    if pkg.registry_type == RegistryType::Nuget {
        args.push("--yes".into());
        if !after.is_empty() {
            args.push("--".into());
        }
    }
    args.extend(after.into_iter().flat_map(|a| a.tokens));
    let risks = plan_risks(runner, &args, &env);
    Ok(InstallPlan {
        server: server.to_owned(),
        version: server_version,
        package,
        command: runner.to_owned(),
        args,
        env,
        optional_inputs: r.optional,
        warnings,
        risks,
    })
}

/// The plan's risks: the command's, then each variable set that steers loading or paths —
/// high risk when its value is the document's own (fixed or default), not yours.
fn plan_risks(runner: &str, args: &[String], env: &[PlannedEnv]) -> Vec<Risk> {
    let mut risks = clients::risks(runner, args);
    for e in env.iter().filter(|e| e.value.is_some()) {
        let risk = match e.source {
            ValueSource::Document | ValueSource::Default => clients::document_env_risk(&e.name),
            ValueSource::User | ValueSource::Unset => {
                clients::env_risks([&e.name]).into_iter().next()
            }
        };
        risks.extend(risk);
    }
    risks
}

/// The schema's name pattern `NAMESPACE/NAME`: the entry name comes from it.
fn check_name(name: &str) -> Result<(), RegistryError> {
    let part = |s: &str, extra: &[u8]| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || extra.contains(&b))
    };
    match name.split_once('/') {
        Some((ns, n)) if part(ns, b"") && part(n, b"_") && n != "." && n != ".." => Ok(()),
        _ => Err(RegistryError::Malformed {
            what: "the server document".into(),
            detail: format!(
                "its name `{name}` is not NAMESPACE/NAME (like io.github.user/weather)"
            ),
        }),
    }
}

fn package_id(server: &str, pkg: &Package) -> Box<PackageId> {
    Box::new(PackageId {
        server: server.to_owned(),
        registry_type: pkg.registry_type.to_string(),
        identifier: pkg.identifier.clone(),
    })
}

fn is_stdio(p: &Package) -> bool {
    p.transport.as_ref().is_none_or(|t| t.kind == "stdio")
}

/// The first stdio package of type npm, else pypi, else oci, else nuget.
fn choose(doc: &ServerJson) -> Result<usize, RegistryError> {
    for ty in [
        RegistryType::Npm,
        RegistryType::Pypi,
        RegistryType::Oci,
        RegistryType::Nuget,
    ] {
        if let Some(i) = doc
            .packages
            .iter()
            .position(|p| p.registry_type == ty && is_stdio(p))
        {
            return Ok(i);
        }
    }
    match doc
        .packages
        .iter()
        .position(|p| p.registry_type.runner().is_some())
    {
        // Runnable, but none over stdio: say so for the first of them.
        Some(i) => {
            let p = &doc.packages[i];
            Err(RegistryError::NotStdio {
                package: package_id(&doc.name, p),
                transport: p
                    .transport
                    .as_ref()
                    .map(|t| t.kind.clone())
                    .unwrap_or_default(),
            })
        }
        None => Err(unsupported(doc, 0)),
    }
}

/// The variable a remote's header is sent from: `MCP_HEADER_` and the header's name in
/// capitals, `-` as `_` (`Authorization` → `MCP_HEADER_AUTHORIZATION`). The prefix keeps a
/// document's header from naming a variable that steers a program (`Browser` would otherwise be
/// `BROWSER`, which the sign-in runs; `Https-Proxy`, `LD_PRELOAD`…).
pub fn header_env_name(header: &str) -> String {
    "MCP_HEADER_".to_owned()
        + &header
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect::<String>()
}

/// The plan for a document that lists only `remotes`: its first Streamable HTTP remote, else
/// its first HTTP+SSE one (warden-remote speaks both, Streamable HTTP preferred), its URL's
/// `{variables}` filled and its headers sent from variables (values asked for as a package's
/// environment is), or why there is none (no transport Warden speaks; a URL it would not reach).
pub fn plan_remote(doc: &ServerJson, opts: &PlanOptions) -> Result<RemotePlan, RegistryError> {
    let server = doc.name.as_str();
    check_name(server)?;
    let Some(remote) = doc
        .remotes
        .iter()
        .find(|r| matches!(r.kind.as_str(), "streamable-http" | "http"))
        .or_else(|| doc.remotes.iter().find(|r| r.kind == "sse"))
    else {
        return Err(if doc.remotes.is_empty() {
            RegistryError::NoPackage {
                server: server.to_owned(),
            }
        } else {
            RegistryError::RemoteTransport {
                server: server.to_owned(),
                kinds: doc.remotes.iter().map(|r| r.kind.clone()).collect(),
            }
        });
    };
    let version = opts
        .version
        .clone()
        .or_else(|| doc.version.clone().filter(|v| template_name(v).is_none()));
    let mut r = Resolver::new(server, &opts.inputs, version.as_deref());
    let url = r.url(&remote.url, &remote.variables)?;
    let mut headers = Vec::new();
    let mut env = Vec::new();
    for h in &remote.headers {
        let var = header_env_name(h.name.trim());
        let planned = r.env(&KeyValueInput {
            name: var.clone(),
            variables: h.variables.clone(),
            input: h.input.clone(),
        })?;
        if planned.value.is_some() {
            headers.push(format!("{}={var}", h.name.trim()));
        }
        env.push(planned);
    }
    let mut warnings = std::mem::take(&mut r.warnings);
    if !r.missing.is_empty() {
        return Err(RegistryError::MissingInputs {
            server: server.to_owned(),
            inputs: r.missing,
        });
    }
    for (name, value) in r.unused() {
        warnings.push(Warning {
            kind: WarningKind::UndeclaredInput,
            message: format!(
                "{name} is not a variable or header of this server; it is set as an environment variable of the bridge anyway"
            ),
        });
        env.push(PlannedEnv {
            name,
            required: false,
            secret: false,
            default: None,
            description: None,
            value: Some(value),
            source: ValueSource::User,
            declared: false,
        });
    }
    let url = url.unwrap_or_default();
    let unusable = |why: String| RegistryError::RemoteUnusable {
        server: server.to_owned(),
        why,
    };
    clients::check_remote_url(&url).map_err(unusable)?;
    clients::check_remote_headers(&headers).map_err(unusable)?;
    Ok(RemotePlan {
        server: server.to_owned(),
        version,
        transport: remote.kind.clone(),
        url,
        headers,
        env,
        warnings,
    })
}

fn remote_summaries(doc: &ServerJson) -> Vec<RemoteSummary> {
    doc.remotes
        .iter()
        .map(|r| RemoteSummary {
            kind: r.kind.clone(),
            url: r.url.clone(),
            headers: r
                .headers
                .iter()
                .map(|h| {
                    let secret = if h.input.is_secret { " (secret)" } else { "" };
                    format!("{}{secret}", h.name)
                })
                .collect(),
        })
        .collect()
}

fn unsupported(doc: &ServerJson, index: usize) -> RegistryError {
    let pkg = &doc.packages[index];
    let why = match pkg.registry_type {
        RegistryType::Mcpb => "an .mcpb bundle is a desktop extension that Claude Desktop downloads, checks and unpacks itself; no runner starts it from a command line".to_owned(),
        _ => format!("Warden has no runner that fetches and starts a `{}` package", pkg.registry_type),
    };
    let mut alternatives = Vec::new();
    for (i, p) in doc.packages.iter().enumerate() {
        if p.registry_type.runner().is_some() && is_stdio(p) {
            alternatives.push(format!(
                "choose package {i} ({} {})",
                p.registry_type, p.identifier
            ));
        }
    }
    if pkg.registry_type == RegistryType::Mcpb {
        alternatives.push(format!("open {} in Claude Desktop", pkg.identifier));
    }
    for r in &doc.remotes {
        alternatives.push(format!(
            "add its remote ({} at {}) to your client directly",
            r.kind, r.url
        ));
    }
    RegistryError::UnsupportedPackage {
        package: package_id(&doc.name, pkg),
        why,
        alternatives: alternatives.join(", or "),
    }
}

/// The exact reference the runner gets, or why there is none.
fn pin(
    server: &str,
    index: usize,
    pkg: &Package,
    identifier: String,
    version: Option<String>,
    warnings: &mut Vec<Warning>,
) -> Result<PlannedPackage, RegistryError> {
    let ty = &pkg.registry_type;
    let id = || {
        Box::new(PackageId {
            server: server.to_owned(),
            registry_type: ty.to_string(),
            identifier: identifier.clone(),
        })
    };
    let not_exact_err = |version: &str, why| RegistryError::VersionNotExact {
        package: id(),
        version: version.to_owned(),
        why,
    };
    let unpinned = || RegistryError::Unpinned { package: id() };
    let bad_id = identifier.is_empty()
        || identifier.starts_with('-')
        || identifier.contains(char::is_whitespace)
        || (*ty == RegistryType::Npm && identifier.chars().skip(1).any(|c| c == '@'));
    if bad_id {
        return Err(RegistryError::Malformed {
            what: format!("{server}'s server.json"),
            detail: format!(
                "the {ty} package's identifier `{identifier}` is not a package name (empty, with spaces, starting with `-`, or with a version of its own)"
            ),
        });
    }
    let (version, reference) = if *ty == RegistryType::Oci {
        let image = split_image(&identifier);
        match (image.digest, image.tag, &version) {
            (Some(digest), _, _) => (digest.to_owned(), identifier.clone()),
            (None, Some(tag), v) => {
                if let Some(why) = not_exact(ty, tag) {
                    return Err(not_exact_err(tag, why));
                }
                if let Some(v) = v.as_deref().filter(|v| *v != tag) {
                    warnings.push(Warning {
                        kind: WarningKind::TagMismatch,
                        message: format!(
                            "the image reference has tag {tag} but the package says version {v}; Warden runs the tag"
                        ),
                    });
                }
                (tag.to_owned(), identifier.clone())
            }
            (None, None, Some(v)) => {
                if let Some(why) = not_exact(ty, v) {
                    return Err(not_exact_err(v, why));
                }
                (v.clone(), format!("{identifier}:{v}"))
            }
            (None, None, None) => return Err(unpinned()),
        }
    } else {
        let v = version.ok_or_else(unpinned)?;
        if let Some(why) = not_exact(ty, &v) {
            return Err(not_exact_err(&v, why));
        }
        let reference = match ty {
            RegistryType::Pypi => format!("{identifier}=={v}"),
            _ => format!("{identifier}@{v}"),
        };
        (v, reference)
    };
    Ok(PlannedPackage {
        index,
        registry_type: ty.clone(),
        identifier,
        version,
        reference,
    })
}

/// A `runtimeHint` other than Warden's runner: fine without runtime arguments (a warning),
/// refused with them (they are another program's options).
fn check_hint(
    server: &str,
    pkg: &Package,
    runner: &'static str,
    warnings: &mut Vec<Warning>,
) -> Result<(), RegistryError> {
    let Some(hint) = pkg.runtime_hint.as_deref().filter(|h| *h != runner) else {
        return Ok(());
    };
    if pkg.runtime_arguments.is_empty() {
        warnings.push(Warning {
            kind: WarningKind::RuntimeHint,
            message: format!(
                "the package's runtimeHint is `{hint}`, which is not the runner Warden uses; Warden runs {} packages with `{runner}`",
                pkg.registry_type
            ),
        });
        return Ok(());
    }
    let arguments = pkg
        .runtime_arguments
        .iter()
        .map(|a| {
            a.name
                .clone()
                .or_else(|| a.input.value.clone())
                .or_else(|| a.value_hint.clone())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(" ");
    Err(RegistryError::ForeignRuntimeArguments {
        package: package_id(server, pkg),
        hint: hint.to_owned(),
        runner,
        arguments,
    })
}

/// Drops runtime arguments that repeat the runner's own (`run -i --rm` of older OCI
/// entries, `-y`), and moves the first positional one and all after it behind the package:
/// a runner takes its first positional argument as the package (or image) to run, so a
/// positional runtime argument is the server's own subcommand put in the wrong list.
fn normalize(
    runner: &str,
    runtime: Vec<Resolved>,
    warnings: &mut Vec<Warning>,
) -> (Vec<Resolved>, Vec<Resolved>) {
    let repeats: &[&str] = match runner {
        "npx" | "dnx" => &["-y", "--yes"],
        "docker" => &["run", "-i", "--interactive", "--rm"],
        _ => &[],
    };
    let tty: &[&str] = if runner == "docker" {
        &["-t", "--tty", "-it", "-ti"]
    } else {
        &[]
    };
    let mut dropped = Vec::new();
    let mut tty_dropped = Vec::new();
    let mut kept = Vec::new();
    for a in runtime {
        let words: Vec<&str> = a.tokens.iter().flat_map(|t| t.split_whitespace()).collect();
        if !words.is_empty() && words.iter().all(|w| repeats.contains(w) || tty.contains(w)) {
            let (t, r): (Vec<&str>, Vec<&str>) = words.iter().partition(|w| tty.contains(w));
            tty_dropped.extend(t.into_iter().map(str::to_owned));
            dropped.extend(r.into_iter().map(str::to_owned));
        } else {
            kept.push(a);
        }
    }
    if !dropped.is_empty() {
        warnings.push(Warning {
            kind: WarningKind::RunnerFlagsDropped,
            message: format!(
                "dropped `{}` from the runtime arguments: Warden's `{runner}` command already has {}",
                dropped.join(" "),
                if dropped.len() == 1 { "it" } else { "them" }
            ),
        });
    }
    if !tty_dropped.is_empty() {
        warnings.push(Warning {
            kind: WarningKind::TtyDropped,
            message: format!(
                "dropped `{}` from the runtime arguments: a terminal (TTY) would mangle the JSON-RPC messages on stdio",
                tty_dropped.join(" ")
            ),
        });
    }
    let split = kept.iter().position(|a| a.positional).unwrap_or(kept.len());
    let moved = kept.split_off(split);
    if let Some(first) = moved.first() {
        let words: Vec<&str> = moved
            .iter()
            .flat_map(|a| a.tokens.iter().map(String::as_str))
            .collect();
        warnings.push(Warning {
            kind: WarningKind::RuntimeArgumentsMoved,
            message: format!(
                "moved `{}` from the runtime arguments to after the package: `{runner}` would have taken `{}` as the package to run, so they are the server's own arguments",
                words.join(" "),
                first.tokens.first().map_or("", String::as_str)
            ),
        });
    }
    (kept, moved)
}

/// docker's `-e NAME=VALUE` holding a secret becomes `-e NAME` and a secret environment
/// variable, so the value can live in the keychain instead of the IDE's file.
fn secrets_to_env(
    runtime: &mut [Resolved],
    env: &mut Vec<PlannedEnv>,
    passed: &mut BTreeSet<String>,
    warnings: &mut Vec<Warning>,
) {
    for a in runtime.iter_mut().filter(|a| a.secret) {
        let pair = match a.tokens.as_slice() {
            [flag, pair] if flag == "-e" || flag == "--env" => pair.clone(),
            [one] => match one
                .strip_prefix("--env=")
                .or_else(|| one.strip_prefix("-e="))
            {
                Some(pair) => pair.to_owned(),
                None => continue,
            },
            _ => continue,
        };
        let Some((name, value)) = pair.split_once('=') else {
            continue;
        };
        if name.is_empty() || env.iter().any(|e| e.name == name) {
            continue;
        }
        warnings.push(Warning {
            kind: WarningKind::SecretMovedToEnv,
            message: format!(
                "`-e {name}=…` carries a secret; it becomes `-e {name}` and the environment variable {name}, so the value can stay out of the IDE's file"
            ),
        });
        env.push(PlannedEnv {
            name: name.to_owned(),
            required: a.required,
            secret: true,
            default: None,
            description: None,
            value: Some(value.to_owned()),
            source: a.source,
            declared: true,
        });
        passed.insert(name.to_owned());
        a.tokens = vec!["-e".to_owned(), name.to_owned()];
        a.secret = false;
    }
}
