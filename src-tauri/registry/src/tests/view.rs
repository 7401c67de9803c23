//! The window's reading of `warden registry search|show --json`, on the project's own documents.

use super::*;

#[test]
fn a_search_lists_each_server_with_what_it_installs_as() {
    let text = fixture("list-response.json");
    let list: serde_json::Value = serde_json::from_str(&text).unwrap();
    let printed = list["servers"].to_string();
    let servers = found(&printed).unwrap();
    assert_eq!(servers.len(), list["servers"].as_array().unwrap().len());
    assert!(servers.iter().all(|s| !s.name.is_empty()));
}

#[test]
fn a_search_answer_that_is_not_json_is_refused() {
    assert!(matches!(
        found("warden: oops"),
        Err(RegistryError::Malformed { .. })
    ));
}

/// `show --json` as warden-registry prints it: the document under `server`, the versions.
fn shown(doc: &str) -> String {
    let server: serde_json::Value = serde_json::from_str(doc).unwrap();
    serde_json::json!({ "server": server, "versions": ["9.9.9"] }).to_string()
}

#[test]
fn a_required_value_is_asked_for_then_planned() {
    let doc = fixture("calendar-sync.server.json");
    let first = plan_view(&shown(&doc), BTreeMap::new(), None).unwrap();
    assert!(first.plan.is_none());
    assert!(!first.missing.is_empty());
    let inputs: BTreeMap<String, String> = first
        .missing
        .iter()
        .map(|i| (i.key.clone(), "v".to_owned()))
        .collect();
    let second = plan_view(&shown(&doc), inputs, Some("mine")).unwrap();
    assert_eq!(
        (
            second.entry_name.as_str(),
            second.missing.len(),
            second.plan.is_some()
        ),
        ("mine", 0, true)
    );
}

/// A server that lists only `remotes` is planned as its remote: first the values it needs
/// (its secret header), then its URL and the header's variable.
#[test]
fn a_remote_only_server_is_planned_as_its_remote() {
    let doc = fixture("ticket-desk.server.json");
    let asks = plan_view(&shown(&doc), BTreeMap::new(), None).unwrap();
    let token = BTreeMap::from([(
        "MCP_HEADER_AUTHORIZATION".to_owned(),
        "Bearer t-1".to_owned(),
    )]);
    let view = plan_view(&shown(&doc), token, None).unwrap();
    let remote = view.remote.unwrap();
    assert_eq!(
        (
            asks.missing
                .iter()
                .map(|m| m.key.clone())
                .collect::<Vec<_>>(),
            remote.url,
            remote.headers
        ),
        (
            vec!["MCP_HEADER_AUTHORIZATION".to_owned()],
            "https://eu.tickets.example.com/mcp".to_owned(),
            vec!["Authorization=MCP_HEADER_AUTHORIZATION".to_owned()]
        )
    );
}

#[test]
fn a_pasted_document_is_planned_without_the_registry() {
    let doc = fixture("notes-server.server.json");
    let view = document_view(&doc, BTreeMap::new(), None).unwrap();
    let plan = view.plan.unwrap();
    assert_eq!(plan.argv()[..2], ["npx".to_owned(), "-y".to_owned()]);
}

#[test]
fn a_pasted_text_that_is_not_json_says_so() {
    let e = document_view("{not json", BTreeMap::new(), None).unwrap_err();
    assert!(e.to_string().contains("the pasted server.json"));
}

#[test]
fn the_windows_request_is_fetched_as_words_and_its_errors_shown() {
    let search = RegistryRequest::Search(registry_op::Search {
        term: "-echo".into(),
    });
    assert_eq!(
        search.args().unwrap()[5..],
        ["--".to_owned(), "-echo".to_owned()],
        "a term that looks like a flag stays a term"
    );
    let printed = r#"[{"server": {"name": "io.x/echo", "version": "1.0.0", "description": " Echoes ", "packages": [{"registryType": "npm", "identifier": "echo-mcp", "version": "1.0.0", "transport": {"type": "stdio"}}]}}]"#;
    let RegistryAnswer::Found { servers } = search.answer(Ok(printed.into())) else {
        panic!("not found")
    };
    assert_eq!(
        (servers[0].description.as_str(), servers[0].kinds.clone()),
        ("Echoes", vec!["npm".to_owned()])
    );
    let plan = RegistryRequest::Plan(registry_op::Plan {
        name: "io.x/nope".into(),
        version: None,
        inputs: BTreeMap::new(),
        as_name: None,
    });
    assert!(matches!(
        plan.answer(Err("the registry has no such server [W-REGISTRY-NOT-FOUND]".into())),
        RegistryAnswer::Error { message } if message.contains("W-REGISTRY-NOT-FOUND")
    ));
    let doc = RegistryRequest::Document(registry_op::Document {
        document: "{".into(),
        inputs: BTreeMap::new(),
        as_name: None,
    });
    assert!(doc.args().is_none());
}

/// The plan the window's consent screen gets carries the risks, a document's own
/// `LD_PRELOAD` default as high risk.
#[test]
fn a_pasted_documents_loader_default_reaches_the_windows_plan_as_high_risk() {
    let doc = serde_json::json!({
        "name": "io.example/srv",
        "version": "1.0.0",
        "packages": [{"registryType": "npm", "identifier": "srv", "version": "1.0.0",
                      "transport": {"type": "stdio"},
                      "environmentVariables": [{"name": "LD_PRELOAD", "default": "/tmp/x.so"}]}]
    });
    let view = document_view(&doc.to_string(), BTreeMap::new(), None).unwrap();
    let kinds: Vec<_> = view
        .plan
        .map(|p| p.risks.into_iter().map(|r| r.kind).collect())
        .unwrap_or_default();
    assert_eq!(kinds, [warden_clients::RiskKind::LoaderEnvByDocument]);
}
