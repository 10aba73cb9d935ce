import { useEffect, useState } from "react";
import type { ApiError } from "../api";
import { Saver, type SaverHooks } from "./saver";

export type SaveOptions = {
  version: number; // the Note's version the view was read at
  onVersion?: (v: number) => void;
  // outlive: the writes queued go on (and retry) after the view is gone,
  // as a sheet's edits do; otherwise leaving stops the retries.
  outlive?: boolean;
};

export type Save = {
  saver: Saver;
  busy: number; // writes queued or under way
  retrying: ApiError | null; // why a write waits to go again
};

// useSave is a view's save path: one Saver for the view's life, its hooks
// kept current, and what it is doing as state to render.
export function useSave(opts: SaveOptions): Save {
  const [saver] = useState(() => new Saver(opts.version));
  const [busy, setBusy] = useState(0);
  const [retrying, setRetrying] = useState<ApiError | null>(null);
  const { onVersion, outlive } = opts;
  useEffect(() => {
    const hooks: SaverHooks = { onVersion, onBusy: setBusy, onRetrying: setRetrying };
    saver.listen(hooks);
  }, [saver, onVersion]);
  useEffect(() => {
    saver.reopen();
    return () => {
      if (!outlive) saver.close();
    };
  }, [saver, outlive]);
  return { saver, busy, retrying };
}
