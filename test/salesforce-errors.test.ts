import { describe, expect, it } from 'vitest';
import { bulkCsv, parseBulkError } from '../connectors/salesforce/api/bulk.js';
import { SalesforceUsageTracker } from '../connectors/salesforce/api/usage.js';
import { decodeChangeCursor, encodeChangeCursor } from '../connectors/salesforce/changes/cursors.js';
import { describeFailure, toCrmError, toRecordError } from '../connectors/salesforce/errors.js';
import { parseCsv } from '../connectors/salesforce/local/csv.js';
import {
  normalizeDateTime,
  toSalesforceFields,
  websiteToDomain,
} from '../connectors/salesforce/records/records.js';
import {
  CrmBadRequestError,
  CrmFieldsMissingError,
  CrmForbiddenError,
  CrmQuotaPausedError,
  CrmTransientError,
} from '../src/crm/errors.js';

/** The pure mappings: Salesforce's codes and values to the connector's, without HTTP. */

describe('per-record errors', () => {
  const code = (statusCode: string) => toRecordError([{ statusCode, message: 'm', fields: [] }]).code;

  it('maps each Salesforce status code to the code the pipeline acts on', () => {
    expect(code('ENTITY_IS_DELETED')).toBe('NOT_FOUND');
    expect(code('INVALID_CROSS_REFERENCE_KEY')).toBe('NOT_FOUND');
    expect(code('UNABLE_TO_LOCK_ROW')).toBe('RETRYABLE');
    expect(code('INVALID_FIELD_FOR_INSERT_UPDATE')).toBe('FIELD_NOT_WRITABLE');
    expect(code('STRING_TOO_LONG')).toBe('INVALID_VALUE');
    expect(code('FIELD_CUSTOM_VALIDATION_EXCEPTION')).toBe('INVALID_VALUE');
    expect(code('CANNOT_EXECUTE_FLOW_TRIGGER')).toBe('UNKNOWN');
  });

  it('names the fields and the permission set when field-level security refuses', () => {
    const error = toRecordError([
      {
        statusCode: 'INVALID_FIELD_FOR_INSERT_UPDATE',
        message: 'Unable to create/update fields',
        fields: ['Report_Score__c', 'Report_Band__c'],
      },
    ]);
    expect(error.message).toBe(
      'The Salesforce integration user lacks edit access to Report_Score__c, Report_Band__c. Assign the permission set ' +
        '"Report Connector" (Report_Connector) to that user in Setup > Users > Permission Sets, or grant edit access ' +
        'to these fields in its profile.',
    );
    expect(error.providerCode).toBe('INVALID_FIELD_FOR_INSERT_UPDATE');
  });
});

describe('whole-call errors', () => {
  it('reads the code from jsforce errors, SOAP faults and bare HTTP statuses', () => {
    const httpApiError = Object.assign(new Error('Session expired or invalid'), {
      errorCode: 'INVALID_SESSION_ID',
    });
    expect(describeFailure(httpApiError)).toMatchObject({ code: 'INVALID_SESSION_ID' });
    const soapFault = Object.assign(new Error('INVALID_SESSION_ID: Illegal Session'), {
      errorCode: 'sf:INVALID_SESSION_ID',
    });
    expect(describeFailure(soapFault)).toMatchObject({ code: 'INVALID_SESSION_ID' });
    const bare = Object.assign(new Error('Service Unavailable'), { errorCode: 'ERROR_HTTP_503' });
    expect(describeFailure(bare)).toMatchObject({ code: 'ERROR_HTTP_503', status: 503 });
    const multiple = Object.assign(new Error('Multiple errors'), {
      errorCode: 'MULTIPLE_API_ERRORS',
      data: [
        { errorCode: 'REQUEST_LIMIT_EXCEEDED', message: 'TotalRequests Limit exceeded.' },
        { errorCode: 'X', message: 'y' },
      ],
    });
    expect(describeFailure(multiple)).toMatchObject({
      code: 'REQUEST_LIMIT_EXCEEDED',
      message: 'TotalRequests Limit exceeded.',
    });
    const network = new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }),
    });
    expect(describeFailure(network)).toMatchObject({ code: 'NETWORK' });
    expect(describeFailure(new RangeError('a bug'))).toBeNull();
  });

  it('types them for the pipeline', () => {
    expect(toCrmError({ code: 'NETWORK', message: 'x' }, null)).toBeInstanceOf(CrmTransientError);
    expect(toCrmError({ code: 'ERROR_HTTP_502', message: 'x', status: 502 }, null)).toBeInstanceOf(
      CrmTransientError,
    );
    expect(
      toCrmError({ code: 'INVALID_FIELD', message: "No such column 'Report_Score__c'" }, null),
    ).toBeInstanceOf(CrmFieldsMissingError);
    expect(toCrmError({ code: 'API_DISABLED_FOR_ORG', message: 'x' }, null)).toBeInstanceOf(
      CrmForbiddenError,
    );
    expect(toCrmError({ code: 'MALFORMED_QUERY', message: 'x' }, null)).toBeInstanceOf(CrmBadRequestError);
  });
});

