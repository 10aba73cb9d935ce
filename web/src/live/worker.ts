import { api } from "../api/endpoints";
import { Hub } from "./hub";

// The SharedWorker that holds the one live stream of every tab of this
// origin (bundled on its own as assets/live-HASH.js): each page connects a
// port and says which topics it follows (protocol.ts); the hub opens one
// stream for them all.

// The part of SharedWorkerGlobalScope used here (the app's TypeScript
// library is the page's, DOM).
type SharedScope = { onconnect: ((e: MessageEvent) => void) | null };

const hub = new Hub(api.live);

(self as unknown as SharedScope).onconnect = (e: MessageEvent) => {
  const port = e.ports[0];
  if (!port) return;
  const to = { post: (m: unknown) => port.postMessage(m) };
  let id = "";
  port.onmessage = (ev: MessageEvent) => {
    id = hub.receive(ev.data, to) || id;
  };
  // Where the browser says the page's port closed (its page went without a
  // bye), the page is dropped at once rather than after its silence.
  port.addEventListener("close", () => {
    if (id) hub.bye(id);
  });
  port.start();
};
