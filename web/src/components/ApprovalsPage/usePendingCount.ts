import { useEffect, useState } from "react";
import { api } from "../../api";

// usePendingCount is how many proposals wait for this person's decision,
// live: the server's event stream, or a poll of the count when the stream
// cannot be opened. null until the first answer.
export function usePendingCount(): number | null {
  const [count, setCount] = useState<number | null>(null);
  useEffect(() => {
    let stopped = false;
    let timer: number | undefined;
    let source: EventSource | null = null;
    const poll = () => {
      api
        .pendingCount()
        .then((r) => {
          if (!stopped && typeof r?.pending === "number") setCount(r.pending);
        })
        .catch(() => {});
    };
    const startPolling = () => {
      if (timer !== undefined) return;
      poll();
      timer = window.setInterval(poll, 15000);
    };
    if (typeof EventSource === "function") {
      source = api.proposalEvents();
      source.addEventListener("count", (e) => {
        try {
          const d = JSON.parse((e as MessageEvent<string>).data);
          if (!stopped && typeof d?.pending === "number") setCount(d.pending);
        } catch {
          // A malformed event changes nothing.
        }
      });
      source.onerror = () => {
        // Closed: the stream is refused (not reconnecting), so poll.
        // Reconnecting: ask once meanwhile.
        if (source && source.readyState === EventSource.CLOSED) startPolling();
        else poll();
      };
    } else {
      startPolling();
    }
    return () => {
      stopped = true;
      source?.close();
      if (timer !== undefined) window.clearInterval(timer);
    };
  }, []);
  return count;
}