describe('values', () => {
  it('normalises Salesforce date-times to ISO UTC', () => {
    expect(normalizeDateTime('2024-05-01T12:00:00.000+0000')).toBe('2024-05-01T12:00:00.000Z');
    expect(normalizeDateTime('2024-05-01T14:00:00.000+0200')).toBe('2024-05-01T12:00:00.000Z');
    expect(normalizeDateTime('not a date')).toBeNull();
  });

  it('turns a Website into a bare domain', () => {
    expect(websiteToDomain('https://www.Example.COM/about?x=1')).toBe('example.com');
    expect(websiteToDomain('example.org')).toBe('example.org');
    expect(websiteToDomain('  ')).toBeNull();
    expect(websiteToDomain('localhost')).toBeNull();
    expect(websiteToDomain(null)).toBeNull();
  });

  it('writes numbers as received, date-times as ISO, null as null', () => {
    expect(
      toSalesforceFields({ score: 81.123456789, scoredAt: '2024-05-01T14:00:00+02:00', verdict: null }),
    ).toEqual({
      Report_Score__c: 81.123456789,
      Report_Scored_At__c: '2024-05-01T12:00:00.000Z',
      Report_Verdict__c: null,
    });
    expect(() => toSalesforceFields({ score: 'high' })).toThrow(/not a number/);
  });
});

describe('Bulk API 2.0 CSV', () => {
  it('marks clears with #N/A, leaves absent fields empty and quotes what needs it', () => {
    const csv = bulkCsv([
      { id: '001000000000001AAA', fields: { Report_Score__c: 1.5, Report_Band__c: null } },
      { id: '001000000000002AAA', fields: { Report_Band__c: 'a "b", c' } },
    ]);
    expect(parseCsv(csv)).toEqual([
      ['Id', 'Report_Score__c', 'Report_Band__c'],
      ['001000000000001AAA', '1.5', '#N/A'],
      ['001000000000002AAA', '', 'a "b", c'],
    ]);
  });

  it('reads sf__Error', () => {
    expect(parseBulkError('ENTITY_IS_DELETED:entity is deleted:--')).toEqual({
      statusCode: 'ENTITY_IS_DELETED',
      message: 'entity is deleted',
      fields: [],
    });
    expect(
      parseBulkError('INVALID_FIELD_FOR_INSERT_UPDATE:Unable to create/update fields: A__c:A__c;B__c'),
    ).toEqual({
      statusCode: 'INVALID_FIELD_FOR_INSERT_UPDATE',
      message: 'Unable to create/update fields: A__c',
      fields: ['A__c', 'B__c'],
    });
  });
});

describe('change cursor', () => {
  it('round-trips and accepts a bare timestamp', () => {
    const cursor = encodeChangeCursor({ s: '2026-01-01T00:00:00.000Z', i: '001000000000001AAA' });
    expect(decodeChangeCursor(cursor)).toEqual({ s: '2026-01-01T00:00:00.000Z', i: '001000000000001AAA' });
    expect(decodeChangeCursor('2026-01-01T00:00:00Z')).toEqual({ s: '2026-01-01T00:00:00Z', i: '' });
    expect(() => decodeChangeCursor('garbage')).toThrow(CrmBadRequestError);
  });
});

describe('usage tracker', () => {
  it('pauses at the share, lets one probe through per recheck interval, and resumes below it', () => {
    let now = 0;
    const tracker = new SalesforceUsageTracker({ pauseShare: 0.5, recheckMs: 1000, now: () => now });
    tracker.admitBackground();
    tracker.observe('api-usage=50/100');
    expect(() => tracker.admitBackground()).toThrow(CrmQuotaPausedError);
    now = 999;
    expect(() => tracker.admitBackground()).toThrow(CrmQuotaPausedError);
    now = 1000;
    tracker.admitBackground(); // the probe
    expect(() => tracker.admitBackground()).toThrow(CrmQuotaPausedError); // only one
    tracker.observe('api-usage=49/100');
    tracker.admitBackground();
    // The org-wide reading, not the per-app one that can follow it in the same header.
    tracker.observe('per-app-api-usage=1/10(appName=x)');
    expect(tracker.snapshot()).toMatchObject({ used: 49, limit: 100 });
    tracker.observe('api-usage=60/100; per-app-api-usage=1/10(appName=x)');
    expect(tracker.snapshot()).toMatchObject({ used: 60, limit: 100 });
  });
});
