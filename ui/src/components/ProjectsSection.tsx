// The Manage page's Projects: each project with the sets applied there and what each client
// starts in it; a set applied (or removed) with the exact change previewed, then written only
// while the files read as previewed.
import { useState } from "preact/hooks";
import type { ClientId, SetAnswer } from "../bindings/api";
import { changedSincePreview } from "../lib/manage";
import { applyRequest, formProblem, removableSets, removeRequest, type SetForm, setFiles, skippedLine, startsText } from "../lib/projects";
import { printableLine } from "../lib/format";
import { ask } from "../lib/tauri";
import { useAction } from "../lib/useAction";
import { ON_CLIENTS, useApi } from "../lib/useApi";
import { ChangeList, ResultPanel, type Result, changeResult, errorResult } from "./Changes";
import { Dialog } from "./Dialog";
import { Empty, ErrorText, Loading } from "./common";

/** A preview on screen: the set's apply or remove, its answer, and why an earlier one was not written. */
type Preview = { apply: boolean; title: string; form: SetForm; answer: SetAnswer; stale?: string | undefined };

export function ProjectsSection(props: { clients: Array<{ client: ClientId; name: string }>; onWritten: () => void }) {
  const overview = useApi({ op: "projects" }, ON_CLIENTS);
  const { data, error, reload } = overview;
  const action = useAction();
  const [form, setForm] = useState<SetForm>({ set: "", project: "", clients: [] });
  const [preview, setPreview] = useState<Preview | null>(null);
  const [result, setResult] = useState<Result | null>(null);
  const clientName = (c: ClientId) => props.clients.find((x) => x.client === c)?.name ?? c;
  const set = form.set !== "" ? form.set : (data?.sets[0]?.name ?? "");
  const chosen: SetForm = { ...form, set };

  const run = (title: string, f: () => Promise<void>) => action.run(f, { onError: (m) => setResult(errorResult(title, m)) });

  /** Asks for the preview of `p` (an apply of `p.form`, or the remove of its set from its project). */
  const showPreview = async (apply: boolean, title: string, f: SetForm, stale?: string) => {
    const r = await ask(apply ? applyRequest(f, null) : removeRequest(f.set, f.project, null));
    if (r.ok) setPreview({ apply, title, form: f, answer: r.value, stale });
    else {
      setPreview(null);
      setResult(errorResult(title, r.error.message));
    }
  };

  const previewApply = () => {
    const title = `Apply ${set}${chosen.project.trim() ? ` to ${chosen.project.trim()}` : " to the user files"}`;
    void run(title, () => showPreview(true, title, chosen));
  };

  const previewRemove = (s: string, dir: string) => {
    const title = `Remove ${s} from ${dir}`;
    void run(title, () => showPreview(false, title, { set: s, project: dir, clients: [] }));
  };

  const write = () => {
    if (!preview) return;
    const { apply, title, form: f, answer } = preview;
    void run(title, async () => {
      // Exactly what the preview showed: refused (nothing written) if a file changed since.
      const r = await ask(apply ? applyRequest(f, answer.plan) : removeRequest(f.set, f.project, answer.plan));
      if (!r.ok && changedSincePreview(r.error.message)) {
        await showPreview(apply, title, f, r.error.message);
        return;
      }
      if (r.ok) {
        const res = changeResult(title, r.value.files.map((x) => x.change));
        const skipped = skippedLine(r.value, clientName);
        if (skipped) res.lines.push(skipped);
        if (r.value.warning) res.lines.push(`Warning: ${r.value.warning}`);
        setResult(res);
      } else setResult(errorResult(title, r.error.message));
      setPreview(null);
      props.onWritten();
      await reload();
    });
  };

  const problem = formProblem(chosen);
  return (
    <section class="projects" data-testid="projects">
      <h2>Projects</h2>
      <p class="muted">
        A set is a list of servers that go together, <code>[sets.NAME] servers = ["github", "postgres"]</code> in config.toml,
        each one a server some client already has. Apply writes them, through Warden, into the chosen clients' files of a
        project (or into their user files), after showing the exact change; Remove takes out exactly what Apply added, and a
        file Apply created goes again. Projects are those Claude Code and Codex list, the folders VS Code and Cursor opened recently, and those a set was applied in.
      </p>
      {error && <ErrorText message={error} testid="projects-error" />}
      {result && <ResultPanel result={result} onClose={() => setResult(null)} />}
      {!data && !error && <Loading what="the projects" />}
      {data && data.sets.length === 0 && (
        <Empty title="No sets yet">
          <p>
            Add one to config.toml: <code>[sets.web]</code> then <code>servers = ["github", "postgres"]</code>, with names from
            the list above.
          </p>
        </Empty>
      )}
      {data && data.sets.length > 0 && (
        <form
          class="set-form"
          data-testid="set-form"
          onSubmit={(e) => {
            e.preventDefault();
            previewApply();
          }}
        >
          <label class="field">
            Set
            <select data-testid="set-choice" value={set} onChange={(e) => setForm({ ...chosen, set: e.currentTarget.value })}>
              {data.sets.map((s) => (
                <option key={s.name} value={s.name}>
                  {printableLine(s.name)}: {s.servers.map(printableLine).join(", ")}
                </option>
              ))}
            </select>
          </label>
          {data.sets
            .filter((s) => s.name === set && s.unknown.length > 0)
            .map((s) => (
              <p key={s.name} class="small error-text">
                No client's file has {s.unknown.map(printableLine).join(", ")}: Apply is refused until one has (add it above), or
                take it out of [sets.{printableLine(s.name)}].
              </p>
            ))}
          <label class="field">
            Project folder (empty: the clients' user files)
            <input
              type="text"
              list="known-projects"
              data-testid="set-project"
              placeholder="/home/you/code/app"
              value={form.project}
              onInput={(e) => setForm({ ...chosen, project: e.currentTarget.value })}
            />
            <datalist id="known-projects">
              {data.projects.map((p) => (
                <option key={p.dir} value={p.dir} />
              ))}
            </datalist>
          </label>
          <fieldset>
            <legend>Clients</legend>
            {props.clients.map((c) => (
              <label key={c.client} class="check">
                <input
                  type="checkbox"
                  data-testid={`set-client-${c.client}`}
                  checked={chosen.clients.includes(c.client)}
                  onChange={(e) => {
                    const on = e.currentTarget.checked;
                    setForm({ ...chosen, clients: on ? [...chosen.clients, c.client] : chosen.clients.filter((x) => x !== c.client) });
                  }}
                />
                {c.name}
              </label>
            ))}
          </fieldset>
          {problem && <p class="small muted">{problem}</p>}
          <button type="submit" data-testid="set-preview" disabled={action.busy || problem !== null}>
            Preview…
          </button>
        </form>
      )}
      {data && data.projects.length === 0 && <p class="muted">No project found yet: apply a set to a project folder above.</p>}
      {data &&
        data.projects.map((p) => {
          const removable = removableSets(data, p.dir);
          return (
            <article key={p.dir} class="project" data-testid="project" data-dir={p.dir}>
              <h3>
                <code>{printableLine(p.dir)}</code>
                {!p.exists && <span class="muted small"> · not there</span>}
              </h3>
              <p class="small muted">
                Found in: {p.found_in.map(printableLine).join(", ")}. Sets applied: {p.sets.length > 0 ? p.sets.map(printableLine).join(", ") : "none"}.
              </p>
              <ul class="small">
                {p.clients
                  .filter((c) => c.starts.length > 0)
                  .map((c) => (
                    <li key={c.client} data-testid={`starts-${c.client}`}>
                      <strong>{clientName(c.client)}</strong> starts {c.starts.map((s) => printableLine(startsText(s))).join("; ")}
                    </li>
                  ))}
              </ul>
              <div class="row-actions">
                <button
                  type="button"
                  class="secondary"
                  data-testid="apply-here"
                  disabled={action.busy}
                  onClick={() => setForm({ ...chosen, project: p.dir })}
                >
                  Apply a set here…
                </button>
                {removable.map((s) => (
                  <button
                    key={s}
                    type="button"
                    class="secondary"
                    data-testid={`remove-set-${s}`}
                    data-dir={p.dir}
                    disabled={action.busy}
                    onClick={() => previewRemove(s, p.dir)}
                  >
                    Remove {printableLine(s)}…
                  </button>
                ))}
              </div>
            </article>
          );
        })}
      {preview && (
        <Dialog title={preview.title} onClose={() => setPreview(null)} testid="set-preview-dialog" wide>
          {preview.stale && <ErrorText message={preview.stale} testid="set-stale" />}
          <p class="muted small">
            Nothing has been written yet. {preview.apply ? "Apply" : "Remove"} writes exactly what is shown: if a file changes
            before you confirm, nothing is written and you get a new preview. Each file is backed up first.
          </p>
          {skippedLine(preview.answer, clientName) && <p class="small">{skippedLine(preview.answer, clientName)}</p>}
          {preview.answer.warning && <p class="small error-text">Warning: {preview.answer.warning}</p>}
          {setFiles(preview.answer, preview.apply, true).map((f) => (
            <div key={f.change.path}>
              {f.whole && <p class="small">{f.whole}</p>}
              <ChangeList changes={[f.change]} />
            </div>
          ))}
          {preview.answer.plan.length === 0 && <p class="small">Nothing to change: every server of the set is there already.</p>}
          <div class="dialog-actions">
            <button type="button" class="secondary" data-testid="cancel" onClick={() => setPreview(null)}>
              Cancel
            </button>
            <button
              type="button"
              class={preview.apply ? "" : "danger"}
              data-testid={preview.apply ? "confirm-set-apply" : "confirm-set-remove"}
              data-autofocus
              disabled={action.busy || preview.answer.plan.length === 0}
              onClick={write}
            >
              {preview.apply ? "Apply" : "Remove"}
            </button>
          </div>
        </Dialog>
      )}
    </section>
  );
}
