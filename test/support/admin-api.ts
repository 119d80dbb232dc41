import { expect } from 'vitest';
import type { LocalSystem } from '../../local/system.js';
import type { InstallationView } from '../../src/admin/overview.js';

/** Calls to a test system's admin page and JSON API, as a script or a browser without JavaScript makes them. */

export interface AdminAnswer<T> {
  status: number;
  headers: Headers;
  /** The parsed JSON answer, typed as the route documents it (not checked: the assertions do that). */
  body: T;
  text: string;
}

export interface AdminApiError {
  error: string;
  code: string;
}

export interface AdminRequest {
  /** GET without a body, POST with one, unless named. */
  method?: string;
  json?: unknown;
  form?: Record<string, string> | URLSearchParams;
  headers?: Record<string, string>;
  /** Sends the admin token as a bearer token, unless the request carries a cookie or authorization of its own. */
  bearer?: boolean;
}

/** One request, redirects not followed; the body is parsed when the answer says it is JSON. */
export async function adminRequest<T = AdminApiError>(
  system: LocalSystem,
  path: string,
  o: AdminRequest = {},
): Promise<AdminAnswer<T>> {
  const headers: Record<string, string> = { ...o.headers };
  if (o.bearer && !headers.cookie && !headers.authorization) {
    headers.authorization = `Bearer ${system.ctx.config.adminToken}`;
  }
  let body: string | undefined;
  if (o.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(o.json);
  } else if (o.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(o.form).toString();
  }
  const res = await fetch(`${system.appUrl}${path}`, {
    method: o.method ?? (body === undefined ? 'GET' : 'POST'),
    headers,
    body,
    redirect: 'manual',
  });
  const text = await res.text();
  const json: unknown = (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : null;
  return { status: res.status, headers: res.headers, body: json as T, text };
}

/** `GET /admin/api/installations/:id` with the bearer token: the installation as the admin page shows it. */
export async function installationView(
  system: LocalSystem,
  installationId = system.installationId,
): Promise<InstallationView> {
  const res = await fetch(`${system.appUrl}/admin/api/installations/${installationId}`, {
    headers: { authorization: `Bearer ${system.ctx.config.adminToken}` },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as InstallationView;
}
