import { useEffect } from "react";
import { useQuery } from "@tanstack/react-query";
import { queries, queryClient, type TabContent } from "../api";
import type { RemoteChange } from "../live";

type Follow = {
  noteId: string;
  content: TabContent; // the tab as its view opened on it
  remote: RemoteChange | null;
  // touches says whether a write changed what the view shows.
  touches: (r: RemoteChange) => boolean;
  seen?: (v: number) => void; // every write's version, whatever it changed
};

// useFollowedTab is a tab whose view shows the server's copy as it is (no
// working copy of its own): its query, starting from what the view opened
// on, read again whenever a write the page learns of touches it (a sheet
// tab: its outline, without the cells).
export function useFollowedTab({ noteId, content, remote, touches, seen }: Follow) {
  const { tab_id: tab, type } = content;
  const q = useQuery({ ...queries.opening(noteId, tab, type), initialData: content, refetchOnMount: false });
  const touched = remote && touches(remote) ? remote.seq : 0;
  const version = remote?.version;
  useEffect(() => {
    if (version !== undefined) seen?.(version);
  }, [version, seen]);
  useEffect(() => {
    if (touched) void queryClient.refetchQueries({ queryKey: queries.opening(noteId, tab, type).queryKey, exact: true });
  }, [touched, noteId, tab, type]);
  return { q, reload: () => queryClient.refetchQueries({ queryKey: queries.opening(noteId, tab, type).queryKey, exact: true }) };
}
