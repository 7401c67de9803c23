// Hash routes: #/servers, #/servers/NAME, #/sessions, #/manage, #/clients.

export type Route =
  | { page: "servers" }
  | { page: "server"; name: string }
  | { page: "sessions" }
  | { page: "manage" }
  | { page: "clients" }
  | { page: "not_found"; hash: string };

function decode(part: string): string | null {
  try {
    return decodeURIComponent(part);
  } catch {
    return null;
  }
}

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, "").replace(/^\/+/, "").replace(/\/+$/, "");
  if (path === "" || path === "servers") return { page: "servers" };
  if (path === "sessions") return { page: "sessions" };
  if (path === "manage") return { page: "manage" };
  if (path === "clients") return { page: "clients" };
  if (path.startsWith("servers/")) {
    const name = decode(path.slice("servers/".length));
    if (name) return { page: "server", name };
  }
  return { page: "not_found", hash };
}

export function href(route: Route): string {
  switch (route.page) {
    case "servers":
      return "#/servers";
    case "server":
      return `#/servers/${encodeURIComponent(route.name)}`;
    case "sessions":
      return "#/sessions";
    case "manage":
      return "#/manage";
    case "clients":
      return "#/clients";
    case "not_found":
      return route.hash;
  }
}

export function serverHref(name: string): string {
  return href({ page: "server", name });
}
