import { useEffect, useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { errorText, queries, type Peer, type TabContent, type TabRef } from "../../api";
import type { Presence, RemoteChange } from "../../live";
import type { SaveState } from "../../save";
import { ErrorBox, Loading } from "../../ui";
import { MarkdownTab } from "../MarkdownTab";
import { SlidesTab } from "../SlidesTab";
import { SheetTab } from "../SheetTab";
import { SourcesTab } from "../SourcesTab";
import { FilesTab } from "../FilesTab";
import type { TabProps } from "../tab";
import type { Target } from "../target";

type Props = {
  noteId: string;
  tab: TabRef;
  me: string;
  meId: string;
  remote: RemoteChange | null;
  peers: Peer[];
  presence: Presence | null;
  target: Target | null;
  onVersion: (v: number) => void;
  onState: (s: SaveState) => void;
};

// TabView opens one tab: its content read afresh (a sheet tab without its
// cells: the grid reads those in blocks as they come into view, so a large
// sheet opens at once), then the view for its type.
export function TabView(p: Props) {
  const q = useQuery({ ...queries.opening(p.noteId, p.tab.tab_id, p.tab.type), refetchOnMount: "always" });
  const { onState, onVersion } = p;
  useEffect(() => {
    onState("saved");
  }, [onState]);
  // The view opens on the read made for it, and stays open whatever later
  // reads (the view's own, as the tab changes) answer.
  const [opened, setOpened] = useState<TabContent | null>(null);
  if (opened === null && q.isSuccess && q.isFetchedAfterMount && !q.isFetching) setOpened(q.data);
  useEffect(() => {
    if (opened) onVersion(opened.version);
  }, [opened, onVersion]);

  if (opened) return <Opened content={opened} {...p} />;
  if (q.isError && !q.isFetching) return <ErrorBox text={errorText(q.error)} onRetry={() => void q.refetch()} />;
  return <Loading what={`Opening ${p.tab.label || p.tab.type}…`} />;
}

// Opened is the tab's view on the content it opened with: the view owns
// its working copy from then on.
function Opened({ content, ...p }: Props & { content: TabContent }) {
  const tp: TabProps = {
    noteId: p.noteId,
    content,
    me: p.me,
    meId: p.meId,
    remote: p.remote,
    peers: p.peers,
    presence: p.presence,
    onVersion: p.onVersion,
    onState: p.onState,
    target: p.target,
  };
  switch (content.type) {
    case "markdown":
      return (
        <MarkdownTab
          noteId={p.noteId}
          tabId={content.tab_id}
          label={content.label || "Note"}
          text={content.text ?? ""}
          version={content.version}
          textRev={content.text_rev ?? 0}
          me={p.me}
          remote={p.remote}
          peers={p.peers}
          presence={p.presence}
          target={p.target}
          onVersion={p.onVersion}
          onState={p.onState}
        />
      );
    case "slides":
      return <SlidesTab {...tp} />;
    case "sheet":
      return <SheetTab {...tp} />;
    case "sources":
      return <SourcesTab {...tp} />;
    case "files":
      return <FilesTab {...tp} />;
  }
  return <p className="muted">This tab's type ({content.type}) is not shown here yet.</p>;
}
