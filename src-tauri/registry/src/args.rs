//! Arguments and environment variables of a package, resolved to text: fixed values with
//! their `{variables}` filled, the user's values, defaults. A value nobody gave is collected
//! as an [`InputRequest`] (required: the plan fails naming it; optional: the argument is left
//! out and the plan says so), never dropped without a word.

use std::collections::{BTreeMap, BTreeSet};

use super::document::{Argument, ArgumentKind, Input, KeyValueInput};
use super::error::{InputKind, InputRequest, RegistryError};
use super::plan::{PlannedEnv, ValueSource, Warning, WarningKind};

/// One argument as tokens of the command line.
#[derive(Debug, Clone)]
pub(super) struct Resolved {
    pub tokens: Vec<String>,
    pub positional: bool,
    /// A secret went into it.
    pub secret: bool,
    pub required: bool,
    pub source: ValueSource,
}

/// A value with its `{variables}` filled, or the variables nobody gave a value.
enum Fill {
    Done { text: String, secret: bool },
    Unset(Vec<(String, Input)>),
}

pub(super) struct Resolver<'a> {
    server: &'a str,
    inputs: &'a BTreeMap<String, String>,
    /// What `${VERSION}` stands for, if known.
    version: Option<&'a str>,
    used: BTreeSet<String>,
    pub missing: Vec<InputRequest>,
    pub optional: Vec<InputRequest>,
    pub warnings: Vec<Warning>,
}

fn request(key: &str, kind: InputKind, input: &Input) -> InputRequest {
    InputRequest {
        key: key.to_owned(),
        kind,
        secret: input.is_secret,
        description: input.description.clone(),
        choices: input.choices.clone(),
        placeholder: input.placeholder.clone(),
    }
}

fn is_identifier(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
}

impl<'a> Resolver<'a> {
    pub fn new(
        server: &'a str,
        inputs: &'a BTreeMap<String, String>,
        version: Option<&'a str>,
    ) -> Self {
        Resolver {
            server,
            inputs,
            version,
            used: BTreeSet::new(),
            missing: Vec::new(),
            optional: Vec::new(),
            warnings: Vec::new(),
        }
    }

    fn warn(&mut self, kind: WarningKind, message: String) {
        self.warnings.push(Warning { kind, message });
    }

    fn need(&mut self, req: InputRequest) {
        if !self.missing.iter().any(|m| m.key == req.key) {
            self.missing.push(req);
        }
    }

    fn left_out(&mut self, req: InputRequest, what: &str) {
        self.warn(
            WarningKind::OptionalLeftOut,
            format!(
                "left out the optional {what}: it needs `{}`, which nobody gave; pass `{}` to include it",
                req.key,
                req.flag()
            ),
        );
        if !self.optional.iter().any(|m| m.key == req.key) {
            self.optional.push(req);
        }
    }

    /// The user's value for `key`, checked against `choices`.
    fn user(&mut self, key: &str, choices: &[String]) -> Result<Option<String>, RegistryError> {
        let Some(value) = self.inputs.get(key) else {
            return Ok(None);
        };
        self.used.insert(key.to_owned());
        if !choices.is_empty() && !choices.contains(value) {
            return Err(RegistryError::NotAChoice {
                key: key.to_owned(),
                value: value.clone(),
                choices: choices.to_vec(),
            });
        }
        Ok(Some(value.clone()))
    }

