import nock from 'nock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReportClient } from '../src/reports/client.js';
import {
  ReportInvalidRequestError,
  ReportNetworkError,
  ReportResponseError,
  ReportUnauthorizedError,
  ReportWriteScopeError,
} from '../src/reports/errors.js';
import { receiptId } from '../src/reports/submissions.js';
import { createSandbox, type ListeningSandbox, type ReportSandbox } from '../src/sandbox/index.js';
import { requireEveryMock } from './support/strict-nock.js';

/**
 * The write calls: the submission's JSON body and the document's multipart body, how the answer's id is found,
 * and what a key without `write` gets. Unit tests over nock, then the same calls against the sandbox.
 */

const BASE = 'https://reports.test/api';
const COMPANY = {
  name: 'Harbourline Logistics',
  domain: 'harbourline.example',
  country: 'Denmark',
  city: 'Aarhus',
  industry: 'Logistics',
  reference: '9001',
};

function client(apiKey = 'sk_test_key') {
  return new ReportClient({ baseUrl: BASE, apiKey, sleep: async () => {}, random: () => 0.5 });
}

describe('createSubmission over nock', () => {
  requireEveryMock();
  afterAll(() => nock.enableNetConnect());

  it('sends a plain JSON body with what the CRM knows, and keeps the whole answer', async () => {
    const answer = { id: 'sub_1', status: 'received', extra: { queue: 3 } };
    nock(BASE, {
      reqheaders: { authorization: 'Bearer sk_test_key', 'content-type': 'application/json' },
    })
      .post('/v1/submissions', (body) => JSON.stringify(body) === JSON.stringify(COMPANY))
      .reply(201, answer);
    const receipt = await client().createSubmission(COMPANY);
    expect(receipt).toEqual({ id: 'sub_1', answer });
  });

  it('leaves out the fields the CRM has no value for', async () => {
    let sent: unknown;
    nock(BASE)
      .post('/v1/submissions', (body) => {
        sent = body;
        return true;
      })
      .reply(201, { id: 'sub_2' });
    await client().createSubmission({ name: 'Only Name Co', reference: '77' });
    expect(sent).toEqual({ name: 'Only Name Co', reference: '77' });
  });

  it.each([
    [{ data: { id: 'sub_data' } }, 'sub_data'],
    [{ submission: { id: 'sub_nested', state: 'queued' } }, 'sub_nested'],
    [{ id: 4711 }, '4711'],
  ])('finds the id in %j', async (answer, id) => {
    nock(BASE).post('/v1/submissions').reply(200, answer);
    expect(await client().createSubmission(COMPANY)).toEqual({ id, answer });
  });

  it('refuses a 2xx that carries no id, keeping the body on the error', async () => {
    nock(BASE).post('/v1/submissions').reply(201, { status: 'received' });
    const error = await client()
      .createSubmission(COMPANY)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReportResponseError);
    expect((error as ReportResponseError).body).toEqual({ status: 'received' });
  });

  it('turns a 403 into the write-scope error that says what to do, without retrying', async () => {
    nock(BASE)
      .post('/v1/submissions')
      .once()
      .reply(403, { error: { code: 'forbidden', message: 'this endpoint needs the write scope' } });
    const error = await client()
      .createSubmission(COMPANY)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReportWriteScopeError);
    const scope = error as ReportWriteScopeError;
    expect(scope.code).toBe('REPORTS_WRITE_SCOPE_MISSING');
    expect(scope.retryable).toBe(false);
    expect(scope.message).toContain('`write` scope');
    expect(scope.message).toContain('account settings');
    expect(scope.message).toMatch(/create a key with the `write` scope/);
  });

  it('keeps 401 the unauthorized error', async () => {
    nock(BASE).post('/v1/submissions').reply(401, { error: 'revoked' });
    await expect(client().createSubmission(COMPANY)).rejects.toBeInstanceOf(ReportUnauthorizedError);
  });

  it('retries a 5xx, which the interface calls safe, and does not repeat a write whose connection dropped', async () => {
    nock(BASE).post('/v1/submissions').reply(503).post('/v1/submissions').reply(201, { id: 'sub_after_503' });
    expect((await client().createSubmission(COMPANY)).id).toBe('sub_after_503');

    nock(BASE).post('/v1/submissions').once().replyWithError('socket hang up');
    const calls: unknown[] = [];
    const counted = new ReportClient({
      baseUrl: BASE,
      apiKey: 'sk_test_key',
      sleep: async () => {},
      onCall: (observation) => calls.push(observation),
    });
    await expect(counted.createSubmission(COMPANY)).rejects.toBeInstanceOf(ReportNetworkError);
    expect(calls).toHaveLength(1);
  });

  it('sends nothing for a submission without a name or reference', async () => {
    await expect(client().createSubmission({ ...COMPANY, name: '  ' })).rejects.toBeInstanceOf(
      ReportInvalidRequestError,
    );
    await expect(client().createSubmission({ ...COMPANY, reference: '' })).rejects.toBeInstanceOf(
      ReportInvalidRequestError,
    );
  });
});

