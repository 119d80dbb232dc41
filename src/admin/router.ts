import { type NextFunction, type Request, type RequestHandler, type Response, Router } from 'express';
import type { AppContext } from '../app/context.js';
import type { InstallationService } from '../app/installation-service.js';
import {
  isRedisUnavailable,
  REDIS_UNAVAILABLE_CODE,
  REDIS_UNAVAILABLE_MESSAGE,
  redisReady,
  within,
} from '../redis-availability.js';
import { AdminActions } from './admin-actions.js';
import { AdminAuth } from './admin-auth.js';
import { adminApiRouter } from './api-routes.js';
import { assetsRouter } from './assets.js';
import { bullBoardRouter } from './bull-board.js';
import { EnvKeyCheck } from './env-key-check.js';
import { AdminGuard } from './guard.js';
import { AdminOverview } from './overview.js';
import { adminPageRouter } from './page-routes.js';
import { safeNextPath } from './schemas.js';
import { adminPageHeaders, bullBoardHeaders, noStore } from './security-headers.js';
import type { AdminLink } from './views/dashboard.js';
import { installedNotice, loginPage } from './views/login.js';
import { messagePage } from './views/misc-pages.js';

/**
 * Everything under /admin: the page for the person who installed the app, its JSON API (/admin/api, see
 * api-routes.ts), the job-queue dashboard (/admin/queues) and the page's stylesheet and script
 * (/admin/assets). Mounted at the root by the server; it answers nothing outside /admin.
 */
/** How long the admin page waits for Redis to answer a ping before it says Redis is unreachable. */
export const REDIS_CHECK_MS = 1_500;

export function createAdminRouter(
  ctx: AppContext,
  service: InstallationService,
  links: readonly AdminLink[] = [],
): Router {
  const secure = ctx.config.appUrl.startsWith('https:');
  const auth = new AdminAuth({
    adminToken: ctx.config.adminToken,
    adminTokens: ctx.config.adminTokens,
    encryptionKey: ctx.config.encryptionKey,
    secureCookies: secure,
  });
  const { revocations, loginThrottle: throttle } = ctx.stores;
  const guard = new AdminGuard(auth, revocations, throttle);
  const envKey = new EnvKeyCheck(() => ctx.runtime.clientForKey(ctx.config.reports.apiKey ?? ''));
  const overview = new AdminOverview(ctx, envKey);
  const actions = new AdminActions(ctx, service);
  const showLogin = (req: Request, res: Response, fail: NextFunction) => {
    const next = req.method === 'GET' ? safeNextPath(req.originalUrl) : '/admin';
    installedNotice(next, (id) => ctx.installations.exists(id)).then((notice) => {
      res.status(200).type('html').send(loginPage({ next, notice }).value);
    }, fail);
  };

  const redisGate = redisGateOf(ctx);

  const admin = Router();
  admin.use(
    '/queues',
    bullBoardHeaders(secure),
    noStore,
    redisGate,
    guard.identify,
    bullBoardRouter({ ctx, auth, guard, showLogin }),
  );
  admin.use(adminPageHeaders(secure));
  admin.use(assetsRouter());
  admin.use(noStore, redisGate, guard.identify);
  admin.use('/api', adminApiRouter({ ctx, guard, actions, overview }));
  admin.use(
    adminPageRouter({ ctx, auth, guard, actions, overview, revocations, throttle, showLogin, links }),
  );
  // Redis lost in the middle of a request (or hung past the command timeout): the same 503, never a 500.
  admin.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent || !isRedisUnavailable(err, ctx.redis)) return next(err);
    ctx.logger.warn({ err }, 'admin request refused: Redis is unreachable');
    refuseUnavailable(req, res);
  });

  const router = Router();
  router.use('/admin', admin);
  return router;
}

/** 503 with a sentence, as JSON for scripts and as a page for a person. */
function refuseUnavailable(req: Request, res: Response): void {
  res.status(503).set('Retry-After', '5');
  if (wantsJson(req)) {
    res.json({ error: REDIS_UNAVAILABLE_MESSAGE, code: REDIS_UNAVAILABLE_CODE });
    return;
  }
  res.type('html').send(
    messagePage({
      title: 'Redis is unreachable',
      message: REDIS_UNAVAILABLE_MESSAGE,
      signedIn: false,
      csrfToken: null,
    }).value,
  );
}

/**
 * Checked before anything touches Redis: a lost connection is seen from its status at once, a hung Redis
 * (socket open, nothing answered) by a ping that must come back within REDIS_CHECK_MS. Admin traffic is
 * small, so one ping per request is cheap; without it the request would wait for Redis to come back.
 */
function redisGateOf(ctx: AppContext): RequestHandler {
  return async (req, res, next) => {
    if (redisReady(ctx.redis) && redisReady(ctx.queues.connection)) {
      try {
        await within(ctx.redis.ping(), REDIS_CHECK_MS, 'Redis');
        return next();
      } catch {
        // Falls through to the refusal.
      }
    }
    refuseUnavailable(req, res);
  };
}

/** Scripts (bearer requests, the JSON API, the queue board's API) get JSON; a browser page gets HTML. */
function wantsJson(req: Request): boolean {
  return (
    req.get('authorization') !== undefined ||
    req.originalUrl.startsWith('/admin/api') ||
    req.originalUrl.startsWith('/admin/queues/api')
  );
}
