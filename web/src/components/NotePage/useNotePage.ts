import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { queries, type TabRef } from "../../api";
import { useLive, usePresence, type RemoteChange } from "../../live";
import { navigate, onNavigate } from "../../router";
import { targetOf, type Target } from "../target";
import type { SaveState } from "../../save";
import { useStripWrites } from "./useStripWrites";
import type { NotePageProps } from "./types";

function tabFromURL(): string {
  return new URLSearchParams(location.search).get("tab") ?? "";
}

// historyFromURL is null off the history view, else the version asked
// for ("" for none).
function historyFromURL(): string | null {
  return new URLSearchParams(location.search).get("history");
}

// useNotePage is the Note page's state: the Note and its strip (a query,
// read again on every write the live stream reports), the open tab, the
// place in it the address points at (a search hit) and the history view
// (in the URL), the newest version seen, and what the open tab's view
// hears of the live stream.
export function useNotePage({ id, me, meId }: NotePageProps) {
  const strip = useQuery(queries.note(id));
  const note = strip.data;
  const [tab, setTab] = useState(tabFromURL);
  const [hist, setHist] = useState(historyFromURL);
  const [target, setTarget] = useState<Target | null>(() => targetOf(location.search));
  const [seenVersion, setSeenVersion] = useState(0);
  const [save, setSave] = useState<SaveState>("saved");
  const [notice, setNotice] = useState("");
  // The open tab's view gets every change but the ones that leave it
  // nothing to read again: its own deletion, and the Note's.
  const [tabRemote, setTabRemote] = useState<RemoteChange | null>(null);
  const tabRefs = useRef<Record<string, HTMLButtonElement | null>>({});
  const deletingHere = useRef("");
  const openRef = useRef<TabRef | null>(null);

  const version = Math.max(seenVersion, note?.version ?? 0);
  const seen = useCallback((v: number) => setSeenVersion((cur) => Math.max(cur, v)), []);

  const live = useLive(id, meId, (r) => {
    seen(r.version);
    if (r.kind === "note_deleted") return; // the page says so (LiveGone)
    const cur = openRef.current;
    if (r.kind === "tab_deleted" && cur && r.changed.includes(cur.tab_id)) {
      if (deletingHere.current !== cur.tab_id) {
        const who = r.mine ? "You deleted it on another page" : `${r.who.name || "Someone"} deleted it`;
        setNotice(`The tab “${cur.label || cur.type}” is gone: ${who}. The Note's History keeps it.`);
      }
    } else {
      setTabRemote(r);
    }
  });

  // The page follows its address: back and forward, and a link to this
  // Note (a search hit) while it is open.
  const notePath = "/notes/" + encodeURIComponent(id);
  useEffect(
    () =>
      onNavigate(() => {
        if (location.pathname !== notePath) return;
        setTab(tabFromURL());
        setHist(historyFromURL());
        setTarget(targetOf(location.search));
      }),
    [notePath],
  );

  const tabs = useMemo(() => (note ? [...note.tabs].sort((a, b) => a.position - b.position) : []), [note]);
  const current = tabs.find((t) => t.tab_id === tab) ?? tabs[0];
  useEffect(() => {
    openRef.current = current ?? null;
  });

  // Presence: the others in the Note, and the tab this page is in (its
  // view says where in it); the history is no tab.
  const { presence, peers } = usePresence(id);
  const inTab = hist === null ? (current?.tab_id ?? "") : "";
  useEffect(() => {
    if (inTab) presence.open(inTab);
  }, [presence, inTab]);
  const goneNote = live.gone?.deleted === true;
  useEffect(() => {
    if (goneNote) presence.stop();
  }, [presence, goneNote]);

  useEffect(() => {
    if (note) document.title = (hist !== null ? "History · " : "") + `${note.title} · Foundry`;
  }, [note, hist]);

  const focus = useCallback((t: string) => tabRefs.current[t]?.focus(), []);
  const openId = useCallback(
    (t: string) => {
      setTab(t);
      navigate(`${notePath}?tab=${encodeURIComponent(t)}`, true);
    },
    [notePath],
  );
  const open = useCallback(
    (t: TabRef, focusIt = false) => {
      openId(t.tab_id);
      if (focusIt) focus(t.tab_id);
    },
    [openId, focus],
  );

  const showHistory = (v: string) => {
    setHist(v);
    navigate(`${notePath}?history${v ? "=" + encodeURIComponent(v) : ""}`, hist !== null);
  };
  const closeHistory = () => {
    setHist(null);
    navigate(`${notePath}${current ? "?tab=" + encodeURIComponent(current.tab_id) : ""}`);
  };
  // restored: a version was restored as version v; the strip is read
  // again, and the tab that was open stays open if the Note still has it.
  const restored = (v: number) => {
    seen(v);
    void strip.refetch().then((r) => {
      const keep = current && r.data?.tabs.some((t) => t.tab_id === current.tab_id) ? current.tab_id : "";
      setHist(null);
      setTab(keep);
      navigate(notePath + (keep ? "?tab=" + encodeURIComponent(keep) : ""), true);
      setNotice(`Restored: the Note is at version ${v} now.`);
    });
  };

  // Ctrl/Cmd+1…9 opens the nth tab, from anywhere on the page.
  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey) || e.altKey || e.shiftKey || hist !== null) return;
      const n = Number(e.key);
      if (!Number.isInteger(n) || n < 1 || n > 9 || n > tabs.length) return;
      e.preventDefault();
      open(tabs[n - 1], true);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [tabs, open, hist]);

  const deleting = useCallback((t: string) => {
    deletingHere.current = t;
  }, []);
  const writes = useStripWrites({ id, me, tabs, version, seen, setNotice, deleting, opened: openId, focus });

  return {
    note,
    // A failed read is shown only when there is no strip to show: a
    // failed read again after a write leaves the strip as it was.
    error: note ? null : strip.error,
    retry: () => void strip.refetch(),
    tabs,
    current,
    // The place the address points at, when it is in the open tab.
    target: target && current && target.tab === current.tab_id && hist === null ? target : null,
    version,
    seen,
    save,
    setSave,
    notice,
    setNotice,
    hist,
    showHistory,
    closeHistory,
    restored,
    open,
    tabRefs,
    live,
    tabRemote,
    writes,
    presence,
    peers,
  };
}

