import type { LocalSystem } from '../../local/system.js';

/** Signs in to the admin page with the system's token: the session cookie and the CSRF token its forms carry. */
export async function adminLogin(system: LocalSystem): Promise<{ cookie: string; csrf: string }> {
  const res = await fetch(`${system.appUrl}/admin/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: system.ctx.config.adminToken, next: '/admin' }).toString(),
    redirect: 'manual',
  });
  const cookie = res.headers
    .getSetCookie()
    .find((c) => c.startsWith('rc_admin_session='))!
    .split(';')[0]!;
  const page = await (await fetch(`${system.appUrl}/admin`, { headers: { cookie } })).text();
  return { cookie, csrf: /name="_csrf" value="([^"]+)"/.exec(page)![1]! };
}
