import { createHash } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { LoginThrottle } from '../auth/login-throttle.js';
import type { SessionRevocations } from '../auth/session-revocations.js';
import type { DecisionActor } from '../decisions/decision-log.js';
import { cookieValue } from '../util/cookies.js';
import { type AdminAuth, type AdminSession, SESSION_COOKIE } from './admin-auth.js';

/**
 * Who is asking, and whether they may: a request is the admin's when it carries `Authorization: Bearer
 * <ADMIN_TOKEN>` or a valid session cookie. A request that sends an Authorization header is judged by that
 * header alone. Every wrong token, however presented, counts against the client's address (LoginThrottle).
 * Changes made with the cookie must also carry the session's CSRF token; bearer requests cannot be forged by
 * another site, so they need none.
 */

export interface AdminIdentity {
  via: 'bearer' | 'session';
  session: AdminSession | null;
  /** The token forms must echo back; null for bearer requests. */
  csrfToken: string | null;
  /** The admin's name (a named token from ADMIN_TOKENS), or null for ADMIN_TOKEN. */
  name: string | null;
}

export const TOO_MANY_ATTEMPTS_MESSAGE =
  'Too many wrong tokens from this address or its network: wait 15 minutes and try again.';

/** The address failures are counted against: the peer, or what a proxy trusted by TRUST_PROXY says. */
export function clientOf(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function adminOf(res: Response): AdminIdentity | null {
  return (res.locals.admin as AdminIdentity | undefined) ?? null;
}

/**
 * Who made a change, for the decision log: the admin's name when they used a named token (ADMIN_TOKENS), and
 * which session (a short hash of its id: the log never holds anything that helps forge a cookie) or that a
 * script used a bearer token. ADMIN_TOKEN is shared, so without a name the session is all a log can say.
 */
export function deciderOf(res: Response): DecisionActor {
  const admin = adminOf(res);
  const name = admin?.name ? { name: admin.name } : {};
  if (admin?.via === 'session' && admin.session) {
    const hash = createHash('sha256').update(admin.session.id).digest('hex').slice(0, 12);
    return { kind: 'admin-session', id: hash, ...name };
  }
  return { kind: 'admin-token', id: null, ...name };
}

export class AdminGuard {
  constructor(
    private readonly auth: AdminAuth,
    private readonly revocations: SessionRevocations,
    private readonly throttle: LoginThrottle,
  ) {}

  /**
   * Sets `res.locals.admin`. Refuses only a bearer token from an address that guessed too often (429, even
   * when the token is right); a wrong bearer token and a forged session cookie count as failed guesses.
   */
  readonly identify: RequestHandler = async (req, res, next) => {
    try {
      const identity = await this.identityOf(req, res);
      if (identity !== null && 'retryAfterSeconds' in identity) {
        res
          .status(429)
          .set('Retry-After', String(identity.retryAfterSeconds))
          .json({ error: TOO_MANY_ATTEMPTS_MESSAGE, code: 'TOO_MANY_ATTEMPTS' });
        return;
      }
      res.locals.admin = identity;
      next();
    } catch (err) {
      next(err);
    }
  };

  private async identityOf(
    req: Request,
    res: Response,
  ): Promise<AdminIdentity | { retryAfterSeconds: number } | null> {
    const client = clientOf(req);
    const authorization = req.get('authorization');
    if (authorization !== undefined) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
      const admin = match !== null ? this.auth.adminFor(match[1]!) : null;
      const right = admin !== null;
      // The throttle's count decides before the comparison's outcome is used, atomically with counting it.
      const verdict = await this.throttle.judge(client, right);
      if (verdict.kind === 'throttled') return { retryAfterSeconds: verdict.retryAfterSeconds };
      return verdict.kind === 'let-in'
        ? { via: 'bearer', session: null, csrfToken: null, name: admin?.name ?? null }
        : null;
    }
    const session = this.auth.inspectSession(cookieValue(req.get('cookie'), SESSION_COOKIE));
    if (session === 'forged') {
      await this.throttle.recordFailure(client);
      // A browser holding a cookie signed before ADMIN_TOKEN changed stops sending it, so only a script
      // that keeps forging cookies keeps counting.
      for (const cookie of this.auth.clearedCookies()) res.append('Set-Cookie', cookie);
    }
    if (typeof session === 'string' || (await this.revocations.isRevoked(session.id))) return null;
    return {
      via: 'session',
      session,
      csrfToken: this.auth.csrfTokenFor(session),
      name: session.name ?? null,
    };
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
  requirePage(showLogin: (req: Request, res: Response, next: NextFunction) => void): RequestHandler {
    return (req, res, next) => {
      if (adminOf(res)) return next();
      showLogin(req, res, next);
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
