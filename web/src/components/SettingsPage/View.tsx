import { useEffect } from "react";
import type { Me } from "../../api";
import { Link, navigate } from "../../router";
import { People } from "./People";
import { Tokens } from "./Tokens";
import { Workspace } from "./Workspace";

// The Settings pages, one per part: /settings/people (also /settings),
// /settings/tokens and /settings/workspace. Owners manage; members see
// what applies to them (the people, their own tokens, the workspace's
// address).
const parts = [
  { path: "/settings/people", label: "People" },
  { path: "/settings/tokens", label: "Tokens" },
  { path: "/settings/workspace", label: "Workspace" },
];

export function SettingsPage({ me, path }: { me: Me; path: string }) {
  const part = path === "/settings" || path === "/settings/" ? "/settings/people" : path;
  const known = parts.some((p) => p.path === part);
  useEffect(() => {
    if (!known) navigate("/settings/people", true);
  }, [known]);
  const owner = me.user.role === "owner";
  return (
    <section className="page settings" aria-labelledby="settings-title">
      <div className="page-head">
        <h1 id="settings-title">Settings</h1>
      </div>
      <p className="lead">
        {owner
          ? "The workspace's people, the personal access tokens and the workspace itself. You are an owner: you manage them."
          : "The workspace's people, your personal access tokens and the workspace's address. An owner manages the rest."}
      </p>
      <nav className="settings-nav" aria-label="Settings">
        {parts.map((p) => (
          <Link key={p.path} to={p.path} className="settings-tab" current={part === p.path}>
            {p.label}
          </Link>
        ))}
        <Link to="/rooms" className="settings-tab settings-out">
          Rooms: create, rename, delete →
        </Link>
      </nav>
      {part === "/settings/people" ? <People me={me} /> : null}
      {part === "/settings/tokens" ? <Tokens me={me} /> : null}
      {part === "/settings/workspace" ? <Workspace me={me} /> : null}
    </section>
  );
}
