/**
 * A browser's cookies for tests that walk an OAuth flow by hand: what a response sets (name=value, Max-Age=0
 * deletes) is sent with every later request of the same jar. Paths and domains are not tracked: every test
 * talks to one app.
 */
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  /** `fetch` without following redirects, carrying and updating this jar's cookies. */
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    const header = this.header();
    if (header) headers.set('cookie', header);
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) this.set(line);
    return res;
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  has(name: string): boolean {
    return this.cookies.has(name);
  }

  /** Takes a `Set-Cookie` value as a response would give it. */
  set(line: string): void {
    const [pair = '', ...attributes] = line.split(';').map((part) => part.trim());
    const eq = pair.indexOf('=');
    if (eq <= 0) return;
    const name = pair.slice(0, eq);
    const value = pair.slice(eq + 1);
    const deleted = attributes.some((a) => /^max-age=0$/i.test(a)) || value === '';
    if (deleted) this.cookies.delete(name);
    else this.cookies.set(name, value);
  }
}
