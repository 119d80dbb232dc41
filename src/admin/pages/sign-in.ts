import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import type { LoginThrottle } from '../../auth/login-throttle.js';
import type { SessionRevocations } from '../../auth/session-revocations.js';
import type { AdminAuth } from '../admin-auth.js';
import { type AdminGuard, adminOf, clientOf, TOO_MANY_ATTEMPTS_MESSAGE } from '../guard.js';
import { loginFormSchema, safeNextPath } from '../schemas.js';
import { loginPage } from '../views/login.js';
import { messagePage } from '../views/misc-pages.js';
import { doneMessage, send } from './kit.js';

export interface SignInDeps {
  auth: AdminAuth;
  guard: AdminGuard;
  revocations: SessionRevocations;
  throttle: LoginThrottle;
  showLogin: (req: Request, res: Response, next: NextFunction) => void;
}

/** The pages' CSRF check: a form that fails it gets a page saying so, not JSON. */
export function pageCsrfOf(guard: AdminGuard): RequestHandler {
  return guard.requireCsrf((_req, res) => {
    send(
      res,
      messagePage({
        title: 'Form expired',
        message:
          'This form was not sent by the admin page, or your session changed. Go back, reload the page and try again.',
        signedIn: adminOf(res) !== null,
        csrfToken: adminOf(res)?.csrfToken ?? null,
      }),
      403,
    );
  });
}

/** The login form is open to anyone; logging out needs the admin and the form's CSRF token. */
export function addSignInRoutes(router: Router, deps: SignInDeps, pageCsrf: RequestHandler): void {
  const { auth, guard, revocations, throttle, showLogin } = deps;
  router.get('/login', (req, res) => {
    if (adminOf(res)) return res.redirect(303, '/admin');
    const next = typeof req.query.next === 'string' ? safeNextPath(req.query.next) : '/admin';
    send(res, loginPage({ next, notice: doneMessage(req) }));
  });

  router.post('/login', async (req, res) => {
    const client = clientOf(req);
    const form = loginFormSchema.safeParse(req.body ?? {});
    const next = safeNextPath(form.success ? form.data.next : undefined);
    const admin = form.success ? auth.adminFor(form.data.token) : null;
    const verdict = await throttle.judge(client, admin !== null);
    if (verdict.kind === 'throttled') {
      res.set('Retry-After', String(verdict.retryAfterSeconds));
      return send(res, loginPage({ next, error: TOO_MANY_ATTEMPTS_MESSAGE }), 429);
    }
    if (verdict.kind === 'refused') {
      return send(
        res,
        loginPage({ next, error: 'That is not the admin token. Check ADMIN_TOKEN and try again.' }),
        401,
      );
    }
    await throttle.reset(client);
    const { session, cookieValue } = auth.issueSession(admin?.name ?? null);
    res.append('Set-Cookie', auth.sessionCookie(cookieValue, session));
    res.append('Set-Cookie', auth.xsrfCookie(session));
    res.redirect(303, next);
  });

  router.post('/logout', guard.requirePage(showLogin), pageCsrf, async (_req, res) => {
    const session = adminOf(res)?.session;
    if (session) await revocations.revoke(session.id, session.expiresAt);
    for (const cookie of auth.clearedCookies()) res.append('Set-Cookie', cookie);
    res.redirect(303, '/admin/login?done=logged-out');
  });
}
