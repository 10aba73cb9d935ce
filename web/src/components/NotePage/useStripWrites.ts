import { useCallback, useEffect } from "react";
import { api, errorText, keys, queryClient, type NoteView, type Precondition, type TabRef } from "../../api";
import { capital, useSave } from "../../save";
import type { StripWrites } from "./types";

type Env = {
  id: string;
  me: string;
  tabs: TabRef[]; // the strip as shown, in order
  version: number; // the newest version the page has seen
  seen: (v: number) => void;
  setNotice: (text: string) => void;
  deleting: (tab: string) => void; // this page is deleting tab
  opened: (tab: string) => void; // a tab was added: open it
  focus: (tab: string) => void;
};

// useStripWrites is the tab strip's changes: each one guarded write on the
// newest version the page has seen, after which the strip is read again.
// On 412 the page says who changed the Note and nothing is done; any other
// refusal is shown as the server says it.
export function useStripWrites(env: Env): StripWrites {
  const { id, me, setNotice, seen } = env;
  const { saver, busy } = useSave({ version: env.version, onVersion: seen });
  useEffect(() => saver.seen(env.version), [saver, env.version]);

  const refetch = useCallback(() => queryClient.refetchQueries({ queryKey: keys.note(id), exact: true }), [id]);

  const write = async <T>(what: string, send: (pre: Precondition) => Promise<T>): Promise<T | null> => {
    setNotice("");
    const out = await saver.run({
      send: async (pre) => {
        const res = await send(pre);
        await refetch();
        return res;
      },
      retrying: (e) => setNotice("Not saved yet: " + e.message + " Foundry tries again in a moment."),
    });
    if (out.ok) {
      setNotice("");
      return out.value;
    }
    if ("conflict" in out) {
      const who = out.conflict.who(me);
      await refetch();
      setNotice(`${who ? capital(who) : "Someone"} changed this Note meanwhile, so ${what} was not done. The tab strip is up to date now: try again.`);
    } else {
      setNotice(errorText(out.error));
    }
    return null;
  };

  const name = (t: TabRef) => t.label || t.type;

  return {
    busy: busy > 0,
    addTab: async (type) => {
      const label = type === "slides" ? "Slides" : "Sheet";
      const res = await write(`adding the ${label} tab`, (pre) => api.addTab(id, { type, label }, pre));
      if (res) {
        env.opened(res.tab_id);
        window.setTimeout(() => env.focus(res.tab_id), 0);
      }
    },
    importSheet: async (file) => {
      if (!/\.(xlsx|csv)$/i.test(file.name)) {
        setNotice(`“${file.name}” is not a spreadsheet Foundry imports: choose an .xlsx or .csv file.`);
        return;
      }
      const res = await write(`importing “${file.name}”`, (pre) => api.importSheet({ id }, file, pre));
      if (res) {
        env.opened(res.tab_id);
        window.setTimeout(() => env.focus(res.tab_id), 0);
      }
    },
    move: async (t, to) => {
      const from = env.tabs.findIndex((x) => x.tab_id === t.tab_id);
      if (to < 0 || to >= env.tabs.length || to === from) return;
      // Show the new order at once; the server's answer replaces it.
      await queryClient.cancelQueries({ queryKey: keys.note(id), exact: true });
      const order = [...env.tabs];
      const [m] = order.splice(from, 1);
      order.splice(to, 0, m);
      queryClient.setQueryData<NoteView>(keys.note(id), (n) => (n ? { ...n, tabs: order.map((x, i) => ({ ...x, position: i })) } : n));
      await write(`moving “${name(t)}”`, (pre) => api.patchTab({ id, tab_id: t.tab_id }, { position: to }, pre));
      window.setTimeout(() => env.focus(t.tab_id), 0);
    },
    rename: async (t, label) => {
      const res = await write(`renaming “${name(t)}”`, (pre) => api.patchTab({ id, tab_id: t.tab_id }, { label }, pre));
      if (res) window.setTimeout(() => env.focus(t.tab_id), 0);
      return res !== null;
    },
    remove: async (t) => {
      env.deleting(t.tab_id);
      const res = await write(`deleting “${name(t)}”`, (pre) => api.deleteTab({ id, tab_id: t.tab_id }, pre).then((r) => r ?? { version: 0 }));
      return res !== null;
    },
  };
}
