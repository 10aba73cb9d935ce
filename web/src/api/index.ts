// src/api: the one module that talks to the server. Components import
// the calls (api), the reads as TanStack Query options (queries), and the
// wire types from here.
export { api, type Ref, type TabAt } from "./endpoints";
export { ApiError, errorText, isAbort, problemText, signInPath, unreachable, type Precondition } from "./client";
export { keys, queries, queryClient } from "./queries";
export type * from "./types";
