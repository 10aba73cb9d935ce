import { useEffect, useState } from "react";
import { api } from "../../api";
import { pageLive, PROPOSALS } from "../../live";

// POLL_MS is how often the count is asked for while live updates are
// stopped.
const POLL_MS = 15000;

// usePendingCount is how many proposals wait for this person's decision,
// live: the proposals topic of the page's one live connection, or a poll
// of the count while live updates are stopped (and one ask while the
// stream reconnects). null until the first answer.
export function usePendingCount(): number | null {
  const [count, setCount] = useState<number | null>(null);
  useEffect(() => {
    let over = false;
    let timer: number | undefined;
    let wasLive = false; // the stream was live: a reconnect asks once meanwhile
    const poll = () => {
      api
        .pendingCount()
        .then((r) => {
          if (!over && typeof r?.pending === "number") setCount(r.pending);
        })
        .catch(() => {});
    };
    const live = pageLive();
    const off = live.subscribe(PROPOSALS, (m) => {
      if (m.t === "proposals") setCount(m.pending);
    });
    const unwatch = live.watch((s) => {
      if (s.state === "stopped") {
        if (timer === undefined) {
          poll();
          timer = window.setInterval(poll, POLL_MS);
        }
        return;
      }
      window.clearInterval(timer);
      timer = undefined;
      if (s.state === "live") wasLive = true;
      else if (wasLive) {
        wasLive = false;
        poll();
      }
    });
    return () => {
      over = true;
      off();
      unwatch();
      window.clearInterval(timer);
    };
  }, []);
  return count;
}
