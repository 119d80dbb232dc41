import type { ReportClient } from '../reports/client.js';
import { ReportForbiddenError, ReportServiceError, ReportUnauthorizedError } from '../reports/errors.js';

/**
 * What the report service says about the server-wide key (REPORTS_API_KEY), asked at most once per period
 * per process: the admin page shows the same sandbox badge and refusal for it as for a key entered here.
 */

export type EnvKeyState =
  | { state: 'ok'; sandbox: boolean; checkedAt: string }
  | { state: 'refused'; status: 401 | 403; message: string; checkedAt: string }
  | { state: 'unknown'; message: string };

const RECHECK_AFTER_MS = 10 * 60 * 1000;
/** The page never waits longer than this for the check; it says "not checked yet" instead. */
const WAIT_MS = 3_000;

export class EnvKeyCheck {
  private last: { at: number; result: Promise<EnvKeyState> } | null = null;

  constructor(private readonly client: () => ReportClient) {}

  async state(): Promise<EnvKeyState> {
    if (!this.last || Date.now() - this.last.at > RECHECK_AFTER_MS) {
      this.last = { at: Date.now(), result: this.check() };
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<EnvKeyState>((resolve) => {
      timer = setTimeout(() => resolve({ state: 'unknown', message: 'not checked yet' }), WAIT_MS);
    });
    try {
      return await Promise.race([this.last.result, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async check(): Promise<EnvKeyState> {
    const checkedAt = new Date().toISOString();
    try {
      return { state: 'ok', sandbox: (await this.client().me()).sandbox, checkedAt };
    } catch (err) {
      if (err instanceof ReportUnauthorizedError) {
        return {
          state: 'refused',
          status: 401,
          message: 'The report service refused REPORTS_API_KEY (401): it is mistyped, expired or revoked.',
          checkedAt,
        };
      }
      if (err instanceof ReportForbiddenError) {
        return {
          state: 'refused',
          status: 403,
          message: 'REPORTS_API_KEY lacks the read scope the connector needs (403).',
          checkedAt,
        };
      }
      // No answer is not a verdict on the key: ask again on the next page view.
      this.last = null;
      if (!(err instanceof ReportServiceError)) throw err;
      return { state: 'unknown', message: `the report service did not answer: ${(err as Error).message}` };
    }
  }
}
