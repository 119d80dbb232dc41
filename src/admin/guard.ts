import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { type AdminAuth, type AdminSession, cookieValue, SESSION_COOKIE } from './admin-auth.js';
import type { SessionRevocations } from './session-revocations.js';

/**
 * Who is asking, and whether they may: a request is the admin's when it carries `Authorization: Bearer
 * <ADMIN_TOKEN>` or a valid session cookie. A request that sends an Authorization header is judged by that
 * header alone. Changes made with the cookie must also carry the session's CSRF token; bearer requests cannot
 * be forged by another site, so they need none.
 */

export interface AdminIdentity {
  via: 'bearer' | 'session';
  session: AdminSession | null;
  /** The token forms must echo back; null for bearer requests. */
  csrfToken: string | null;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function adminOf(res: Response): AdminIdentity | null {
  return (res.locals.admin as AdminIdentity | undefined) ?? null;
}

export class AdminGuard {
  constructor(
    private readonly auth: AdminAuth,
    private readonly revocations: SessionRevocations,
  ) {}

  /** Sets `res.locals.admin`; refuses nothing by itself. */
  readonly identify: RequestHandler = async (req, res, next) => {
    try {
      res.locals.admin = await this.identityOf(req);
      next();
    } catch (err) {
      next(err);
    }
  };

  private async identityOf(req: Request): Promise<AdminIdentity | null> {
    const authorization = req.get('authorization');
    if (authorization !== undefined) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
      return match && this.auth.tokenMatches(match[1]!)
        ? { via: 'bearer', session: null, csrfToken: null }
        : null;
    }
    const session = this.auth.readSession(cookieValue(req.get('cookie'), SESSION_COOKIE));
    if (!session || (await this.revocations.isRevoked(session.id))) return null;
    return { via: 'session', session, csrfToken: this.auth.csrfTokenFor(session) };
  }

  /** For the JSON API: 401 without a valid token or session. */
  readonly requireApi: RequestHandler = (_req, res, next) => {
    if (adminOf(res)) return next();
    res.status(401).set('WWW-Authenticate', 'Bearer realm="report-connector admin"').json({
      error: 'Send Authorization: Bearer <ADMIN_TOKEN> or log in on /admin.',
      code: 'UNAUTHENTICATED',
    });
  };

  /** For pages: the login form instead of the page. */
  requirePage(showLogin: (req: Request, res: Response) => void): RequestHandler {
    return (req, res, next) => {
      if (adminOf(res)) return next();
      showLogin(req, res);
    };
  }

  /** Refuses a state-changing cookie request whose CSRF token is missing or wrong (403). */
  requireCsrf(refuse: (req: Request, res: Response) => void): RequestHandler {
    return (req: Request, res: Response, next: NextFunction) => {
      const admin = adminOf(res);
      if (SAFE_METHODS.has(req.method) || !admin || admin.via === 'bearer' || !admin.session) return next();
      if (this.auth.csrfMatches(admin.session, csrfTokenOf(req))) return next();
      refuse(req, res);
    };
  }
}

function csrfTokenOf(req: Request): string | undefined {
  const header = req.get('x-csrf-token') ?? req.get('x-xsrf-token');
  if (header) return header;
  const body: unknown = req.body;
  if (body && typeof body === 'object' && '_csrf' in body && typeof body._csrf === 'string')
    return body._csrf;
  return undefined;
}
