import type { NextFunction, Request, Response, Router } from 'express';
import { isRedisUnavailable } from '../../redis-availability.js';
import { AdminRequestError } from '../errors.js';
import { adminOf } from '../guard.js';
import { bodyError } from '../http-errors.js';
import { messagePage } from '../views/misc-pages.js';
import { csrf, type PageKit, send } from './kit.js';

/** After every page: an unknown page, then the error page (a refusal's reason, or ours logged). */
export function addPageFallbacks(pages: Router, kit: PageKit): void {
  const { ctx } = kit;
  pages.use((req, res, next) => {
    // /admin/api and /admin/queues are matched before this router; anything else here is an unknown page.
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    send(
      res,
      messagePage({
        title: 'Page not found',
        message: 'There is no such admin page.',
        signedIn: true,
        csrfToken: csrf(res),
      }),
      404,
    );
  });

  pages.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
    const known = err instanceof AdminRequestError ? err : bodyError(err);
    if (!known) {
      // Redis away: the admin router answers 503 with its own page.
      if (res.headersSent || isRedisUnavailable(err, ctx.redis)) return next(err);
      // A fault of ours: logged with its stack for the operator, and a page (not JSON) for the person.
      ctx.logger.error({ err }, 'admin page failed');
      const message =
        'Something went wrong on the connector’s side. The details are in its log; try again in a moment.';
      send(
        res,
        messagePage({ title: 'Error', message, signedIn: adminOf(res) !== null, csrfToken: csrf(res) }),
        500,
      );
      return;
    }
    const title = known.status === 404 ? 'Not found' : 'That did not work';
    send(
      res,
      messagePage({ title, message: known.message, signedIn: adminOf(res) !== null, csrfToken: csrf(res) }),
      known.status,
    );
  });
}
