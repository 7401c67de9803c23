// The Manage page's Projects: the requests of a set's apply and remove (previewed, then
// written exactly as previewed) and how an overview reads. What a set holds, which file a
// client reads in a project and what it starts there are Rust's (`Projects`, `SetApply`).
import type { ClientId, FileChangeView, Overview, PlannedFile, Request, SetAnswer, Starts } from "../bindings/api";

/** What the Apply form holds. */
export interface SetForm {
  set: string;
  /** The project's folder as typed; empty: the clients' user files. */
  project: string;
  clients: ClientId[];
}

/** The apply of `form`: a preview (`plan` null), or the write of exactly the preview `plan` came from. */
export function applyRequest(form: SetForm, plan: PlannedFile[] | null): Extract<Request, { op: "set_apply" }> {
  const project = form.project.trim();
  return { op: "set_apply", set: form.set, project: project === "" ? null : project, clients: form.clients, plan, dry_run: plan === null };
}

/** The remove of `set` from `project` (every client's files there): a preview, or the write of `plan`. */
export function removeRequest(set: string, project: string | null, plan: PlannedFile[] | null): Extract<Request, { op: "set_remove" }> {
  return { op: "set_remove", set, project, clients: [], plan, dry_run: plan === null };
}

/** Why the form cannot be previewed yet, or null. */
export function formProblem(form: SetForm): string | null {
  if (form.set === "") return "Choose a set.";
  if (form.clients.length === 0) return "Choose at least one client.";
  return null;
}

/** One file of a set's answer as the page shows it: the change, and what else to say of it. */
export interface SetFileShown {
  change: FileChangeView;
  /** Created or deleted as a whole, or null. */
  whole: string | null;
}

/**
 * Each file of `answer`, the set's servers already there as entries left alone (so the
 * change lists show them), a file created or deleted said so.
 */
export function setFiles(answer: SetAnswer, apply: boolean, dryRun: boolean): SetFileShown[] {
  return answer.files.map((f) => {
    const kept = f.kept.map((name) => ({ name, reason: "already there, left as it is" }));
    const whole = !f.whole_file
      ? null
      : apply
        ? dryRun
          ? "A new file: it would be created."
          : "Created."
        : dryRun
          ? "Warden created this file: it would be deleted, and its folder if empty."
          : "Deleted: Warden had created it.";
    return { change: { ...f.change, skipped: [...f.change.skipped, ...kept] }, whole };
  });
}

/** The clients asked for that have no project file, as a line (null when none). */
export function skippedLine(answer: SetAnswer, names: (c: ClientId) => string): string | null {
  if (answer.skipped.length === 0) return null;
  return `Skipped (no project file Warden knows of): ${answer.skipped.map(names).join(", ")}.`;
}

/** Where an entry a client starts in a project comes from. */
export const FROM_LABEL: Record<string, string> = {
  project: "the project's file",
  local: "its settings for this project",
  user: "the user file",
};

/** One server a client starts, as a line: its name (and the server it bridges to, when another), where from, how. */
export function startsText(s: Starts): string {
  const name = s.server === s.name ? s.name : `${s.name} (${s.server})`;
  const how = [FROM_LABEL[s.from] ?? s.from, s.wrapped ? "through Warden" : "not through Warden"];
  if (!s.enabled) how.push("off");
  return `${name}: ${how.join(", ")}`;
}

/** The sets whose apply added entries in `dir` (those Remove can take out there), sorted. */
export function removableSets(overview: Overview, dir: string): string[] {
  return overview.sets
    .filter((s) => s.applied.some((a) => a.project === dir && a.by_warden))
    .map((s) => s.name)
    .sort();
}
