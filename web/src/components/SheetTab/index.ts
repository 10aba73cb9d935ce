import { lazyView } from "../lazyView";
import type { TabProps } from "../tab";
import "./sheet.css";

// The sheet tab's grid (RevoGrid) loads with the first sheet tab opened.
export const SheetTab = lazyView<TabProps>("sheet editor", () => import("./View").then((m) => m.SheetTab));
