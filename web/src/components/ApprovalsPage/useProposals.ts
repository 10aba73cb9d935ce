import { useState } from "react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { errorText, queries } from "../../api";

// useProposals is the pending proposals: read at first and again whenever
// the pending count changes (a new proposal appears as its card), without
// those decided here meanwhile.
export function useProposals(pending: number | null) {
  const q = useQuery({ ...queries.proposals(pending), placeholderData: keepPreviousData });
  const [gone, setGone] = useState<ReadonlySet<string>>(new Set());
  const list = q.data ? q.data.filter((p) => !gone.has(p.proposal_id)) : null;
  return {
    list,
    error: q.isError ? errorText(q.error) : "",
    load: () => void q.refetch(),
    remove: (id: string) => setGone((g) => new Set(g).add(id)),
  };
}
