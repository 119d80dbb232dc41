import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { type NextFunction, type Request, type RequestHandler, type Response, Router } from 'express';
import type { AppContext } from '../app/context.js';
import { type AdminAuth, BULL_BOARD_PATH } from './admin-auth.js';
import { type AdminGuard, adminOf } from './guard.js';

/**
 * bull-board's dashboard of the three BullMQ queues at /admin/queues, behind the admin's login. Its UI calls
 * its own API with axios, which echoes the `XSRF-TOKEN` cookie as `X-XSRF-TOKEN`: that is how its retries
 * and deletions carry the session's CSRF token.
 */

export interface BullBoardDeps {
  ctx: AppContext;
  auth: AdminAuth;
  guard: AdminGuard;
  showLogin: (req: Request, res: Response, next: NextFunction) => void;
}

export function bullBoardRouter({ ctx, auth, guard, showLogin }: BullBoardDeps): Router {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(BULL_BOARD_PATH);
  createBullBoard({
    queues: ctx.queues.all().map((q) => new BullMQAdapter(q)),
    serverAdapter,
    options: {
      uiConfig: {
        boardTitle: 'Report connector queues',
        hideDocsLink: true,
        miscLinks: [{ text: 'Back to the admin page', url: '/admin' }],
      },
    },
  });
  const router = Router();
  router.use((req, res, next) => {
    if (adminOf(res)) return next();
    // The dashboard's own API calls get a plain 401; a person gets the login form.
    if (req.path.startsWith('/api/')) {
      res.status(401).json({ error: 'Log in on /admin first.', code: 'UNAUTHENTICATED' });
      return;
    }
    showLogin(req, res, next);
  });
  router.use(
    guard.requireCsrf((_req, res) => {
      res
        .status(403)
        .json({ error: 'The CSRF token is missing or wrong: reload the page.', code: 'CSRF_REJECTED' });
    }),
  );
  router.use((_req, res, next) => {
    const session = adminOf(res)?.session;
    if (session) res.append('Set-Cookie', auth.xsrfCookie(session));
    next();
  });
  router.use(backToAdmin);
  router.use(serverAdapter.getRouter() as Router);
  return router;
}

/**
 * bull-board puts `miscLinks` in a menu behind an icon, where nobody finds them: its page also gets a plain
 * link back to the admin, first in the body (reached by the first Tab) and pinned to the corner.
 */
const BACK_LINK =
  '<a href="/admin" id="rc-back-to-admin" style="position:fixed;right:1rem;bottom:1rem;z-index:1000;' +
  'background:#fff;color:#1a4d8f;border:1px solid #1a4d8f;border-radius:4px;padding:0.4rem 0.8rem;' +
  'font:600 14px/1.4 system-ui,sans-serif">\u2190 Back to the admin</a>';

const backToAdmin: RequestHandler = (req, res, next) => {
  if (req.method !== 'GET' || req.path.startsWith('/api/') || req.path.startsWith('/static/')) return next();
  const send = res.send.bind(res);
  res.send = (body?: unknown) => {
    if (typeof body === 'string' && body.includes('<body')) {
      return send(body.replace(/<body[^>]*>/, (open) => `${open}${BACK_LINK}`));
    }
    return send(body);
  };
  next();
};
