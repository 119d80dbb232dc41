import express, { type NextFunction, type Request, type Response, Router } from 'express';
import type { AppContext } from '../app/context.js';
import type { LoginThrottle } from '../auth/login-throttle.js';
import type { SessionRevocations } from '../auth/session-revocations.js';
import type { AdminActions } from './admin-actions.js';
import type { AdminAuth } from './admin-auth.js';
import type { AdminGuard } from './guard.js';
import { InstallationPages } from './installation-pages.js';
import type { AdminOverview } from './overview.js';
import { addDisconnectPages } from './pages/disconnect.js';
import { addPageFallbacks } from './pages/fallbacks.js';
import { addInstallationPages } from './pages/installation.js';
import type { PageKit } from './pages/kit.js';
import { addLinkForms } from './pages/links.js';
import { addOverviewPages } from './pages/overview.js';
import { addRequestForm, addRequestUpload } from './pages/requests.js';
import { addReviewForms } from './pages/review.js';
import { addSettingsForms } from './pages/settings.js';
import { addSignInRoutes, pageCsrfOf } from './pages/sign-in.js';
import { REVIEW_PAGE_SIZES } from './schemas.js';
import type { AdminLink } from './views/dashboard.js';

/**
 * The admin page, mounted at /admin: server-rendered HTML with plain forms. Every change is a POST carrying the
 * CSRF token, answered with a redirect (so reloading never repeats it) to a page that says what happened; a
 * refused change renders the page again with the reason.
 */

export interface PageRouteDeps {
  ctx: AppContext;
  auth: AdminAuth;
  guard: AdminGuard;
  actions: AdminActions;
  overview: AdminOverview;
  revocations: SessionRevocations;
  throttle: LoginThrottle;
  /** Renders the login form in place of a page that needs the admin. */
  showLogin: (req: Request, res: Response, next: NextFunction) => void;
  /** More pages of this server for the installations page to list (the demo's component previews). */
  links?: readonly AdminLink[];
}

/**
 * The body parsers, the login routes open to anyone, then the pages, each group in pages/, behind the admin
 * check and the CSRF check. Groups whose paths overlap keep their order (the bulk review before one record's).
 */
export function adminPageRouter(deps: PageRouteDeps): Router {
  const { ctx, guard, actions, overview, showLogin } = deps;
  const router = Router();
  // The bulk review form sends one field per selected record (up to the largest review page).
  router.use(
    '/installations/:id/review/bulk',
    express.urlencoded({
      extended: false,
      limit: '64kb',
      parameterLimit: Math.max(...REVIEW_PAGE_SIZES) + 8,
    }),
  );
  router.use(express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20 }));
  const pageCsrf = pageCsrfOf(guard);
  addSignInRoutes(router, deps, pageCsrf);

  // ---- everything below needs the admin -------------------------------------------------------------------
  const pages = Router();
  pages.use(guard.requirePage(showLogin), pageCsrf);
  const kit: PageKit = {
    ctx,
    actions,
    overview,
    installationPages: new InstallationPages(ctx, actions, overview),
  };
  addOverviewPages(pages, kit, deps.links ?? []);
  addInstallationPages(pages, kit);
  addSettingsForms(pages, kit);
  addReviewForms(pages, kit);
  addRequestForm(pages, kit);
  addLinkForms(pages, kit);
  addDisconnectPages(pages, kit);
  addPageFallbacks(pages, kit);

  addRequestUpload(router, guard, showLogin);
  router.use(pages);
  return router;
}
