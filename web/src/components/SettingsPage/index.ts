import "./settings.css";

// The Settings pages: the workspace's people, the personal access tokens
// and the workspace itself.
export { SettingsPage } from "./View";
