import { QueryClient, infiniteQueryOptions, queryOptions } from "@tanstack/react-query";
import { ApiError, setCSRF } from "./client";
import { api } from "./endpoints";

// The server's state as the page holds it: one QueryClient for the app,
// the reads by key, and each read's options. The Note's live stream
// (src/live) invalidates what a write changed.

export const keys = {
  me: ["me"] as const,
  notes: (query: string) => ["notes", query] as const,
  allNotes: ["notes"] as const,
  trash: ["trash"] as const,
  note: (id: string) => ["note", id] as const, // its title, version and tab strip
  tab: (id: string, tab: string) => ["note", id, "tab", tab] as const,
  outline: (id: string, tab: string) => ["note", id, "tab", tab, "outline"] as const,
  history: (id: string) => ["note", id, "history"] as const, // its pages, newest first
  diff: (id: string, v: number, since: number) => ["note", id, "version", v, "diff", since] as const,
  version: (id: string, v: number) => ["note", id, "version", v] as const,
  versionTab: (id: string, v: number, tab: string) => ["note", id, "version", v, "tab", tab] as const,
  connections: ["connections"] as const,
  people: ["people"] as const,
  workspace: ["workspace"] as const,
  tokens: ["tokens"] as const,
  proposals: ["proposals", "pending"] as const,
  proposal: (id: string) => ["proposal", id] as const,
  rooms: ["rooms"] as const,
  room: (id: string) => ["room", id] as const,
  bundle: (room: string, instance: string) => ["room", room, "bundle", instance] as const,
};

export const queries = {
  // Who is signed in, and the session's CSRF token every write carries.
  me: () =>
    queryOptions({
      queryKey: keys.me,
      queryFn: () =>
        api.me().then((m) => {
          setCSRF(m.csrf_token);
          return m;
        }),
      staleTime: Infinity,
    }),
  notes: (query: string) =>
    infiniteQueryOptions({
      queryKey: keys.notes(query),
      queryFn: ({ pageParam, signal }) => api.notes(query, pageParam, signal),
      initialPageParam: "",
      getNextPageParam: (last) => last.next_cursor || undefined,
    }),
  trash: () =>
    infiniteQueryOptions({
      queryKey: keys.trash,
      queryFn: ({ pageParam, signal }) => api.trash(pageParam, signal),
      initialPageParam: "",
      getNextPageParam: (last) => last.next_cursor || undefined,
    }),
  note: (id: string) => queryOptions({ queryKey: keys.note(id), queryFn: ({ signal }) => api.note(id, signal) }),
  // A tab's content is read fresh each time its view opens; the view then
  // owns the working copy and reads again when the live stream says the
  // tab changed.
  tab: (id: string, tab: string) => queryOptions({ queryKey: keys.tab(id, tab), queryFn: ({ signal }) => api.tab({ id, tab_id: tab }, signal) }),
  outline: (id: string, tab: string) =>
    queryOptions({ queryKey: keys.outline(id, tab), queryFn: ({ signal }) => api.outline({ id, tab_id: tab }, signal) }),
  // opening is the read a tab's view opens on: a sheet tab's outline, any
  // other tab whole.
  opening: (id: string, tab: string, type: string) =>
    queryOptions({
      queryKey: type === "sheet" ? keys.outline(id, tab) : keys.tab(id, tab),
      queryFn: ({ signal }) => (type === "sheet" ? api.outline({ id, tab_id: tab }, signal) : api.tab({ id, tab_id: tab }, signal)),
    }),
  // The history a page at a time, newest first: the live stream reads
  // the pages loaded again, each from the cursor the page before gives.
  history: (id: string) =>
    infiniteQueryOptions({
      queryKey: keys.history(id),
      queryFn: ({ pageParam, signal }) => api.history(id, pageParam, signal),
      initialPageParam: "",
      getNextPageParam: (last) => last.next_cursor || undefined,
    }),
  // What a version (or a run of versions, since an older one) changed:
  // that never changes either.
  diff: (id: string, v: number, since: number) =>
    queryOptions({ queryKey: keys.diff(id, v, since), queryFn: ({ signal }) => api.diff(id, v, since, signal), staleTime: Infinity }),
  // A version never changes.
  version: (id: string, v: number) =>
    queryOptions({ queryKey: keys.version(id, v), queryFn: ({ signal }) => api.version(id, v, signal), staleTime: Infinity }),
  versionTab: (id: string, v: number, tab: string) =>
    queryOptions({ queryKey: keys.versionTab(id, v, tab), queryFn: ({ signal }) => api.versionTab(id, v, tab, signal), staleTime: Infinity }),
  connections: () => queryOptions({ queryKey: keys.connections, queryFn: () => api.connections().then((r) => r.connections ?? []) }),
  people: () => queryOptions({ queryKey: keys.people, queryFn: ({ signal }) => api.people(signal).then((r) => r.people ?? []) }),
  workspace: () => queryOptions({ queryKey: keys.workspace, queryFn: ({ signal }) => api.workspace(signal) }),
  tokens: () => queryOptions({ queryKey: keys.tokens, queryFn: ({ signal }) => api.tokens(signal).then((r) => r.tokens ?? []) }),
  // The pending proposals, read again when the pending count changes.
  proposals: (pending: number | null) =>
    queryOptions({ queryKey: [...keys.proposals, pending], queryFn: ({ signal }) => api.pendingProposals(signal).then((r) => r.proposals ?? []) }),
  proposal: (id: string) =>
    queryOptions({ queryKey: keys.proposal(id), queryFn: ({ signal }) => api.proposal(id, signal).then((d) => ({ ...d, files: d.files ?? [] })) }),
  rooms: () => queryOptions({ queryKey: keys.rooms, queryFn: ({ signal }) => api.rooms(signal).then((r) => (Array.isArray(r.rooms) ? r.rooms : [])) }),
  room: (id: string) =>
    queryOptions({
      queryKey: keys.room(id),
      queryFn: ({ signal }) =>
        api.room(id, signal).then((room) => ({ ...room, apps: Array.isArray(room.apps) ? [...room.apps].sort((a, b) => a.position - b.position) : [] })),
    }),
  bundle: (room: string, instance: string) =>
    queryOptions({ queryKey: keys.bundle(room, instance), queryFn: ({ signal }) => api.bundle(room, instance, signal), staleTime: Infinity, gcTime: 0 }),
};

// queryClient is the app's one cache. A read is tried again only when the
// server could not be reached (a refusal is shown at once, with Try
// again); nothing is read again just because the window got focus: the
// live stream says what changed.
export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      retry: (failures, e) => e instanceof ApiError && e.status === 0 && failures < 2,
      refetchOnWindowFocus: false,
      refetchOnReconnect: false,
      staleTime: 0,
    },
  },
});
