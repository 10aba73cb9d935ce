import { useEffect } from "react";
import { QueryClientProvider, useQuery } from "@tanstack/react-query";
import { ApiError, errorText, queries, queryClient, type Me } from "./api";
import { Link, usePath } from "./router";
import { ErrorBox, Loading } from "./ui";
import { NotesPage } from "./NotesPage";
import { TrashPage } from "./TrashPage";
import { ConnectedPage } from "./ConnectedPage";
import { NotePage } from "./components/NotePage";
import { ApprovalsPage, PendingBadge, usePendingCount } from "./components/ApprovalsPage";
import { RoomsPage } from "./RoomsPage";
import { RoomPage } from "./RoomPage";
import { SettingsPage } from "./components/SettingsPage";
import { Search } from "./components/Search";

// App is the one QueryClient's provider around the signed-in person's
// pages.
export function App() {
  return (
    <QueryClientProvider client={queryClient}>
      <Boot />
    </QueryClientProvider>
  );
}

// Boot reads who is signed in (and the session's CSRF token) first.
function Boot() {
  const q = useQuery(queries.me());
  const me = q.data ?? null;
  // A 401 is on its way to /signin.
  const error = q.isError && !(q.error instanceof ApiError && q.error.status === 401) ? errorText(q.error) : "";

  if (error) {
    return (
      <main className="boot">
        <ErrorBox text={error} onRetry={() => void q.refetch()} />
      </main>
    );
  }
  if (!me) {
    return (
      <main className="boot">
        <Loading what="Opening Foundry…" />
      </main>
    );
  }
  return <Shell me={me} />;
}

function Shell({ me }: { me: Me }) {
  const path = usePath();
  const pending = usePendingCount();
  const rooms = path === "/rooms" || path.startsWith("/rooms/");
  const settings = path === "/settings" || path.startsWith("/settings/");
  const section =
    path === "/" || path === "/notes" || path.startsWith("/notes/") || path === "/trash"
      ? "notes"
      : path === "/connected"
        ? "connected"
        : path === "/approvals"
          ? "approvals"
          : rooms
            ? "rooms"
            : settings
              ? "settings"
              : "";
  useEffect(() => {
    document.title =
      section === "connected"
        ? "Connected · Foundry"
        : section === "approvals"
          ? "Needs your approval · Foundry"
          : section === "notes"
            ? "Notes · Foundry"
            : section === "rooms"
              ? "Rooms · Foundry"
              : section === "settings"
                ? "Settings · Foundry"
                : "Foundry";
  }, [section]);
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/" className="mark">
          <span className="mark-logo" aria-hidden="true">
            F
          </span>
          <span>Foundry</span>
        </Link>
        {me.workspace.name ? <span className="workspace">{me.workspace.name}</span> : null}
        <Search />
        <div className="account">
          <span className="who">
            <span className="sr-only">Signed in as </span>
            {me.user.email}
          </span>
          <form method="post" action="/signout">
            <input type="hidden" name="csrf_token" value={me.csrf_token} />
            <button type="submit" className="secondary small">
              Sign out
            </button>
          </form>
        </div>
      </header>
      <nav className="sidenav" aria-label="Sections">
        <Link to="/" className="navlink" current={section === "notes"}>
          Notes
        </Link>
        <Link to="/connected" className="navlink" current={section === "connected"}>
          Connected
        </Link>
        <Link to="/approvals" className="navlink" current={section === "approvals"}>
          Needs your approval
          <PendingBadge count={pending} />
        </Link>
        <Link to="/rooms" className="navlink" current={section === "rooms"}>
          Rooms
        </Link>
        <Link to="/settings" className="navlink" current={section === "settings"}>
          Settings
        </Link>
      </nav>
      <main id="main" className="content" tabIndex={-1}>
        {path === "/trash" ? <TrashPage /> : null}
        {section === "notes" && !path.startsWith("/notes/") && path !== "/trash" ? <NotesPage me={me.user.name || me.user.email} /> : null}
        {path.startsWith("/notes/") ? <NotePage key={path} id={safeDecode(path.slice("/notes/".length))} me={me.user.name || me.user.email} meId={me.user.id} /> : null}
        {section === "connected" ? <ConnectedPage pending={pending} /> : null}
        {section === "approvals" ? <ApprovalsPage pending={pending} /> : null}
        {path === "/rooms" ? <RoomsPage /> : null}
        {path.startsWith("/rooms/") ? <RoomPage key={path} id={safeDecode(path.slice("/rooms/".length))} /> : null}
        {section === "settings" ? <SettingsPage me={me} path={path} /> : null}
        {section === "" ? <NotFound /> : null}
      </main>
    </div>
  );
}

function NotFound() {
  return (
    <section className="page">
      <h1>Page not found</h1>
      <div className="empty">
        <p>There is no page at this address.</p>
        <Link to="/" className="button secondary">
          Go to Notes
        </Link>
      </div>
    </section>
  );
}

// safeDecode is a path segment decoded, or as it is when it is not valid
// percent-encoding (the server then says the ID is not found).
function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