describe('uploadDocument over nock', () => {
  requireEveryMock();
  afterAll(() => nock.enableNetConnect());

  const deck = {
    filename: 'deck.txt',
    contentType: 'text/plain',
    bytes: new TextEncoder().encode('our plan'),
  };

  it('uploads one multipart file part with its name and type', async () => {
    let sent = '';
    nock(BASE, { reqheaders: { 'content-type': /^multipart\/form-data; boundary=\S+$/ } })
      .post('/v1/submissions/sub%2F1/documents', (body) => {
        sent = String(body);
        return true;
      })
      .reply(201, { id: 'doc_1' });
    const receipt = await client().uploadDocument('sub/1', deck);
    expect(receipt).toEqual({ id: 'doc_1', answer: { id: 'doc_1' } });
    const boundary = /^--(\S+)\r\n/.exec(sent)?.[1];
    expect(boundary).toBeTruthy();
    expect(sent.trimEnd().endsWith(`--${boundary}--`)).toBe(true);
    expect(sent).toMatch(/Content-Disposition: form-data; name="file"; filename="deck.txt"/);
    expect(sent).toContain('Content-Type: text/plain');
    expect(sent).toContain('our plan');
  });

  it('accepts a success without a body, and turns 403 into the write-scope error', async () => {
    nock(BASE).post('/v1/submissions/sub_1/documents').reply(204);
    expect(await client().uploadDocument('sub_1', deck)).toEqual({ id: undefined, answer: undefined });
    nock(BASE).post('/v1/submissions/sub_1/documents').reply(403, 'forbidden');
    await expect(client().uploadDocument('sub_1', deck)).rejects.toBeInstanceOf(ReportWriteScopeError);
  });

  it('sends nothing for an empty file', async () => {
    await expect(
      client().uploadDocument('sub_1', { ...deck, bytes: new Uint8Array() }),
    ).rejects.toBeInstanceOf(ReportInvalidRequestError);
  });
});

describe('receiptId', () => {
  it('finds nothing in answers without an id', () => {
    for (const answer of [
      undefined,
      null,
      'sub_1',
      [],
      {},
      { id: '' },
      { data: [] },
      { data: { ident: 1 } },
    ]) {
      expect(receiptId(answer), JSON.stringify(answer)).toBeUndefined();
    }
  });
});

describe('the write calls against the sandbox', () => {
  let sandbox: ReportSandbox;
  let api: ListeningSandbox;
  beforeAll(async () => {
    sandbox = createSandbox();
    api = await sandbox.listen(0);
  });
  afterAll(() => api.close());

  const at = (key: string) => new ReportClient({ baseUrl: api.url, apiKey: key, sleep: async () => {} });

  it('creates a submission and attaches a file with the write key; the sandbox holds both', async () => {
    const receipt = await at('sk_sandbox_write').createSubmission(COMPANY);
    const bytes = new TextEncoder().encode('a short document');
    await at('sk_sandbox_write').uploadDocument(receipt.id, {
      filename: 'notes.txt',
      contentType: 'text/plain',
      bytes,
    });
    const stored = sandbox.getSubmission(receipt.id);
    expect(stored?.content).toEqual(COMPANY);
    expect(stored?.documents[0]?.content).toMatchObject({ filename: 'notes.txt', size: bytes.byteLength });
  });

  it.each(['sk_sandbox_read', 'sk_sandbox_legacy'])(
    'refuses %s with the write-scope error and creates nothing',
    async (key) => {
      const before = sandbox.listSubmissions().length;
      await expect(at(key).createSubmission(COMPANY)).rejects.toBeInstanceOf(ReportWriteScopeError);
      expect(sandbox.listSubmissions().length).toBe(before);
    },
  );
});
