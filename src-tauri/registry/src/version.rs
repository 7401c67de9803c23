//! Is a version exact? And `${VERSION}` templates, and OCI image references.

use super::document::RegistryType;

/// Why `version` is not one exact version of a `registry_type` package, or `None` if it is.
pub(super) fn not_exact(registry_type: &RegistryType, version: &str) -> Option<&'static str> {
    let v = version.trim();
    if v.is_empty() {
        return Some("is empty");
    }
    if v.eq_ignore_ascii_case("latest") {
        return Some("is a moving tag that names whatever is newest, not a version");
    }
    if v.contains(['$', '{', '}']) {
        return Some("is an unfilled template");
    }
    if v.contains(|c: char| c.is_whitespace() || "^~<>=!*|,[]()".contains(c)) {
        return Some("is a range of versions, not one version");
    }
    let core = v.split(['-', '+']).next().unwrap_or(v);
    if core.split('.').any(|p| matches!(p, "x" | "X")) {
        return Some("is a range of versions, not one version");
    }
    let numeric = v.trim_start_matches(['v', 'V']);
    match registry_type {
        RegistryType::Npm if !is_semver(numeric) => Some(
            "is not a full version MAJOR.MINOR.PATCH (npm resolves a tag or a partial version like `1.2` to whatever is newest)",
        ),
        RegistryType::Pypi | RegistryType::Nuget
            if !numeric.starts_with(|c: char| c.is_ascii_digit()) =>
        {
            Some("is not a version number")
        }
        RegistryType::Oci if !is_tag(v) => Some("is not a valid image tag"),
        _ => None,
    }
}

/// `1.2.3`, `1.2.3-beta.1`, `1.2.3+build`.
fn is_semver(v: &str) -> bool {
    let (core, _) = v.split_once(['-', '+']).unwrap_or((v, ""));
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-+.".contains(&b))
}

/// Docker's tag syntax: `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`.
fn is_tag(t: &str) -> bool {
    t.len() <= 128
        && t.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        && t.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
}

/// The first `${NAME}` in `text`, as `NAME`.
pub(super) fn template_name(text: &str) -> Option<&str> {
    let start = text.find("${")? + 2;
    let len = text[start..].find('}')?;
    Some(&text[start..start + len])
}

/// `text` with every `${VERSION}` replaced by `version`.
pub(super) fn fill_version(text: &str, version: &str) -> String {
    text.replace("${VERSION}", version)
}

/// An image reference split as `name[:tag][@digest]`.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct ImageRef<'a> {
    pub name: &'a str,
    pub tag: Option<&'a str>,
    pub digest: Option<&'a str>,
}

pub(super) fn split_image(reference: &str) -> ImageRef<'_> {
    let (rest, digest) = match reference.split_once('@') {
        Some((r, d)) => (r, Some(d)),
        None => (reference, None),
    };
    // A `:` before the last `/` is a registry's port (`localhost:5000/img`), not a tag.
    let slash = rest.rfind('/').map_or(0, |i| i + 1);
    match rest[slash..].rfind(':') {
        Some(i) => ImageRef {
            name: &rest[..slash + i],
            tag: Some(&rest[slash + i + 1..]),
            digest,
        },
        None => ImageRef {
            name: rest,
            tag: None,
            digest,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_versions_pass() {
        assert_eq!(not_exact(&RegistryType::Npm, "0.0.79"), None);
        assert_eq!(not_exact(&RegistryType::Npm, "1.0.0-beta.2+b5"), None);
        assert_eq!(not_exact(&RegistryType::Pypi, "1.0"), None);
        assert_eq!(not_exact(&RegistryType::Nuget, "0.4.0-beta"), None);
        assert_eq!(not_exact(&RegistryType::Oci, "v1.7.2"), None);
    }

    #[test]
    fn ranges_tags_and_latest_are_refused() {
        for v in [
            "^1.2.3",
            "~1.2.3",
            ">=1.2.3",
            "1.x",
            "1.*",
            "*",
            "1.2.3 || 2",
            "[1.0,2.0)",
            "latest",
            "LATEST",
            "",
        ] {
            assert!(not_exact(&RegistryType::Npm, v).is_some(), "{v:?}");
        }
        assert!(not_exact(&RegistryType::Npm, "1.2").is_some());
        assert!(not_exact(&RegistryType::Npm, "next").is_some());
        assert!(not_exact(&RegistryType::Pypi, "==1.0").is_some());
        assert!(not_exact(&RegistryType::Oci, "latest").is_some());
    }

    #[test]
    fn image_references_split_at_the_tag_not_the_port() {
        assert_eq!(
            split_image("localhost:5000/a/b:1.2@sha256:ab"),
            ImageRef {
                name: "localhost:5000/a/b",
                tag: Some("1.2"),
                digest: Some("sha256:ab")
            }
        );
        assert_eq!(
            split_image("localhost:5000/img"),
            ImageRef {
                name: "localhost:5000/img",
                tag: None,
                digest: None
            }
        );
    }

    #[test]
    fn templates_are_found_and_filled() {
        assert_eq!(template_name("ghcr.io/x:${VERSION}"), Some("VERSION"));
        assert_eq!(template_name("1.0.0"), None);
        assert_eq!(fill_version("x:${VERSION}", "1.2.3"), "x:1.2.3");
    }
}
