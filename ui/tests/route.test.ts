import { describe, expect, it } from "vitest";
import { href, parseRoute, serverHref } from "../src/lib/route";

describe("parseRoute", () => {
  it.each([
    ["", { page: "servers" }],
    ["#", { page: "servers" }],
    ["#/", { page: "servers" }],
    ["#/servers", { page: "servers" }],
    ["#/servers/", { page: "servers" }],
    ["#/sessions", { page: "sessions" }],
    ["#/clients", { page: "clients" }],
    ["#/manage", { page: "manage" }],
    ["#/servers/ripgrep", { page: "server", name: "ripgrep" }],
    ["#/servers/my%20server", { page: "server", name: "my server" }],
    ["#/servers/a%2Fb", { page: "server", name: "a/b" }],
  ])("%s", (hash, route) => {
    expect(parseRoute(hash)).toEqual(route);
  });

  it("reports unknown and broken routes", () => {
    expect(parseRoute("#/nope")).toEqual({ page: "not_found", hash: "#/nope" });
    expect(parseRoute("#/servers/%E0%A4%A")).toEqual({ page: "not_found", hash: "#/servers/%E0%A4%A" });
  });

  it("round-trips server names through links", () => {
    for (const name of ["ripgrep", "my server", "a/b", "ü#?"]) {
      expect(parseRoute(serverHref(name))).toEqual({ page: "server", name });
    }
    expect(href({ page: "clients" })).toBe("#/clients");
    expect(href({ page: "manage" })).toBe("#/manage");
  });
});
