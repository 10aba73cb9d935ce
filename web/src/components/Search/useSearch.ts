import { useEffect, useRef, useState } from "react";
import { api, errorText, isAbort, type SearchHit } from "../../api";
import { typingQuery } from "./query";

// DEBOUNCE_MS is how long typing pauses before the query is sent.
export const DEBOUNCE_MS = 150;

// Found is the answer for one query: its hits so far (pages appended),
// the cursor of the next page, or why it failed.
type Found = { query: string; hits: SearchHit[]; next: string; error: string };

const none: Found = { query: "", hits: [], next: "", error: "" };

// useSearch searches as the person types: the query (typingQuery) is sent
// once typing pauses, and a request a newer query supersedes is
// cancelled (its AbortController), so an older answer never replaces a
// newer one. Until the new answer comes the last one stays shown, marked
// stale (searching).
export function useSearch(text: string) {
  const query = typingQuery(text);
  const [found, setFound] = useState<Found>(none);
  const [moreFor, setMoreFor] = useState("");
  const more = useRef<AbortController | null>(null);

  useEffect(() => {
    if (query === "") return;
    const ctl = new AbortController();
    const t = window.setTimeout(() => {
      api.search({ query }, ctl.signal).then(
        (page) => {
          if (!ctl.signal.aborted) setFound({ query, hits: page.hits ?? [], next: page.next_cursor ?? "", error: "" });
        },
        (e: unknown) => {
          if (!ctl.signal.aborted && !isAbort(e)) setFound({ query, hits: [], next: "", error: errorText(e) });
        },
      );
    }, DEBOUNCE_MS);
    return () => {
      window.clearTimeout(t);
      ctl.abort();
      more.current?.abort();
    };
  }, [query]);

  // loadMore reads the next page of the shown query's hits.
  const loadMore = () => {
    const cur = found;
    if (!cur.next || cur.query !== query || moreFor === cur.next) return;
    more.current?.abort();
    const ctl = new AbortController();
    more.current = ctl;
    setMoreFor(cur.next);
    api.search({ query: cur.query, cursor: cur.next }, ctl.signal).then(
      (page) => {
        if (ctl.signal.aborted) return;
        setFound((f) => (f.query === cur.query && f.next === cur.next ? { ...f, hits: [...f.hits, ...(page.hits ?? [])], next: page.next_cursor ?? "" } : f));
        setMoreFor("");
      },
      (e: unknown) => {
        if (ctl.signal.aborted || isAbort(e)) return;
        setFound((f) => (f.query === cur.query ? { ...f, error: errorText(e) } : f));
        setMoreFor("");
      },
    );
  };

  const shown = query === "" ? none : found;
  return {
    query,
    hits: shown.hits,
    next: shown.query === query ? shown.next : "",
    error: shown.query === query ? shown.error : "",
    // searching: the hits shown are not (yet) the answer for what is typed.
    searching: query !== "" && shown.query !== query,
    loadingMore: moreFor !== "" && moreFor === shown.next,
    loadMore,
  };
}
