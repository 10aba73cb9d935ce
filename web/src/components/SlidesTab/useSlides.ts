import { useEffect, useState, useSyncExternalStore } from "react";
import { useSave } from "../../save";
import { DeckSession } from "./session";
import type { TabProps } from "../tab";

// useSlides is a slides tab's session (made once per tab) and its deck as
// state: the header's save state follows it, and the page's live changes
// are handed to it.
export function useSlides(p: TabProps) {
  const { saver } = useSave({ version: p.content.version, onVersion: p.onVersion });
  const [session] = useState(() => new DeckSession(p, saver));
  const deck = useSyncExternalStore(session.subscribe, session.snapshot);
  useEffect(() => {
    session.update(p);
  });
  useEffect(() => session.mount(), [session]);
  const { remote, onState } = p;
  useEffect(() => {
    if (remote) session.heard(remote);
  }, [session, remote]);
  const state = DeckSession.state(deck);
  useEffect(() => {
    onState(state);
  }, [state, onState]);
  return { session, deck };
}