    /// `text` with `{name}` filled from `vars` (the user's value, the variable's value, its
    /// default) or, for a name `vars` lacks, from the user's values; other braces stay as
    /// they are (the schema says so), with a warning. `${...}` is not a variable.
    fn fill(&mut self, text: &str, vars: &BTreeMap<String, Input>) -> Result<Fill, RegistryError> {
        let mut out = String::new();
        let mut secret = false;
        let mut unset = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            let Some(len) = rest[open + 1..].find('}') else {
                break;
            };
            let name = &rest[open + 1..open + 1 + len];
            out.push_str(&rest[..open]);
            let whole = &rest[open..open + len + 2];
            rest = &rest[open + len + 2..];
            if out.ends_with('$') {
                match (name, self.version) {
                    ("VERSION", Some(version)) => {
                        out.pop();
                        out.push_str(version);
                    }
                    ("VERSION", None) => {
                        return Err(RegistryError::Template {
                            server: self.server.to_owned(),
                            text: text.to_owned(),
                            name: name.to_owned(),
                        });
                    }
                    _ => {
                        self.warn(
                            WarningKind::Placeholder,
                            format!("`{text}` holds `${whole}`, which Warden does not fill; it stays as written"),
                        );
                        out.push_str(whole);
                    }
                }
                continue;
            }
            if !is_identifier(name) {
                out.push_str(whole);
                continue;
            }
            if let Some(var) = vars.get(name) {
                let value = match self.user(name, &var.choices)? {
                    Some(v) => Some(v),
                    None => var.value.clone().or_else(|| var.default.clone()),
                };
                match value {
                    Some(v) => {
                        secret |= var.is_secret;
                        out.push_str(&v);
                    }
                    None => unset.push((name.to_owned(), var.clone())),
                }
            } else if let Some(v) = self.user(name, &[])? {
                out.push_str(&v);
            } else {
                self.warn(
                    WarningKind::Placeholder,
                    format!(
                        "`{text}` holds `{whole}`, which the document declares no variable for, so it stays as written; pass `--env {name}=VALUE` if it is meant to be filled"
                    ),
                );
                out.push_str(whole);
            }
        }
        out.push_str(rest);
        Ok(if unset.is_empty() {
            Fill::Done { text: out, secret }
        } else {
            Fill::Unset(unset)
        })
    }

    /// Files the variables nobody gave: needed if `required` or the variable is, else
    /// optional (and then the whole argument or variable is left out). A variable without a
    /// description gets its owner's.
    fn unset(&mut self, vars: Vec<(String, Input)>, owner: &Input, what: &str) {
        let needed = owner.is_required || vars.iter().any(|(_, v)| v.is_required);
        for (name, var) in vars {
            let mut req = request(&name, InputKind::Variable, &var);
            if req.description.is_none() {
                req.description.clone_from(&owner.description);
            }
            if needed {
                self.need(req);
            } else {
                self.left_out(req, what);
            }
        }
    }

    /// One argument, or `None` when it is left out (or needs an input, then filed).
    pub fn argument(&mut self, arg: &Argument) -> Result<Option<Resolved>, RegistryError> {
        let kind = match &arg.kind {
            Some(k) => k.clone(),
            None => {
                let kind = if arg.name.is_some() {
                    ArgumentKind::Named
                } else {
                    ArgumentKind::Positional
                };
                self.warn(
                    WarningKind::ArgumentTypeInferred,
                    format!(
                        "an argument has no `type`; read as {}",
                        if kind == ArgumentKind::Named {
                            "named"
                        } else {
                            "positional"
                        }
                    ),
                );
                kind
            }
        };
        let malformed = |detail: String| RegistryError::Malformed {
            what: format!("{}'s server.json", self.server),
            detail,
        };
        let (key, name) = match &kind {
            ArgumentKind::Other(t) => {
                return Err(malformed(format!(
                    "an argument has type `{t}`; the schema knows `positional` and `named`"
                )));
            }
            ArgumentKind::Named => {
                let name = arg
                    .name
                    .as_deref()
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .ok_or_else(|| malformed("a named argument has no `name`".into()))?;
                (Some(name.trim_start_matches('-').to_owned()), Some(name))
            }
            ArgumentKind::Positional => (arg.value_hint.clone().filter(|h| !h.is_empty()), None),
        };
        let what = match (name, &arg.input.value) {
            (Some(n), Some(v)) => format!("argument `{n} {v}`"),
            (Some(n), None) => format!("argument `{n}`"),
            (None, Some(v)) => format!("argument `{v}`"),
            (None, None) => format!("argument `{}`", key.as_deref().unwrap_or("?")),
        };
        let (text, secret, source) = if let Some(value) = &arg.input.value {
            match self.fill(value, &arg.variables)? {
                Fill::Done { text, secret } => (text, secret, ValueSource::Document),
                Fill::Unset(vars) => {
                    self.unset(vars, &arg.input, &what);
                    return Ok(None);
                }
            }
        } else if let Some(v) = match &key {
            Some(k) => self.user(k, &arg.input.choices)?,
            None => None,
        } {
            (v, false, ValueSource::User)
        } else if let Some(d) = &arg.input.default {
            (d.clone(), false, ValueSource::Default)
        } else {
            return self.valueless(arg, key, name, &what);
        };
        let secret = secret || arg.input.is_secret;
        let tokens = match name {
            Some(n) if n.ends_with('=') => vec![format!("{n}{text}")],
            Some(n) => vec![n.to_owned(), text],
            None => vec![text],
        };
        Ok(Some(Resolved {
            tokens,
            positional: name.is_none(),
            secret,
            required: arg.input.is_required,
            source,
        }))
    }

    /// An argument without any value: a bare flag, an input to ask for, or left out.
    fn valueless(
        &mut self,
        arg: &Argument,
        key: Option<String>,
        name: Option<&str>,
        what: &str,
    ) -> Result<Option<Resolved>, RegistryError> {
        let Some(name) = name else {
            // A positional argument cannot be left out: the ones after it would move.
            let key = key.ok_or_else(|| RegistryError::Malformed {
                what: format!("{}'s server.json", self.server),
                detail: "a positional argument has neither `value` nor `valueHint`".into(),
            })?;
            self.need(request(&key, InputKind::Positional, &arg.input));
            return Ok(None);
        };
        let key = key.unwrap_or_default();
        let input = &arg.input;
        if input.is_required {
            self.need(request(&key, InputKind::Named, input));
            return Ok(None);
        }
        let bare_flag = !input.is_secret
            && input.choices.is_empty()
            && input.description.is_none()
            && input.placeholder.is_none()
            && arg.variables.is_empty()
            && matches!(input.format.as_deref(), None | Some("boolean"));
        if bare_flag {
            return Ok(Some(Resolved {
                tokens: vec![name.to_owned()],
                positional: false,
                secret: false,
                required: false,
                source: ValueSource::Document,
            }));
        }
        self.left_out(request(&key, InputKind::Named, input), what);
        Ok(None)
    }

    /// One environment variable of the package.
    pub fn env(&mut self, ev: &KeyValueInput) -> Result<PlannedEnv, RegistryError> {
        let name = ev.name.trim();
        if name.is_empty() || name.contains(['=', '\0']) {
            return Err(RegistryError::Malformed {
                what: format!("{}'s server.json", self.server),
                detail: format!("`{}` is not an environment variable name", ev.name),
            });
        }
        let input = &ev.input;
        let mut planned = PlannedEnv {
            name: name.to_owned(),
            required: input.is_required,
            secret: input.is_secret,
            default: input.default.clone(),
            description: input.description.clone(),
            value: None,
            source: ValueSource::Unset,
            declared: true,
        };
        if let Some(v) = self.user(name, &input.choices)? {
            if input.value.is_some() {
                self.warn(
                    WarningKind::InputOverridesValue,
                    format!(
                        "{name}: your value replaces the one the document fixes (`{}`)",
                        input.value.as_deref().unwrap_or_default()
                    ),
                );
            }
            planned.value = Some(v);
            planned.source = ValueSource::User;
        } else if let Some(value) = &input.value {
            match self.fill(value, &ev.variables)? {
                Fill::Done { text, secret } => {
                    planned.secret |= secret;
                    planned.value = Some(text);
                    planned.source = ValueSource::Document;
                }
                Fill::Unset(vars) => {
                    let what = format!("environment variable {name}");
                    self.unset(vars, input, &what);
                }
            }
        } else if let Some(d) = &input.default {
            planned.value = Some(d.clone());
            planned.source = ValueSource::Default;
        } else if input.is_required {
            self.need(request(name, InputKind::Env, input));
        }
        Ok(planned)
    }

    /// A remote's URL with its `{variables}` filled, or `None` when one has no value (then
    /// filed as missing: a URL cannot keep a placeholder).
    pub fn url(
        &mut self,
        url: &str,
        vars: &BTreeMap<String, Input>,
    ) -> Result<Option<String>, RegistryError> {
        match self.fill(url, vars)? {
            Fill::Done { text, .. } => Ok(Some(text)),
            Fill::Unset(unset) => {
                let owner = Input {
                    is_required: true,
                    ..Input::default()
                };
                self.unset(unset, &owner, "URL");
                Ok(None)
            }
        }
    }

    /// The user's values that nothing used, sorted by key.
    pub fn unused(&self) -> Vec<(String, String)> {
        self.inputs
            .iter()
            .filter(|(k, _)| !self.used.contains(*k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}
