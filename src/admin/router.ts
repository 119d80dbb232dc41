import { type Request, type Response, Router } from 'express';
import type { AppContext } from '../app/context.js';
import type { InstallationService } from '../app/installation-service.js';
import { AdminActions } from './admin-actions.js';
import { AdminAuth } from './admin-auth.js';
import { adminApiRouter } from './api-routes.js';
import { assetsRouter } from './assets.js';
import { bullBoardRouter } from './bull-board.js';
import { EnvKeyCheck } from './env-key-check.js';
import { AdminGuard } from './guard.js';
import { LoginThrottle } from './login-throttle.js';
import { AdminOverview } from './overview.js';
import { adminPageRouter } from './page-routes.js';
import { safeNextPath } from './schemas.js';
import { adminPageHeaders, bullBoardHeaders, noStore } from './security-headers.js';
import { SessionRevocations } from './session-revocations.js';
import { loginPage } from './views/login.js';

/**
 * Everything under /admin: the page for the person who installed the app, its JSON API (/admin/api, see
 * api-routes.ts), the job-queue dashboard (/admin/queues) and the page's stylesheet and script
 * (/admin/assets). Mounted at the root by the server; it answers nothing outside /admin.
 */
export function createAdminRouter(ctx: AppContext, service: InstallationService): Router {
  const secure = ctx.config.appUrl.startsWith('https:');
  const auth = new AdminAuth({
    adminToken: ctx.config.adminToken,
    encryptionKey: ctx.config.encryptionKey,
    secureCookies: secure,
  });
  const revocations = new SessionRevocations(ctx.redis, ctx.config.redisPrefix);
  const guard = new AdminGuard(auth, revocations);
  const envKey = new EnvKeyCheck(() => ctx.runtime.clientForKey(ctx.config.reports.apiKey ?? ''));
  const overview = new AdminOverview(ctx, envKey);
  const actions = new AdminActions(ctx, service);
  const throttle = new LoginThrottle(ctx.redis, ctx.config.redisPrefix);
  const showLogin = (req: Request, res: Response) => {
    res
      .status(200)
      .type('html')
      .send(loginPage({ next: req.method === 'GET' ? safeNextPath(req.originalUrl) : '/admin' }).value);
  };

  const admin = Router();
  admin.use(
    '/queues',
    bullBoardHeaders(secure),
    noStore,
    guard.identify,
    bullBoardRouter({ ctx, auth, guard, showLogin }),
  );
  admin.use(adminPageHeaders(secure));
  admin.use(assetsRouter());
  admin.use(noStore, guard.identify);
  admin.use('/api', adminApiRouter({ ctx, guard, actions, overview }));
  admin.use(adminPageRouter({ ctx, auth, guard, actions, overview, revocations, throttle, showLogin }));

  const router = Router();
  router.use('/admin', admin);
  return router;
}
