import nock from 'nock';
import { afterEach, beforeAll, expect } from 'vitest';

/**
 * For HTTP client tests over nock: no real network, and after each test every mocked call must have been
 * made (a mock left unused means the client skipped a call). Registers the hooks where it is called: at the
 * top of a file or inside a `describe`.
 */
export function requireEveryMock(what = 'mocked'): void {
  beforeAll(() => {
    nock.disableNetConnect();
  });
  afterEach(() => {
    const pending = nock.pendingMocks();
    nock.cleanAll();
    expect(pending, `every ${what} call was made`).toEqual([]);
  });
}
