export { useLive } from "./useLive";
export { LiveGone, LiveMarker } from "./LiveMarker";
export type { Gone, Live, RemoteChange, Writer } from "./types";
