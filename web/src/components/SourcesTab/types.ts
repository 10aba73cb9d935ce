// MaxURL and MaxTitle bound what is typed here; the server has its own rules.
export const MaxURL = 2048;
export const MaxTitle = 300;

// defaultTitle names a page by its address when no title is given.
export function defaultTitle(u: string): string {
  try {
    const x = new URL(u);
    const path = x.pathname.replace(/\/+$/, "");
    return (x.hostname + path).slice(0, MaxTitle) || u.slice(0, MaxTitle);
  } catch {
    return u.slice(0, MaxTitle);
  }
}

// safeURL keeps only web addresses as links.
export function safeURL(u: string): string | undefined {
  return /^https?:\/\//i.test(u) ? u : undefined;
}
