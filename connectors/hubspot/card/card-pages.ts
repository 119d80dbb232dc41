import type { Response } from 'express';
import type { CardData } from './ui/card-data.js';

/**
 * The pages of the card's sign-in (card-sign-in.ts): small, self-contained HTML with fixed words; what comes
 * from the record (candidate names, places) is escaped. Nothing from the query string is shown.
 */

export interface CardActPage {
  status: number;
  title: string;
  paragraphs: readonly string[];
  /** Markup built here from escaped parts. */
  form?: string;
}

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function signInPage(href: string): CardActPage {
  return {
    status: 200,
    title: 'Sign in with HubSpot',
    paragraphs: [
      'Decisions and report requests are taken in your name: HubSpot tells the connector who you are first.',
    ],
    form: `<p><a href="${esc(href)}" target="_blank" rel="noopener">Sign in with HubSpot (opens a new window)</a></p>`,
  };
}

export function refusalPage(status: number, message: string): CardActPage {
  return { status, title: 'Not done', paragraphs: [message] };
}

export function doneTitle(action: string): string {
  if (action === 'request') return 'Report requested. You can close this window.';
  if (action === 'reject') return 'Marked as none of these. You can close this window.';
  return 'Report linked. You can close this window.';
}

/** What the signed-in user may do on the company: the review's candidates, or a report request. */
export function actionsPage(data: CardData, actPath: string): CardActPage {
  const candidates = data.review?.candidates ?? [];
  if (data.status === 'needs_review' && candidates.length > 0) {
    const options = candidates
      .map((c, i) => {
        const facts = [
          c.place ?? 'place unknown',
          c.industry ?? 'industry unknown',
          c.score === null ? 'no score' : `score ${c.score}`,
          ...(c.why ? [c.why] : []),
        ].join(' · ');
        return (
          `<li><label><input type="radio" name="slug" value="${esc(c.slug)}"${i === 0 && data.review?.tied !== true ? ' checked' : ''}> ` +
          `${esc(c.name)}</label> <small>${esc(facts)}</small></li>`
        );
      })
      .join('');
    return {
      status: 200,
      title: 'Which report is this company?',
      paragraphs: [],
      form:
        `<form method="post" action="${esc(actPath)}"><ul>${options}</ul>` +
        '<button type="submit" name="action" value="accept">This one</button> ' +
        '<button type="submit" name="action" value="reject">None of these</button></form>',
    };
  }
  if (data.status === 'no_match' && data.request?.state !== 'pending') {
    return {
      status: 200,
      title: 'No published report matches this company',
      paragraphs: ['You can ask the report service for one.'],
      form:
        `<form method="post" action="${esc(actPath)}">` +
        '<button type="submit" name="action" value="request">Request a report</button></form>',
    };
  }
  return {
    status: 200,
    title: 'Nothing to decide on this company now',
    paragraphs: ['The card shows its report as HubSpot holds it.'],
  };
}

/**
 * Sends a page. Every page may post only to this app and loads nothing; the one the card opens in HubSpot's
 * iframe modal may be framed by HubSpot's own pages, the others by no one.
 */
export function sendCardPage(res: Response, page: CardActPage, o: { framedByHubSpot?: boolean } = {}): void {
  const ancestors = o.framedByHubSpot ? 'https://app.hubspot.com https://*.hubspot.com' : "'none'";
  res.removeHeader('X-Frame-Options');
  if (!o.framedByHubSpot) res.set('X-Frame-Options', 'DENY');
  res
    .status(page.status)
    .type('html')
    .set('cache-control', 'no-store')
    .set(
      'content-security-policy',
      `default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors ${ancestors}`,
    )
    .send(
      `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${esc(page.title)}</title></head>\n` +
        `<body><h1>${esc(page.title)}</h1>\n${page.paragraphs.map((p) => `<p>${esc(p)}</p>`).join('\n')}\n` +
        `${page.form ?? ''}\n</body></html>\n`,
    );
}
