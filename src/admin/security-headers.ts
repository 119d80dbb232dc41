import type { RequestHandler } from 'express';
import helmet from 'helmet';

/**
 * Response headers of everything under /admin. The page itself runs no inline script and no inline style: its
 * script and stylesheet are files under /admin/assets, so the policy can stay at 'self'. bull-board's UI sets
 * inline style attributes and a <base href>, so its pages get a policy relaxed for exactly those.
 */

const COMMON_DIRECTIVES = {
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  imgSrc: ["'self'", 'data:'],
  fontSrc: ["'self'"],
  connectSrc: ["'self'"],
  manifestSrc: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  objectSrc: ["'none'"],
};

function headers(secure: boolean, directives: Record<string, string[]>): RequestHandler {
  return helmet({
    contentSecurityPolicy: { useDefaults: false, directives },
    referrerPolicy: { policy: 'no-referrer' },
    frameguard: { action: 'deny' },
    crossOriginOpenerPolicy: { policy: 'same-origin' },
    crossOriginResourcePolicy: { policy: 'same-origin' },
    // HSTS over plain http is ignored by browsers and would only confuse a local install.
    strictTransportSecurity: secure ? { maxAge: 180 * 24 * 3600, includeSubDomains: false } : false,
  });
}

export function adminPageHeaders(secure: boolean): RequestHandler {
  return headers(secure, { ...COMMON_DIRECTIVES, styleSrc: ["'self'"], baseUri: ["'none'"] });
}

export function bullBoardHeaders(secure: boolean): RequestHandler {
  return headers(secure, {
    ...COMMON_DIRECTIVES,
    styleSrc: ["'self'", "'unsafe-inline'"],
    baseUri: ["'self'"],
  });
}

/** Admin answers hold tokens and customer data: never stored by a browser or a proxy. */
export const noStore: RequestHandler = (_req, res, next) => {
  res.set('Cache-Control', 'no-store');
  res.set('Pragma', 'no-cache');
  next();
};
