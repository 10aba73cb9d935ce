export { useLive } from "./useLive";
export { LiveGone, LiveMarker } from "./LiveMarker";
export { pageLive } from "./connection";
export { PROPOSALS, noteTopic } from "./protocol";
export type { Gone, Live, RemoteChange, Writer } from "./types";
export { usePresence, Presence, validColor, inkOn, type Where } from "./presence";
