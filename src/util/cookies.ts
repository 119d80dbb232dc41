/** The cookies this app sets: every value is base64url and dots, so nothing needs encoding either way. */

export interface CookieAttributes {
  path: string;
  maxAgeSeconds: number;
  httpOnly: boolean;
  sameSite: 'Strict' | 'Lax';
  /** Set when the app is served over https. */
  secure: boolean;
}

/** A `Set-Cookie` header value. */
export function serializeCookie(name: string, value: string, a: CookieAttributes): string {
  const attributes = [
    `${name}=${value}`,
    `Path=${a.path}`,
    `Max-Age=${a.maxAgeSeconds}`,
    `SameSite=${a.sameSite}`,
  ];
  if (a.httpOnly) attributes.push('HttpOnly');
  if (a.secure) attributes.push('Secure');
  return attributes.join('; ');
}

/** Reads one cookie from a Cookie header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
