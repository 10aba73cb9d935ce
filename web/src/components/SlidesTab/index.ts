import { lazyView } from "../lazyView";
import type { TabProps } from "../tab";
import "./slides.css";

// The slides editor loads with the first slides tab opened.
export const SlidesTab = lazyView<TabProps>("slides editor", () => import("./View").then((m) => m.SlidesTab));
