// The Add flow's first step: search the MCP Registry, paste a command, or paste a server.json.
import type { Dispatch } from "preact/hooks";
import type { AddAction, AddState, Field } from "../lib/addFlow";
import { printableLine } from "../lib/format";

export function AddFind(props: { state: AddState; dispatch: Dispatch<AddAction>; onSearch: () => void; onChoose: (name: string) => void; onDocument: () => void }) {
  const s = props.state;
  const edit = <K extends Field>(field: K, value: AddState[K]) => props.dispatch({ type: "edit", field, value } as AddAction);
  return (
    <>
      <div class="tabs" role="tablist">
        {(["registry", "command", "url", "document"] as const).map((k) => (
          <button
            key={k}
            type="button"
            role="tab"
            class={s.source === k ? "" : "secondary"}
            aria-selected={s.source === k}
            data-testid={`source-${k}`}
            onClick={() => edit("source", k)}
          >
            {k === "registry" ? "MCP Registry" : k === "command" ? "Command" : k === "url" ? "Remote URL" : "server.json"}
          </button>
        ))}
      </div>
      {s.source === "registry" && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            props.onSearch();
          }}
        >
          <label class="field">
            Search the official MCP Registry
            <input data-testid="registry-term" data-autofocus value={s.term} placeholder="e.g. playwright" onInput={(e) => edit("term", e.currentTarget.value)} />
          </label>
          <button type="submit" data-testid="registry-search" disabled={s.busy}>
            {s.busy ? "Searching…" : "Search"}
          </button>
          {s.found && s.found.length === 0 && <p class="muted">No server matches.</p>}
          {s.found && s.found.length > 0 && (
            <ul class="found-list" data-testid="registry-results">
              {s.found.map((f) => (
                <li key={f.name} data-testid={`found-${f.name}`}>
                  <div>
                    <strong>{printableLine(f.title ?? f.name)}</strong> <span class="muted small">{printableLine(f.version ?? "")}</span>
                    {f.kinds.map((k) => (
                      <span key={k} class="tag">
                        {k}
                      </span>
                    ))}
                    {f.deprecated && <span class="tag bad">deprecated</span>}
                    <div class="small muted">{printableLine(f.name)}</div>
                    {f.description && <div class="small">{printableLine(f.description)}</div>}
                  </div>
                  <button type="button" class="secondary" data-testid={`choose-${f.name}`} disabled={s.busy} onClick={() => props.onChoose(f.name)}>
                    Choose
                  </button>
                </li>
              ))}
            </ul>
          )}
        </form>
      )}
      {s.source === "command" && (
        <div>
          <label class="field">
            Command (run without a shell)
            <input data-testid="command-line" value={s.commandLine} placeholder="npx -y @modelcontextprotocol/server-everything@2025.9.25" onInput={(e) => edit("commandLine", e.currentTarget.value)} />
          </label>
          <label class="field">
            Name
            <input data-testid="command-name" value={s.commandName} placeholder="everything" onInput={(e) => edit("commandName", e.currentTarget.value)} />
          </label>
          <label class="field">
            Environment, one KEY=VALUE a line (written into the files)
            <textarea data-testid="command-env" rows={2} value={s.envText} onInput={(e) => edit("envText", e.currentTarget.value)} />
          </label>
          <label class="field">
            Secrets, one KEY=VALUE a line (into the OS keychain, never a file)
            <textarea data-testid="command-secrets" rows={2} value={s.secretText} onInput={(e) => edit("secretText", e.currentTarget.value)} />
          </label>
          <button type="button" data-testid="command-next" onClick={() => props.dispatch({ type: "from_command" })}>
            Next
          </button>
        </div>
      )}
      {s.source === "url" && (
        <div>
          <label class="field">
            URL of a remote MCP server (Streamable HTTP)
            <input data-testid="remote-url-input" value={s.url} placeholder="https://api.githubcopilot.com/mcp/" onInput={(e) => edit("url", e.currentTarget.value)} />
          </label>
          <label class="field">
            Name
            <input data-testid="remote-name" value={s.urlName} placeholder="github" onInput={(e) => edit("urlName", e.currentTarget.value)} />
          </label>
          <label class="field">
            Headers, one NAME=VALUE a line (the values into the OS keychain, never a file; none for a server you sign in to)
            <textarea data-testid="remote-headers" rows={2} value={s.headerText} onInput={(e) => edit("headerText", e.currentTarget.value)} />
          </label>
          <button type="button" data-testid="url-next" onClick={() => props.dispatch({ type: "from_url" })}>
            Next
          </button>
        </div>
      )}
      {s.source === "document" && (
        <div>
          <label class="field">
            Paste a server.json (the MCP Registry's format)
            <textarea data-testid="document" rows={10} value={s.document} onInput={(e) => edit("document", e.currentTarget.value)} />
          </label>
          <button type="button" data-testid="document-next" disabled={s.busy || s.document.trim() === ""} onClick={() => props.onDocument()}>
            Next
          </button>
        </div>
      )}
    </>
  );
}
