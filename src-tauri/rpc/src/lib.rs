//! Requests as types, each declared once with its answer. A request is a type of its own
//! (`op::Probe`, with its fields) wrapped by a variant of its table's request enum
//! (`Request::Probe(op::Probe)`). [`pairs!`] reads a table (request, the value its handler
//! returns, how that value becomes the answer) and implements [`Op`] for each request type:
//! `type Answer` is what a caller gets back (`Connection::ask(op::Probe { .. })` is a
//! `ProbeReport`), and a handler answers through [`Op::answer`], so a handler that returns
//! another request's value fails to compile. The same table gives the request enum's
//! `answered_by` (the check the dispatchers run in debug builds) and `ANSWERS`, from which
//! [`answers_map`] writes the TypeScript request→answer map the web UI's `ask` is typed by.
//! Used for the supervisor's `Request`, the desktop app's `AppRequest` and the window's
//! `RegistryRequest`.

pub mod bindings;

/// One request of a [`pairs!`] table, as a type.
pub trait Op: Sized {
    /// What its handler returns when it succeeds, and what a caller gets back.
    type Answer;
    /// The request enum of its table.
    type Request;
    /// The answer enum of its table.
    type Response;
    /// The request variant's name (`KnownServers`).
    const NAME: &'static str;
    /// The request as its table's variant.
    fn request(self) -> Self::Request;
    /// The answer variant the table declares for it.
    fn wrap(answer: Self::Answer) -> Self::Response;
    /// The value inside that variant, or the answer as it came (an error, or another
    /// request's answer): what a caller of the API gets back.
    fn unwrap(response: Self::Response) -> Result<Self::Answer, Self::Response>;
    /// The answer to this request: its declared variant, or the error (`Response::Error`).
    fn answer<E>(result: Result<Self::Answer, E>) -> Self::Response
    where
        Self::Response: From<E>,
    {
        result.map_or_else(From::from, Self::wrap)
    }
}

/// Implements [`Op`] for each request type `$module::$op` of `$req`, answered by the variant
/// of `$resp` the table names. Each row's `|value| Variant` is read both ways: as the
/// expression that wraps a handler's value, and as the pattern that takes it out again. Every
/// variant of `$req` must be in the table (the match of `answered_by` is exhaustive), and
/// `$resp` has an `Error` variant (every request may fail). The request types, and their
/// `From` into `$req`, are the caller's.
#[macro_export]
macro_rules! pairs {
    (
        $(#[$doc:meta])*
        $module:ident: $req:ident => $resp:ident {
            $( $op:ident($answer:ty) => |$bind:tt| $answers:ident::$kind:ident $fields:tt; )*
        }
    ) => {
        $(
            impl $crate::Op for $module::$op {
                type Answer = $answer;
                type Request = $req;
                type Response = $resp;
                const NAME: &'static str = stringify!($op);
                fn request(self) -> $req {
                    <$req>::from(self)
                }
                fn wrap($bind: $answer) -> $resp {
                    $answers::$kind $fields
                }
                fn unwrap(response: $resp) -> Result<$answer, $resp> {
                    match response {
                        $answers::$kind $fields => Ok($bind),
                        other => Err(other),
                    }
                }
            }
        )*

        impl $req {
            /// Each variant's name and its answer variant's, as `pairs!` declares them (for the
            /// bindings).
            pub const ANSWERS: &[(&str, &str)] = &[$( (stringify!($op), stringify!($kind)) ),*];

            /// Whether `response` is the variant `pairs!` declares for this request, or an error.
            pub fn answered_by(&self, response: &$resp) -> bool {
                matches!(response, $resp::Error { .. })
                    || match self {
                        $( $req::$op { .. } => matches!(response, $resp::$kind { .. }), )*
                    }
            }
        }
    };
}

/// A variant's name as serde's `rename_all = "snake_case"` writes it (`KnownServers` →
/// `known_servers`).
pub fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The TypeScript map `name` from each request's `op` to its answer: the declared variant of
/// `response` (tagged by `kind`) or its error.
pub fn answers_map(name: &str, response: &str, table: &[(&str, &str)]) -> String {
    let mut out = format!(
        "type {name} = {{\n  // Each request's answer, declared once in Rust (`pairs!`); the UI's `ask` is typed by it.\n"
    );
    for (op, kind) in table {
        out.push_str(&format!(
            "  \"{}\": Extract<{response}, {{ \"kind\": \"{}\" | \"error\" }}>,\n",
            snake(op),
            snake(kind)
        ));
    }
    out.push_str("};");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_written_as_serde_writes_them() {
        assert_eq!(snake("KnownServers"), "known_servers");
        assert_eq!(snake("Status"), "status");
        assert_eq!(snake("ProbeIde"), "probe_ide");
    }
}
