import { Component, Suspense, lazy, useState, type ComponentType, type ReactNode } from "react";
import { ErrorBox, Loading } from "../ui";

// lazyView is a view whose code (a tab's editor: CodeMirror, the grid,
// the slides editor; the approvals page and its highlighter) is a chunk
// of its own, fetched with import() when it is first shown, so that the
// pages which do not show it never download it. While the chunk loads the
// view says so; a chunk that does not arrive (the network, a server
// updated since the page loaded) says what failed, with a button that
// fetches it again.
export function lazyView<P extends object>(what: string, load: () => Promise<ComponentType<P>>): ComponentType<P> {
  const fetchView = () =>
    load().then(
      (View) => ({ default: View }),
      (err: unknown) => {
        throw new ChunkError(err instanceof Error ? err.message : String(err));
      },
    );
  function LazyView(props: P) {
    const [View, setView] = useState(() => lazy(fetchView));
    return (
      <ChunkBoundary what={what} onRetry={() => setView(() => lazy(fetchView))}>
        <Suspense fallback={<Loading what={`Loading the ${what}…`} />}>
          <View {...props} />
        </Suspense>
      </ChunkBoundary>
    );
  }
  LazyView.displayName = `lazyView(${what})`;
  return LazyView;
}

// ChunkError is a chunk that did not load.
class ChunkError extends Error {}

type BoundaryProps = { what: string; onRetry: () => void; children: ReactNode };

// ChunkBoundary shows a chunk's failure to load in place of the view, and
// its retry; any other error goes on up.
class ChunkBoundary extends Component<BoundaryProps, { failed: unknown }> {
  state: { failed: unknown } = { failed: null };

  static getDerivedStateFromError(err: unknown) {
    return { failed: err };
  }

  render() {
    const { failed } = this.state;
    if (failed === null) return this.props.children;
    if (!(failed instanceof ChunkError)) throw failed;
    return (
      <ErrorBox
        text={`The ${this.props.what} could not be loaded (${failed.message}). Check the connection and try again; if it keeps failing, reload the page.`}
        onRetry={() => {
          this.setState({ failed: null });
          this.props.onRetry();
        }}
      />
    );
  }
}
